"""Status latency with 100,000 calls in the world: the API, and the capability.

100,000 no-op calls (over 10,000 sessions) are run to completion and kept
(``retention_seconds=None``), so the world holds 100,000 entities. Then
10,000 lookups of random ids are timed one by one with ``perf_counter_ns``;
this is repeated a few times and the median of the rounds' p99 is reported.
``status.*`` times ``rt.status(call_id)``; ``status.capability_*`` times the
model's path: ``get_tool_call_status`` through ``SystemToolbox.invoke`` from
the owning session (argument validation, scope check, JSON text out).
"""

from __future__ import annotations

import random
import time

import anyio
import anyio.lowlevel

from agentos import CallStatus
from agentos import Runtime
from agentos.turns import Caller
from agentos.turns import SystemToolbox
from benchmarks._common import Figures
from benchmarks._common import median
from benchmarks._common import noop
from benchmarks._common import percentile
from benchmarks._common import run_measure

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
        toolbox = SystemToolbox(rt)
        clock = time.perf_counter_ns
        direct: Rounds = ([], [], [])
        capability: Rounds = ([], [], [])
        for _ in range(ROUNDS):
            direct_costs: list[float] = []
            for call_id in chooser.choices(ids, k=LOOKUPS):
                started = clock()
                rt.status(call_id)
                direct_costs.append((clock() - started) / 1000)
            _summarise(direct_costs, direct)
            capability_costs: list[float] = []
            for call_id in chooser.choices(ids, k=LOOKUPS):
                caller = Caller(rt.status(call_id).session_id)
                arguments = {"tool_call_id": call_id}
                started = clock()
                result = await toolbox.invoke("get_tool_call_status", arguments, caller)
                result.to_json()
                capability_costs.append((clock() - started) / 1000)
                if result.is_error:
                    raise RuntimeError(f"the capability failed: {result.content}")
            _summarise(capability_costs, capability)
            await anyio.lowlevel.checkpoint()
        foreign, missing = await _scope_timing(toolbox, ids, chooser)
        return {
            "status.entities": completed,
            "status.lookups": LOOKUPS,
            "status.rounds": ROUNDS,
            **_figures("status.", direct),
            **_figures("status.capability_", capability),
            "status.capability_foreign_p50_us": round(foreign, 2),
            "status.capability_missing_p50_us": round(missing, 2),
            "status.capability_foreign_vs_missing": round(foreign / missing, 3),
        }


async def _scope_timing(
    toolbox: SystemToolbox, ids: list[str], chooser: random.Random
) -> tuple[float, float]:
    """p50 of asking for another session's call vs for an id that does not exist.

    Both must answer alike, in time too, so that scope leaks nothing.
    """
    clock = time.perf_counter_ns
    stranger = Caller("a-session-with-no-calls")
    foreign: list[float] = []
    missing: list[float] = []
    for call_id in chooser.choices(ids, k=LOOKUPS):
        made_up = call_id[:-12] + "000000000000"
        for asked, costs in ((call_id, foreign), (made_up, missing)):
            started = clock()
            result = await toolbox.invoke("get_tool_call_status", {"tool_call_id": asked}, stranger)
            result.to_json()
            costs.append((clock() - started) / 1000)
    return percentile(foreign, 0.5), percentile(missing, 0.5)


Rounds = tuple[list[float], list[float], list[float]]
"""Per round: p50, p99 and max, in µs."""


def _summarise(costs: list[float], rounds: Rounds) -> None:
    rounds[0].append(percentile(costs, 0.50))
    rounds[1].append(percentile(costs, 0.99))
    rounds[2].append(max(costs))


def _figures(prefix: str, rounds: Rounds) -> Figures:
    return {
        f"{prefix}p50_us": round(median(rounds[0]), 2),
        f"{prefix}p99_us": round(median(rounds[1]), 2),
        f"{prefix}max_us": round(max(rounds[2]), 2),
    }


if __name__ == "__main__":
    run_measure(measure)
