"""Many sleeping calls at once: memory per call and the cost of one tick.

``--calls N --sessions S`` holds N calls (spread round-robin over S sessions)
running at once, all admitted (the caps are set above N). With ``--memory``
it reports the RSS they add, divided by N: RSS is read with the runtime open
and its tools registered, then again with all N calls running (after a full
collection each time). Then ``--probes`` of those calls (``probe`` tool) are
completed one at a time; for each, the runtime's own ``last_tick_us`` of the
tick that applied the completion is read, and the median is reported as
``scale.tick_us_<label>``.

``--raw-anyio`` instead measures the RSS of N bare anyio tasks that wait on
one event: what a sleeping task costs before the runtime adds anything.
"""

from __future__ import annotations

import argparse
import time

import anyio
import anyio.lowlevel

from agentos import Runtime
from benchmarks._common import Countdown
from benchmarks._common import Figures
from benchmarks._common import Gate
from benchmarks._common import emit
from benchmarks._common import median
from benchmarks._common import percentile
from benchmarks._common import quiet_logs
from benchmarks._common import settled_rss

BATCH = 1_000
"""Calls submitted between two yields to the event loop (as they would arrive)."""


async def measure(calls: int, sessions: int, probes: int, label: str, memory: bool) -> Figures:
    if not 0 < probes < calls:
        raise ValueError("need 0 < probes < calls")
    background = calls - probes
    gate = Gate(background, probes)
    async with Runtime(
        gate.tools(),
        max_running=calls,
        max_running_per_session=calls,
        retention_seconds=600.0,
    ) as rt:
        await anyio.lowlevel.checkpoint()
        before = settled_rss()
        started = time.perf_counter()
        probe_ids: list[str] = []
        for first in range(0, calls, BATCH):
            for number in range(first, min(first + BATCH, calls)):
                session = f"session-{number % sessions}"
                if number < background:
                    rt.submit("hold", {}, session_id=session)
                else:
                    probe_ids.append(rt.submit("probe", {}, session_id=session))
            await anyio.lowlevel.checkpoint()
        await gate.started.wait(f"{background} hold calls to start")
        await gate.probes_started.wait(f"{probes} probe calls to start")
        submit_seconds = time.perf_counter() - started
        running = rt.statistics().running
        if running != calls:
            raise RuntimeError(f"expected {calls} running calls, the runtime has {running}")
        after = settled_rss()

        ticks: list[float] = []
        discarded = 0
        for call_id in reversed(probe_ids):
            ticks_before = rt.statistics().ticks
            gate.release_probe(call_id)
            snapshot = await rt.wait(call_id, 10.0)
            if snapshot.status != "completed":
                raise RuntimeError(f"probe ended {snapshot.status}: {snapshot.error}")
            stats = rt.statistics()
            if stats.ticks - ticks_before == 1:
                ticks.append(stats.last_tick_us)
            else:
                discarded += 1
        if not ticks:
            raise RuntimeError("no probe completed in exactly one tick")

        figures: Figures = {
            f"scale.tick_us_{label}": round(median(ticks), 2),
            f"scale.tick_us_{label}_p90": round(percentile(ticks, 0.9), 2),
            f"scale.tick_probes_{label}": len(ticks),
            f"scale.tick_probes_discarded_{label}": discarded,
            f"scale.submit_start_seconds_{label}": round(submit_seconds, 3),
        }
        if memory:
            figures |= {
                "scale.inflight_calls": running,
                "scale.sessions": sessions,
                "scale.rss_before_bytes": before,
                "scale.rss_inflight_bytes": after,
                "scale.rss_bytes_per_call": round((after - before) / calls, 1),
            }
        gate.shared.set()
        closing = time.perf_counter()
    figures[f"scale.close_seconds_{label}"] = round(time.perf_counter() - closing, 3)
    return figures


async def measure_raw(calls: int) -> Figures:
    event = anyio.Event()
    started = Countdown(calls)

    async def sleeper() -> None:
        started.bump()
        await event.wait()

    async with anyio.create_task_group() as group:
        await anyio.lowlevel.checkpoint()
        before = settled_rss()
        for first in range(0, calls, BATCH):
            for _ in range(first, min(first + BATCH, calls)):
                group.start_soon(sleeper)
            await anyio.lowlevel.checkpoint()
        await started.wait(f"{calls} tasks to start")
        after = settled_rss()
        event.set()
    return {"scale.raw_anyio_rss_bytes_per_task": round((after - before) / calls, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks._scale")
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--probes", type=int, default=50)
    parser.add_argument("--label", default="100k")
    parser.add_argument("--memory", action="store_true", help="also report RSS per call")
    parser.add_argument("--raw-anyio", action="store_true", help="bare anyio tasks' RSS only")
    options = parser.parse_args()
    quiet_logs()
    if options.raw_anyio:
        emit(anyio.run(measure_raw, options.calls))
        return
    emit(
        anyio.run(
            measure,
            options.calls,
            options.sessions,
            options.probes,
            options.label,
            options.memory,
        )
    )


if __name__ == "__main__":
    main()
