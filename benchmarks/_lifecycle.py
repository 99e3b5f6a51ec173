"""Per-call overhead: 10,000 no-op calls through the runtime vs bare anyio tasks.

Runtime: submit all calls, then ``await rt.wait(call_id)`` each one in turn;
the wall time from the first submit to the last final snapshot, per call.
Baseline: the same number of no-op coroutines started in one anyio task group
and awaited by leaving the group. The two alternate, after one warm-up of
each, and the best repetition of each is kept (the machine is shared).
"""

from __future__ import annotations

import gc
import time

import anyio

from agentos import Runtime
from benchmarks._common import Figures
from benchmarks._common import alternated
from benchmarks._common import median
from benchmarks._common import noop
from benchmarks._common import run_measure

CALLS = 10_000
REPETITIONS = 5


async def runtime_seconds(calls: int) -> float:
    async with Runtime(
        [noop],
        max_running=2 * calls,
        max_running_per_session=2 * calls,
    ) as rt:
        gc.collect()
        started = time.perf_counter()
        ids = [rt.submit("noop", {}) for _ in range(calls)]
        for call_id in ids:
            snapshot = await rt.wait(call_id)
            if snapshot.status != "completed":
                raise RuntimeError(f"call ended {snapshot.status}: {snapshot.error}")
        return time.perf_counter() - started


async def _nothing() -> None:
    return None


async def raw_anyio_seconds(calls: int) -> float:
    gc.collect()
    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(calls):
            group.start_soon(_nothing)
    return time.perf_counter() - started


async def measure() -> Figures:
    runtime, raw = await alternated(
        REPETITIONS, lambda: runtime_seconds(CALLS), lambda: raw_anyio_seconds(CALLS)
    )
    per_call = min(runtime) / CALLS * 1e6
    raw_per_call = min(raw) / CALLS * 1e6
    return {
        "lifecycle.calls": CALLS,
        "lifecycle.repetitions": REPETITIONS,
        "lifecycle.per_call_us": round(per_call, 2),
        "lifecycle.per_call_us_median": round(median(runtime) / CALLS * 1e6, 2),
        "lifecycle.raw_anyio_per_call_us": round(raw_per_call, 2),
        "lifecycle.raw_anyio_per_call_us_median": round(median(raw) / CALLS * 1e6, 2),
        "lifecycle.ratio_vs_anyio": round(per_call / raw_per_call, 3),
    }


if __name__ == "__main__":
    run_measure(measure)
