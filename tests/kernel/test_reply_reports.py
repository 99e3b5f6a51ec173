"""The calls of one model reply (one ``turn_id``) report together: the last one's task
applies the others' with its own, in one tick; a report held while a sibling runs on is
applied at the next loop pass, a read sees it at once, and closing keeps its outcome."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from agentos import CallEvent
from agentos import CallEventKind
from agentos import CallStatus
from agentos import Runtime
from agentos import ToolContext
from agentos import tool
from agentos.testing import Puppet
from tests.support.arguments import Empty

pytestmark = pytest.mark.anyio


@tool
async def quick(args: Empty) -> int:
    """Returns at once."""
    return 1


def completions(runtime: Runtime, session_id: str, count: int) -> anyio.Event:
    """Set once ``count`` calls of the session have been heard to complete."""
    heard: list[CallEvent] = []
    done = anyio.Event()

    def listen(event: CallEvent) -> None:
        if event.kind is CallEventKind.COMPLETED:
            heard.append(event)
            if len(heard) == count:
                done.set()

    runtime.on_call_events(session_id, listen)
    return done


async def test_the_calls_of_one_reply_that_end_together_are_applied_in_one_tick() -> None:
    async with Runtime([quick]) as runtime:
        done = completions(runtime, "s", 10)
        with runtime.batch():  # started together, as a session's submits are
            for _ in range(10):
                runtime.submit("quick", {}, session_id="s", turn_id="reply-1")
        before = runtime.statistics().ticks
        with anyio.fail_after(5):
            await done.wait()
        assert runtime.statistics().ticks - before == 1  # ten, one per call, before


async def test_a_report_held_for_a_sibling_that_runs_on_is_applied_at_the_next_pass() -> None:
    puppet = Puppet()
    async with Runtime([puppet.tool, quick]) as runtime:
        done = completions(runtime, "s", 1)
        with runtime.batch():
            slow = runtime.submit("puppet", {}, session_id="s", turn_id="reply-1")
            fast = runtime.submit("quick", {}, session_id="s", turn_id="reply-1")
        with anyio.fail_after(5):
            await done.wait()  # not held until the slow one ends
        assert runtime.status(fast).status is CallStatus.COMPLETED
        assert runtime.status(slow).status is CallStatus.RUNNING


async def test_a_read_sees_a_held_report() -> None:
    puppet = Puppet()
    seen: list[CallStatus] = []

    @tool
    async def ends_and_looks(args: Empty, ctx: ToolContext) -> int:
        """Asks for its own status in the loop pass after it returns, before anything else."""
        asyncio.get_running_loop().call_soon(
            lambda: seen.append(runtime.status(ctx.call_id).status)
        )
        return 1

    async with Runtime([puppet.tool, ends_and_looks]) as runtime:
        done = completions(runtime, "s", 1)
        with runtime.batch():
            runtime.submit("puppet", {}, session_id="s", turn_id="reply-1")
            runtime.submit("ends_and_looks", {}, session_id="s", turn_id="reply-1")
        with anyio.fail_after(5):
            await done.wait()
    assert seen == [CallStatus.COMPLETED]


async def test_closing_keeps_the_outcome_of_a_call_whose_report_is_held() -> None:
    puppet = Puppet()
    ended: dict[str, CallEventKind] = {}
    returning = anyio.Event()

    @tool
    async def ends(args: Empty) -> int:
        """Wakes the test, which closes the runtime before the next loop pass applies this."""
        returning.set()
        return 1

    async with Runtime([puppet.tool, ends]) as runtime:
        runtime.on_call_events(
            "s", lambda event: event.snapshot is None or ended.update({event.call_id: event.kind})
        )
        with runtime.batch():
            slow = runtime.submit("puppet", {}, session_id="s", turn_id="reply-1")
            fast = runtime.submit("ends", {}, session_id="s", turn_id="reply-1")
        await returning.wait()
    assert ended == {fast: CallEventKind.COMPLETED, slow: CallEventKind.CANCELLED}
