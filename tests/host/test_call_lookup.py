"""Issue 48: a program reads and cancels the calls of a session another host runs, through
the public API (``Host.look_up_call``, ``Host.cancel_call``, and ``agentos.stores``'
``find_call``, ``session_calls`` and ``cancel_call`` for a program with a store only):
each call one ``CallView``, its status a ``CallStatus``, its history merged with the live
mirror, as ``agentos status``, ``calls`` and ``cancel``, the page and the terminal UI read it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

import anyio
import pytest

from agentos import AgentConfig
from agentos import CallStatus
from agentos import Host
from agentos import ManualClock
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import SqliteStore
from agentos import UsageError
from agentos import YieldOnTimeout
from agentos.stores import CallLookupError
from agentos.stores import CallView
from agentos.stores import CancelReport
from agentos.stores import cancel_call
from agentos.stores import find_call
from agentos.stores import session_calls
from agentos.testing import Puppet
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from tests.support.backends import running

pytestmark = pytest.mark.anyio

PERIOD = 0.5
T = TypeVar("T")


async def test_a_program_looks_up_a_call_another_host_runs_and_cancels_it(
    tmp_path: Path, clock: ManualClock
) -> None:
    puppet = Puppet()
    model = ScriptedProvider(
        (lambda r: "work" in last_user_text(r), lambda r: tool_calls(("puppet", {}))),
        (lambda r: True, lambda r: text("noted")),
    )
    config = AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=1))
    async with (
        await SqliteStore.open(tmp_path / "a.db", clock=clock.wall) as store,
        Runtime([puppet.tool], clock=clock) as runtime,
        Host(runtime, model, store=store, call_mirror_period=PERIOD) as host,
        await SqliteStore.open(tmp_path / "a.db", clock=clock.wall) as elsewhere,
    ):
        session = await host.create_session(config, session_id="s")
        session.post("work")
        with anyio.fail_after(10):
            while not (session.outstanding() and session.idle):
                clock.advance(0.001)
                await settle(runtime)
        (running,) = session.outstanding()
        puppet.progress(running.call_id, {"percent": 40})
        await _mirror(clock, runtime)

        view = await find_call(elsewhere, running.call_id[:8])
        assert isinstance(view, CallView)
        assert (view.call_id, view.session_id, view.tool_name) == (running.call_id, "s", "puppet")
        assert view.status is CallStatus.RUNNING and not view.final
        assert (view.percent, view.holder, view.live) == (40, host.holder, True)
        assert view.provider_call_id is not None and view.provider_call_id.startswith("toolu_")
        assert await host.look_up_call(view.provider_call_id) == view
        listed = await session_calls(elsewhere, "s")
        assert listed is not None and listed.calls == (view,)
        assert (listed.holder, listed.status.status) == (host.holder, "waiting")

        report = await _while_mirroring(clock, runtime, cancel_call(elsewhere, view, "stalled"))
        assert isinstance(report, CancelReport)
        assert (report.outcome, report.cancelled) == ("cancelled", True)
        assert (report.previous_status, report.status) == (CallStatus.RUNNING, CallStatus.CANCELLED)
        assert puppet.calls[running.call_id].cancelled, "the cancel reached the work"

        await _mirror(clock, runtime)
        ended = await host.look_up_call(running.call_id, session_id="s")
        assert ended.status is CallStatus.CANCELLED and ended.final
        assert ended.cancel_reason == "stalled"
        again = await _while_mirroring(
            clock, runtime, host.cancel_call(running.call_id, "twice", wait=10)
        )
        assert (again.outcome, again.cancelled, again.status) == (
            "already_final",
            False,
            "cancelled",
        )
        with pytest.raises(CallLookupError, match="no tool call") as unknown:
            await find_call(elsewhere, "toolu_nobody_made")
        assert unknown.value.reason == "unknown" and unknown.value.call is None


async def test_a_call_no_process_runs_is_not_cancelled_in_a_programs_words(
    tmp_path: Path, clock: ManualClock
) -> None:
    """The look-up's errors speak to a program (its ``reason`` to a front end, which adds
    its own commands: the command line's are tested with it)."""
    puppet = Puppet()
    model = ScriptedProvider((lambda r: True, lambda r: tool_calls(("puppet", {}))))
    config = AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=1))
    async with Runtime([puppet.tool], clock=clock) as runtime:
        async with (
            await SqliteStore.open(tmp_path / "a.db", clock=clock.wall) as store,
            Host(runtime, model, store=store) as host,
        ):
            session = await host.create_session(config, session_id="s")
            session.post("work")
            with anyio.fail_after(10):
                while not session.outstanding():
                    clock.advance(0.001)
                    await settle(runtime)
        async with await SqliteStore.open(tmp_path / "a.db", clock=clock.wall) as store:
            (call,) = (await session_calls(store, "s") or pytest.fail("no session")).calls
            assert call.holder is None
            with pytest.raises(CallLookupError, match="not running anywhere") as nowhere:
                await cancel_call(store, call, "stalled")
    assert (nowhere.value.reason, nowhere.value.call) == ("nowhere", call)
    assert "agentos" not in str(nowhere.value), "a program is not told to run a command"


async def test_looking_up_calls_needs_a_host_with_a_store(clock: ManualClock) -> None:
    async with running(ScriptedProvider(), clock=clock) as (_, host):
        with pytest.raises(UsageError, match="needs a Host with a store"):
            await host.look_up_call("call_1")


async def _mirror(clock: ManualClock, runtime: Runtime) -> None:
    """Let the mirror's period pass, and its write land."""
    for _ in range(3):
        clock.advance(PERIOD)
        await settle(runtime)
        await anyio.sleep(0.05)


async def _while_mirroring(clock: ManualClock, runtime: Runtime, asking: Awaitable[T]) -> T:
    """``asking``'s answer, the mirror's periods passing meanwhile (it answers cancels)."""
    answers: list[T] = []

    async def ask() -> None:
        answers.append(await asking)

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(ask)
            while not answers:
                await _mirror(clock, runtime)
    return answers[0]
