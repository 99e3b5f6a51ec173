"""What every benchmark module shares: quiet logging, the tools, RSS, output.

Each benchmark module runs in its own process (``python -m benchmarks._x``)
and prints one flat JSON object (dotted keys) as the last line of stdout.
"""

from __future__ import annotations

import gc
import json
import logging
import math
import os
import sys
from collections.abc import Iterable, Sequence

import anyio
import structlog
from pydantic import BaseModel

import agentos
from agentos import Tool, ToolContext

Figures = dict[str, float | int | str]


def quiet_logs() -> None:
    """Make the runtime's per-call info logs no-ops (they would dominate the timings)."""
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        cache_logger_on_first_use=True,
    )


class Empty(BaseModel):
    """The input model of every benchmark tool: no fields."""


@agentos.tool
async def noop(args: Empty) -> None:
    """Returns at once."""
    return None


class Gate:
    """Holds calls of the ``hold`` and ``probe`` tools until the benchmark releases them.

    ``hold`` calls all wait on one shared event (so the harness adds no
    per-call object of its own); ``probe`` calls each wait on their own event
    so that exactly one of them can be made to complete.
    """

    def __init__(self, holds: int, probes: int = 0) -> None:
        self.shared = anyio.Event()
        self.probes: dict[str, anyio.Event] = {}
        self.started = Countdown(holds)
        self.probes_started = Countdown(probes)

    def tools(self) -> list[Tool[Empty]]:
        gate = self

        @agentos.tool
        async def hold(args: Empty) -> None:
            """Sleeps until the shared gate opens."""
            gate.started.bump()
            await gate.shared.wait()

        @agentos.tool
        async def probe(args: Empty, ctx: ToolContext) -> None:
            """Sleeps until its own event is set."""
            gate.probes_started.bump()
            event = gate.probes.get(ctx.call_id)
            if event is None:
                event = gate.probes[ctx.call_id] = anyio.Event()
            await event.wait()

        return [hold, probe]

    def release_probe(self, call_id: str) -> None:
        event = self.probes.get(call_id)
        if event is None:
            event = self.probes[call_id] = anyio.Event()
        event.set()


def rss_bytes() -> int:
    """Resident set size of this process now, from /proc/self/statm."""
    with open("/proc/self/statm") as statm:
        resident_pages = int(statm.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE")


def settled_rss() -> int:
    """RSS after a full collection, so pending garbage is not counted."""
    gc.collect()
    return rss_bytes()


class Countdown:
    """Counts tasks as they start; ``reached`` is set when ``goal`` have started."""

    def __init__(self, goal: int = 0) -> None:
        self.goal = goal
        self.count = 0
        self.reached = anyio.Event()
        if goal == 0:
            self.reached.set()

    def bump(self) -> None:
        self.count += 1
        if self.count == self.goal:
            self.reached.set()

    async def wait(self, what: str, seconds: float = 300.0) -> None:
        """Wait until ``goal`` tasks have started; TimeoutError after ``seconds``."""
        with anyio.move_on_after(seconds):
            await self.reached.wait()
            return
        raise TimeoutError(f"gave up after {seconds}s waiting for {what}: {self.count}/{self.goal}")


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (``fraction`` in 0..1) of ``values``."""
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def median(values: Iterable[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def emit(figures: Figures) -> None:
    """Print the figures as one JSON line: the runner reads the last line of stdout."""
    sys.stdout.write(json.dumps(figures, sort_keys=True) + "\n")
    sys.stdout.flush()
