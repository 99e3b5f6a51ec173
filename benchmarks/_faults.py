"""Faults one call can cause: a flood of progress reports, and 100,000 cancels at once.

``--flood``: one tool calls ``ctx.progress()`` 1,000,000 times while a canary
in another session submits a no-op call and waits for it, again and again.
Twice, each in a fresh runtime: an async tool that yields to the event loop
every 10,000 reports (``async``), and a sync tool in a worker thread that
never yields (``thread``). The flood's session has an ``on_call_events``
listener, as a Host session would. Reported per variant: the runtime's longest
tick (``max_tick_us``), the canary's latency (submit to final, p99 and max),
the event loop's longest stall (a heartbeat task), and the reports actually
sent: a flooding tool stops at a deadline (``--deadline`` seconds), so a run
whose ticks are seconds long still ends. ``faults.progress_flood_max_tick_ms``
is the longer of the two variants' longest ticks.

``--burst``: 100,000 submits at once, applied over bounded ticks (see the README).

``--cancel``: 100,000 calls of an async tool that waits forever, over 1,000
sessions, all running; then ``runtime.cancel(id)`` on each, one after another.
``faults.cancel_100k_seconds`` is how long those 100,000 cancels take: when
the last returns every call is ``cancelled`` (final, its slot free).
``_unwind_seconds`` is how long the cancelled tasks then take to end, and
``_raw_anyio_unwind_seconds`` the same for 100,000 bare anyio tasks cancelled
through their ``TaskHandle`` in the same process: the floor anyio sets.
``_total_seconds`` is cancels plus unwinding; ``_gc_seconds`` how much of it
the garbage collector took.
"""

from __future__ import annotations

import argparse
import time

import anyio
import anyio.lowlevel

import agentos
from agentos import CallEvent
from agentos import CallStatus
from agentos import Runtime
from agentos import Tool
from agentos import ToolContext
from benchmarks._common import Countdown
from benchmarks._common import Empty
from benchmarks._common import Figures
from benchmarks._common import GcPauses
from benchmarks._common import Heartbeat
from benchmarks._common import emit
from benchmarks._common import percentile
from benchmarks._common import quiet_logs

REPORTS = 1_000_000
YIELD_EVERY = 10_000
"""The async flooding tool yields to the event loop once per this many reports."""
DEADLINE_SECONDS = 30.0
CALLS = 100_000
SESSIONS = 1_000
SUBMIT_BATCH = 1_000


def flood_tool(reports: int, threaded: bool, deadline_seconds: float) -> Tool[Empty]:
    """A tool that reports progress ``reports`` times (or until a deadline); returns how many."""
    if threaded:

        @agentos.tool(name="flood")
        def flood_sync(args: Empty, ctx: ToolContext) -> int:
            """Floods progress from a worker thread, never yielding."""
            deadline = time.perf_counter() + deadline_seconds
            for number in range(reports):
                ctx.progress(number)
                if number % YIELD_EVERY == 0 and time.perf_counter() > deadline:
                    return number + 1
            return reports

        return flood_sync

    @agentos.tool(name="flood")
    async def flood_async(args: Empty, ctx: ToolContext) -> int:
        """Floods progress, yielding to the event loop now and then."""
        deadline = time.perf_counter() + deadline_seconds
        for number in range(reports):
            ctx.progress(number)
            if number % YIELD_EVERY == YIELD_EVERY - 1:
                if time.perf_counter() > deadline:
                    return number + 1
                await anyio.lowlevel.checkpoint()
        return reports

    return flood_async


@agentos.tool
async def canary(args: Empty) -> None:
    """Returns at once: its latency is the runtime's and the loop's alone."""
    return None


async def measure_flood(variant: str, reports: int, deadline_seconds: float) -> Figures:
    events = [0]

    def listen(event: CallEvent) -> None:
        events[0] += 1

    latencies: list[float] = []
    heartbeat = Heartbeat()
    tools = [flood_tool(reports, variant == "thread", deadline_seconds), canary]
    async with Runtime(tools) as rt, anyio.create_task_group() as group:
        rt.on_call_events("flood", listen)

        async def probe() -> None:
            while True:
                sent = time.perf_counter()
                snapshot = await rt.wait(rt.submit("canary", session_id="canary"))
                latencies.append(time.perf_counter() - sent)
                if snapshot.status is not CallStatus.COMPLETED:
                    raise RuntimeError(f"canary ended {snapshot.status}: {snapshot.error}")
                await anyio.sleep(0.001)

        group.start_soon(heartbeat.beat)
        group.start_soon(probe)
        started = time.perf_counter()
        flood = await rt.wait(rt.submit("flood", session_id="flood"))
        seconds = time.perf_counter() - started
        group.cancel_scope.cancel()
        statistics = rt.statistics()
    reports_sent = flood.result
    if flood.status is not CallStatus.COMPLETED or not isinstance(reports_sent, int):
        raise RuntimeError(f"the flood ended {flood.status}: {flood.error}")
    if not latencies:
        raise RuntimeError("no canary call finished during the flood")
    latencies_ms = [latency * 1000 for latency in latencies]
    prefix = f"faults.progress_flood_{variant}_"
    return {
        prefix + "max_tick_ms": round(statistics.max_tick_us / 1000, 3),
        prefix + "reports": reports_sent,
        prefix + "seconds": round(seconds, 3),
        prefix + "progress_kept": len(flood.progress),
        prefix + "events_heard": events[0],
        prefix + "canary_calls": len(latencies),
        prefix + "canary_p99_ms": round(percentile(latencies_ms, 0.99), 3),
        prefix + "canary_max_ms": round(max(latencies_ms), 3),
        prefix + "loop_stall_ms": round(heartbeat.max_stall * 1000, 3),
    }


async def measure_floods(reports: int, deadline_seconds: float) -> Figures:
    figures: Figures = {}
    for variant in ("async", "thread"):
        figures |= await measure_flood(variant, reports, deadline_seconds)
    figures["faults.progress_flood_max_tick_ms"] = max(
        float(figures[f"faults.progress_flood_{variant}_max_tick_ms"])
        for variant in ("async", "thread")
    )
    return figures


async def measure_cancel(calls: int, sessions: int) -> Figures:
    started = Countdown(calls)
    ended = Countdown(calls)
    forever = anyio.Event()

    @agentos.tool
    async def hang(args: Empty) -> None:
        """Waits for an event nobody sets, until cancelled."""
        started.bump()
        try:
            await forever.wait()
        finally:
            ended.bump()

    label = _label(calls)
    async with Runtime([hang], max_running=calls, max_running_per_session=calls) as rt:
        ids: list[str] = []
        for first in range(0, calls, SUBMIT_BATCH):
            for number in range(first, min(first + SUBMIT_BATCH, calls)):
                ids.append(rt.submit("hang", session_id=f"session-{number % sessions}"))
            await anyio.lowlevel.checkpoint()
        await started.wait(f"{calls} calls to start")
        with GcPauses() as pauses:
            began = time.perf_counter()
            for call_id in ids:
                rt.cancel(call_id)
            api_seconds = time.perf_counter() - began
            await ended.wait(f"{calls} cancelled tools to end", 120)
            seconds = time.perf_counter() - began
        statistics = rt.statistics()
        cancelled = statistics.calls_by_status[CallStatus.CANCELLED]
        if cancelled != calls:
            raise RuntimeError(f"expected {calls} cancelled calls, the runtime has {cancelled}")
    prefix = f"faults.cancel_{label}_"
    return {
        prefix + "seconds": round(api_seconds, 3),
        prefix + "total_seconds": round(seconds, 3),
        prefix + "unwind_seconds": round(seconds - api_seconds, 3),
        prefix + "raw_anyio_unwind_seconds": round(await raw_anyio_unwind(calls), 3),
        prefix + "gc_seconds": round(pauses.total_pause, 3),
        prefix + "max_tick_ms": round(statistics.max_tick_us / 1000, 3),
    }


async def measure_burst(calls: int, prefix: str) -> Figures:
    """Submit ``calls`` calls in one go (nothing awaits between), then let the driver
    apply them: the longest tick, and how many ticks it took."""
    forever = anyio.Event()

    @agentos.tool
    async def hang(args: Empty) -> None:
        """Waits for an event nobody sets, until cancelled."""
        await forever.wait()

    async with Runtime([hang]) as rt:
        ticks = rt.statistics().ticks
        for number in range(calls):
            rt.submit("hang", session_id=f"session-{number % SESSIONS}")
        while rt.statistics().inbox_length:
            await anyio.lowlevel.checkpoint()
        statistics = rt.statistics()
    return {
        prefix + "max_tick_ms": round(statistics.max_tick_us / 1000, 3),
        prefix + "ticks": statistics.ticks - ticks,
    }


async def measure_bursts(calls: int) -> Figures:
    """The burst with the interpreter's default collector, then as a host tunes it."""
    label = _label(calls)
    figures = await measure_burst(calls, f"faults.burst_{label}_default_gc_")
    agentos.tune_gc()
    return figures | await measure_burst(calls, f"faults.burst_{label}_")


async def raw_anyio_unwind(tasks: int) -> float:
    """Seconds for ``tasks`` bare anyio tasks to end once each ``TaskHandle`` is cancelled."""
    started = Countdown(tasks)
    ended = Countdown(tasks)
    forever = anyio.Event()

    async def hang() -> None:
        started.bump()
        try:
            await forever.wait()
        finally:
            ended.bump()

    async with anyio.create_task_group() as group:
        handles = [group.start_soon(hang) for _ in range(tasks)]
        await started.wait(f"{tasks} bare tasks to start")
        began = time.perf_counter()
        for handle in handles:
            handle.cancel()
        await ended.wait(f"{tasks} bare tasks to end", 120)
        seconds = time.perf_counter() - began
    return seconds


def _label(calls: int) -> str:
    """``100k`` for 100,000: how counts appear in figure names."""
    return f"{calls // 1000}k" if calls % 1000 == 0 else str(calls)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks._faults")
    parser.add_argument("--flood", action="store_true", help="the progress flood")
    parser.add_argument("--cancel", action="store_true", help="cancel many in-flight calls")
    parser.add_argument("--burst", action="store_true", help="submit many calls at once")
    parser.add_argument("--reports", type=int, default=REPORTS)
    parser.add_argument("--deadline", type=float, default=DEADLINE_SECONDS)
    parser.add_argument("--calls", type=int, default=CALLS)
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    options = parser.parse_args()
    if not (options.flood or options.cancel or options.burst):
        parser.error("say --flood, --cancel and/or --burst")
    quiet_logs()
    figures: Figures = {}
    if options.flood:
        figures |= anyio.run(measure_floods, options.reports, options.deadline)
    if options.cancel:
        figures |= anyio.run(measure_cancel, options.calls, options.sessions)
    if options.burst:
        figures |= anyio.run(measure_bursts, options.calls)
    emit(figures)


if __name__ == "__main__":
    main()
