"""CPU an idle runtime burns: 10,000 sleeping calls and nothing changing.

All calls are started and settled first; then the process's CPU time
(``time.process_time``, every thread) is read across 2 s of wall time and
reported as a percentage of one core. The ticks run in that window are
reported too: an idle runtime should run none.
"""

from __future__ import annotations

import time

import anyio

from agentos import Runtime
from benchmarks._common import Figures
from benchmarks._common import Gate
from benchmarks._common import run_measure
from benchmarks._common import settled_rss

CALLS = 10_000
SESSIONS = 1_000
WINDOW_SECONDS = 2.0


async def measure() -> Figures:
    gate = Gate(CALLS)
    async with Runtime(
        gate.tools(),
        max_running=CALLS,
        max_running_per_session=CALLS,
    ) as rt:
        for number in range(CALLS):
            rt.submit("hold", {}, session_id=f"session-{number % SESSIONS}")
        await gate.started.wait(f"{CALLS} calls to start")
        settled_rss()
        await anyio.sleep(0.2)
        ticks_before = rt.statistics().ticks
        cpu_before = time.process_time()
        wall_before = time.perf_counter()
        await anyio.sleep(WINDOW_SECONDS)
        cpu = time.process_time() - cpu_before
        wall = time.perf_counter() - wall_before
        ticks = rt.statistics().ticks - ticks_before
        running = rt.statistics().running
        gate.shared.set()
    return {
        "idle.calls": running,
        "idle.window_seconds": round(wall, 3),
        "idle.cpu_percent": round(100 * cpu / wall, 3),
        "idle.ticks": ticks,
    }


if __name__ == "__main__":
    run_measure(measure)
