"""What one turn costs against bare asyncio tasks in the same process (issue 29).

A 1-call turn: a message, a zero-latency scripted model asking for one tool that
returns at once, the model's answer; ``turn.one_call_us`` is its wall time, posted and
awaited with ``wait_idle``. The baseline is one bare task: ``await
asyncio.create_task(nothing())``. ``turn.one_call_vs_bare_task`` is the first over the
second. A 10-call turn (the model asks for ten calls at once) against ``asyncio.gather``
of ten bare tasks gives ``turn.per_call_vs_bare_gather``. Runtime and baseline
alternate in rounds; each time is the median of its rounds, and each ratio the median
of the rounds' own ratios (``turn.per_call_vs_bare_gather_rounds``): a round pairs two
measures taken a moment apart, where the machine's other load shifts the medians of a
run apart (on a shared 2-core machine, five runs of one tree gave ratios of medians
from 11.5 to 17.0 and medians of ratios from 12.9 to 14.1).

``turn.ticks_per_one_call_turn`` counts the kernel's ticks in a 1-call turn (the
runtime's statistics), ``turn.cancel_scopes_per_one_call_turn`` the anyio cancel
scopes entered in one (the asyncio backend's ``CancelScope.__enter__`` counted), both with no store.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from agentos import AgentConfig
from agentos import Host
from agentos import Runtime
from benchmarks._common import Figures
from benchmarks._common import calls_then_text
from benchmarks._common import emit
from benchmarks._common import noop
from benchmarks._common import quiet_logs
from benchmarks._common import turn_us

ROUNDS = 7
TURNS = 300
BARE = 3000


class Turns:
    """Turns of ``calls`` calls each, on a fresh host per round."""

    def __init__(self, calls: int) -> None:
        self.calls = calls

    async def per_turn_us(self, turns: int) -> float:
        return await turn_us(turns, self.calls)


async def _nothing() -> None:
    return None


async def bare_task_us() -> float:
    started = time.perf_counter()
    for _ in range(BARE):
        await asyncio.create_task(_nothing())
    return (time.perf_counter() - started) / BARE * 1e6


async def bare_gather_us(tasks: int) -> float:
    started = time.perf_counter()
    for _ in range(BARE // tasks):
        await asyncio.gather(*[asyncio.create_task(_nothing()) for _ in range(tasks)])
    return (time.perf_counter() - started) / (BARE // tasks) * 1e6


@contextmanager
def counting_cancel_scopes() -> Iterator[list[int]]:
    from anyio._backends._asyncio import CancelScope

    count = [0]
    enter = CancelScope.__enter__

    def counted(self: CancelScope) -> Any:
        count[0] += 1
        return enter(self)

    CancelScope.__enter__ = counted  # type: ignore[method-assign]
    try:
        yield count
    finally:
        CancelScope.__enter__ = enter  # type: ignore[method-assign]


async def one_turn_counts(turns: int = 50) -> tuple[float, float]:
    """Ticks and cancel scopes per 1-call turn, over ``turns`` turns."""
    async with Runtime([noop]) as runtime, Host(runtime, calls_then_text(1)) as host:
        session = await host.create_session(AgentConfig())
        session.post("warm up")
        await session.wait_idle()
        ticks = runtime.statistics().ticks
        with counting_cancel_scopes() as scopes:
            for turn in range(turns):
                session.post(f"turn {turn}")
                await session.wait_idle()
        ticks = runtime.statistics().ticks - ticks
    return ticks / turns, scopes[0] / turns


async def measure() -> Figures:
    one, ten = Turns(1), Turns(10)
    await one.per_turn_us(20)
    await ten.per_turn_us(20)
    turn_us: list[float] = []
    ten_us: list[float] = []
    task_us: list[float] = []
    gather_us: list[float] = []
    for _ in range(ROUNDS):
        turn_us.append(await one.per_turn_us(TURNS))
        task_us.append(await bare_task_us())
        ten_us.append(await ten.per_turn_us(TURNS // 3))
        gather_us.append(await bare_gather_us(10))
    ticks, scopes = await one_turn_counts()
    per_call = [ten / gather for ten, gather in zip(ten_us, gather_us, strict=True)]
    return {
        "turn.one_call_us": round(statistics.median(turn_us), 1),
        "turn.bare_task_us": round(statistics.median(task_us), 2),
        "turn.one_call_vs_bare_task": round(
            statistics.median(one / bare for one, bare in zip(turn_us, task_us, strict=True)), 1
        ),
        "turn.ten_calls_us": round(statistics.median(ten_us), 1),
        "turn.bare_gather_10_us": round(statistics.median(gather_us), 2),
        "turn.per_call_vs_bare_gather": round(statistics.median(per_call), 1),
        "turn.per_call_vs_bare_gather_rounds": " / ".join(f"{ratio:.1f}" for ratio in per_call),
        "turn.ticks_per_one_call_turn": round(ticks, 2),
        "turn.cancel_scopes_per_one_call_turn": round(scopes, 2),
    }


def main() -> None:
    quiet_logs()
    emit(asyncio.run(measure()))


if __name__ == "__main__":
    main()
