"""Structured, bounded progress, with a sequence a reader can compare."""

from __future__ import annotations

import threading

import anyio
import pytest
import structlog
from pydantic import BaseModel
from structlog.testing import capture_logs

from agentos import CallEvent
from agentos import CallEventKind
from agentos import CallStatus
from agentos import ManualClock
from agentos import ProgressKind
from agentos import Runtime
from agentos import Tool
from agentos import ToolContext
from agentos import tool
from agentos.testing import Puppet
from agentos.testing import settle
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


async def test_version_tells_whether_anything_moved(puppet: Puppet, runtime: Runtime) -> None:
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
    assert completed["tool_name"] == "chatty"
    assert completed["duration_s"] == 0
    failure = [entry for entry in logs if entry.get("call_id") == failed][-1]
    assert failure["event"] == "tool_call.failed"
    assert "steps: Field required" in failure["error"]


class Burst(BaseModel):
    reports: int


def bursting(gate: anyio.Event) -> Tool[Burst]:
    """A tool that reports ``reports`` times without yielding (so within one tick), then
    waits for ``gate``."""

    @tool
    async def burst(args: Burst, ctx: ToolContext) -> int:
        for number in range(args.reports):
            ctx.progress(number)
        await gate.wait()
        return args.reports

    return burst


async def test_every_report_of_a_tick_reaches_listeners_and_the_log(clock: ManualClock) -> None:
    """Seed 000, issue 24: 60 reports in one tick are 60 ``progressed`` events for a
    subscriber and a callback, and 60 log lines; the kept log holds the newest 50 and
    counts the rest."""
    structlog.reset_defaults()
    gate = anyio.Event()
    heard: list[CallEvent] = []
    with capture_logs() as logs:
        async with Runtime([bursting(gate)], clock=clock) as runtime:
            runtime.on_call_events("s", heard.append)
            async with runtime.subscribe("s") as stream:
                call = runtime.submit("burst", {"reports": 60}, session_id="s")
                await settle(runtime)
                streamed = []
                while True:
                    try:
                        streamed.append(stream.receive_nowait())
                    except anyio.WouldBlock:
                        break
                running = runtime.status(call)
                gate.set()
                await runtime.wait(call)
    for events in (heard, streamed):
        progressed = [event for event in events if event.kind is CallEventKind.PROGRESSED]
        assert [event.progress.payload for event in progressed if event.progress] == list(range(60))
        assert [event.folded for event in progressed] == [0] * 60
    lines = [entry for entry in logs if entry["event"] == "tool_call.progressed"]
    assert [entry["seq"] for entry in lines] == list(range(2, 62))
    assert len(running.progress) == PROGRESS_KEPT
    assert running.progress_dropped == 61 - PROGRESS_KEPT
    assert [entry.payload for entry in running.progress] == list(range(60 - PROGRESS_KEPT, 60))


async def test_a_flood_in_one_tick_is_folded_into_one_event(clock: ManualClock) -> None:
    """Past 1,000 reports of one call in one tick, the older ones fold into the first event
    told, which carries how many it stands for; the kept log is bounded all the same."""
    gate = anyio.Event()
    heard: list[CallEvent] = []
    async with Runtime([bursting(gate)], clock=clock) as runtime:
        runtime.on_call_events("s", heard.append)
        call = runtime.submit("burst", {"reports": 2_500}, session_id="s")
        await settle(runtime)
        running = runtime.status(call)
        gate.set()
        await runtime.wait(call)
    progressed = [event for event in heard if event.kind is CallEventKind.PROGRESSED]
    assert len(progressed) == 1_000
    assert [event.folded for event in progressed] == [1_500] + [0] * 999
    told = [event.progress.payload for event in progressed if event.progress]
    assert told == list(range(1_500, 2_500))
    assert sum(1 + event.folded for event in progressed) == 2_500
    assert running.progress_seq == 1 + 2_500
    assert len(running.progress) == PROGRESS_KEPT
    assert running.progress_dropped == 1 + 2_500 - PROGRESS_KEPT
