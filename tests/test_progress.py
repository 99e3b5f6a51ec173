"""Structured, bounded progress, with a sequence a reader can compare."""

from __future__ import annotations

import threading

import anyio
import pytest
import structlog
from pydantic import BaseModel
from structlog.testing import capture_logs

from agentos import CallStatus, ManualClock, ProgressKind, Runtime, ToolContext, tool
from agentos.testing import Puppet, settle
from components import PROGRESS_KEPT

pytestmark = pytest.mark.anyio


class Steps(BaseModel):
    steps: int


@tool
async def chatty(args: Steps, ctx: ToolContext) -> int:
    for step in range(args.steps):
        ctx.progress({"step": step})
    ctx.log("almost there")
    ctx.heartbeat()
    return args.steps


async def test_progress_keeps_the_newest_and_counts_the_rest(clock: ManualClock) -> None:
    async with Runtime([chatty], clock=clock) as runtime:
        snapshot = await runtime.wait(runtime.submit("chatty", {"steps": 60}))
    total = 1 + 60 + 2  # the runtime's ``started``, the steps, a log line and a heartbeat
    assert snapshot.progress_seq == total
    assert snapshot.progress_dropped == total - PROGRESS_KEPT
    assert len(snapshot.progress) == PROGRESS_KEPT
    assert [entry.seq for entry in snapshot.progress] == list(range(14, total + 1))
    assert snapshot.progress[-3].payload == {"step": 59}
    assert snapshot.progress[-2].kind is ProgressKind.LOG
    assert snapshot.progress[-2].payload == "almost there"
    assert snapshot.progress[-1].kind is ProgressKind.HEARTBEAT


async def test_version_tells_whether_anything_moved(clock: ManualClock) -> None:
    puppet = Puppet()
    async with Runtime([puppet.tool], clock=clock) as runtime:
        call = runtime.submit("puppet", {})
        await settle(runtime)
        first = runtime.status(call)
        assert runtime.status(call).version == first.version
        puppet.progress(call, {"percent": 10})
        await settle(runtime)
        second = runtime.status(call)
        assert second.version == first.version + 1
        assert second.progress_seq == 2  # ``started``, then the report
        puppet.complete(call)
        await settle(runtime)
        assert runtime.status(call).version == second.version + 1


async def test_reports_after_the_end_change_nothing(clock: ManualClock) -> None:
    entered = threading.Event()
    gate = threading.Event()
    finished = threading.Event()

    @tool
    def late(args: Steps, ctx: ToolContext) -> str:
        entered.set()
        gate.wait(5)
        ctx.progress({"too": "late"})
        finished.set()
        return "too late"

    async with Runtime([late], clock=clock) as runtime:
        call = runtime.submit("late", {"steps": 1})
        assert await anyio.to_thread.run_sync(entered.wait, 5)
        runtime.cancel(call)
        before = runtime.status(call)
        gate.set()
        assert await anyio.to_thread.run_sync(finished.wait, 5)
        await settle(runtime)
        assert runtime.status(call) == before
        assert before.status is CallStatus.CANCELLED


async def test_lifecycle_is_logged_with_ids_and_durations(clock: ManualClock) -> None:
    structlog.reset_defaults()
    with capture_logs() as logs:
        async with Runtime([chatty], clock=clock) as runtime:
            call = runtime.submit(
                "chatty",
                {"steps": 1},
                session_id="s",
                conversation_id="c",
                provider_call_id="toolu_1",
            )
            await runtime.wait(call)
            failed = runtime.submit("chatty", {})
            await runtime.wait(failed)
    mine = [entry for entry in logs if entry.get("call_id") == call]
    assert [entry["event"] for entry in mine if entry["log_level"] == "info"] == [
        "tool_call.queued",
        "tool_call.started",
        "tool_call.completed",
    ]
    # One step, a log line, a heartbeat; ``started`` is told by ``tool_call.started``.
    assert sum(entry["event"] == "tool_call.progressed" for entry in mine) == 3
    completed = mine[-1]
    assert completed["session_id"] == "s"
    assert completed["conversation_id"] == "c"
    assert completed["provider_call_id"] == "toolu_1"
    assert completed["tool"] == "chatty"
    assert completed["duration_s"] == 0
    failure = [entry for entry in logs if entry.get("call_id") == failed][-1]
    assert failure["event"] == "tool_call.failed"
    assert "steps: Field required" in failure["error"]
