"""``rt.status(call_id)`` latency with 100,000 calls in the world.

100,000 no-op calls (over 10,000 sessions) are run to completion and kept
(``retention_seconds=None``), so the world holds 100,000 entities. Then
10,000 lookups of random ids are timed one by one with ``perf_counter_ns``;
this is repeated a few times and the median of the rounds' p99 is reported.
"""

from __future__ import annotations

import random
import time

import anyio
import anyio.lowlevel

from agentos import CallStatus, Runtime
from benchmarks._common import Figures, emit, median, noop, percentile, quiet_logs

ENTITIES = 100_000
SESSIONS = 10_000
LOOKUPS = 10_000
ROUNDS = 3
BATCH = 1_000


async def measure() -> Figures:
    async with Runtime(
        [noop],
        max_running=ENTITIES,
        max_running_per_session=ENTITIES,
        retention_seconds=None,
    ) as rt:
        ids: list[str] = []
        for first in range(0, ENTITIES, BATCH):
            for number in range(first, first + BATCH):
                ids.append(rt.submit("noop", {}, session_id=f"session-{number % SESSIONS}"))
            await anyio.lowlevel.checkpoint()
        with anyio.fail_after(300):
            for call_id in ids:
                await rt.wait(call_id)
        completed = rt.statistics().calls_by_status[CallStatus.COMPLETED]
        if completed != ENTITIES:
            raise RuntimeError(f"expected {ENTITIES} completed calls, found {completed}")
        chooser = random.Random(20_240_601)
        p50s: list[float] = []
        p99s: list[float] = []
        maxima: list[float] = []
        clock = time.perf_counter_ns
        for _ in range(ROUNDS):
            sample = chooser.choices(ids, k=LOOKUPS)
            costs: list[float] = []
            for call_id in sample:
                started = clock()
                rt.status(call_id)
                costs.append((clock() - started) / 1000)
            p50s.append(percentile(costs, 0.50))
            p99s.append(percentile(costs, 0.99))
            maxima.append(max(costs))
            await anyio.lowlevel.checkpoint()
        return {
            "status.entities": completed,
            "status.lookups": LOOKUPS,
            "status.rounds": ROUNDS,
            "status.p50_us": round(median(p50s), 2),
            "status.p99_us": round(median(p99s), 2),
            "status.max_us": round(max(maxima), 2),
        }


def main() -> None:
    quiet_logs()
    emit(anyio.run(measure))


if __name__ == "__main__":
    main()
