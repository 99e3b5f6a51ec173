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
import time
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import anyio
import structlog
from pydantic import BaseModel

import agentos
from agentos import Tool
from agentos import ToolContext
from agentos.testing import last_tool_results
from agentos.testing import text
from agentos.testing import tool_calls

Figures = dict[str, float | int | str]


def quiet_logs() -> None:
    """Make the runtime's per-call info logs no-ops (they would dominate the timings)."""
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        cache_logger_on_first_use=True,
    )


def reported(event: agentos.CallEvent) -> dict[str, agentos.Json]:
    """What a ``progressed`` event reports, when it is a dict (empty for any other event)."""
    if event.kind is agentos.CallEventKind.PROGRESSED and event.progress is not None:
        payload = event.progress.payload
        if isinstance(payload, dict):
            return payload
    return {}


class Empty(BaseModel):
    """The input model of every benchmark tool: no fields."""


@agentos.tool
async def noop(args: Empty) -> None:
    """Returns at once."""
    return None


def calls_then_text(calls: int = 1) -> agentos.ScriptedProvider:
    """A zero-latency model: ``calls`` calls of ``noop`` for a message, "done" for their
    results (a turn's cost with nothing of the model's or the tool's in it)."""
    return agentos.ScriptedProvider(
        (lambda r: bool(last_tool_results(r)), lambda r: text("done")),
        (lambda r: True, lambda r: tool_calls(*[("noop", {})] * calls)),
        keep_requests=False,
    )


async def turn_us(turns: int, calls: int = 1, **host_options: Any) -> float:
    """Microseconds a turn takes (posted, then ``wait_idle``) on a fresh host whose model
    is ``calls_then_text(calls)``, after one turn to warm up."""
    async with (
        agentos.Runtime([noop], max_running_per_session=100) as runtime,
        agentos.Host(runtime, calls_then_text(calls), **host_options) as host,
    ):
        session = await host.create_session(agentos.AgentConfig())
        session.post("warm up")
        await session.wait_idle()
        started = time.perf_counter()
        for turn in range(turns):
            session.post(f"turn {turn}")
            await session.wait_idle()
        spent = time.perf_counter() - started
    if session.errors:
        raise RuntimeError(f"the session failed: {session.errors}")
    return spent / turns * 1e6


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


class Heartbeat:
    """Measures how long the event loop stalls: a task that sleeps ``period`` seconds in a loop.

    Each wake-up later than asked is a stall of the loop (a long tick, a tool
    that never yields, a garbage collection); ``max_stall`` is the longest seen
    while ``measuring`` is set. Run ``beat`` in a task group and cancel it.
    """

    def __init__(self, period: float = 0.005) -> None:
        self.period = period
        self.max_stall = 0.0
        self._measuring = True
        self._pauses = 0

    @property
    def measuring(self) -> bool:
        return self._measuring

    @measuring.setter
    def measuring(self, value: bool) -> None:
        """Unset around the benchmark's own stalls: a beat that spans one is not counted."""
        self._measuring = value
        self._pauses += 1

    async def beat(self) -> None:
        clock = time.perf_counter
        while True:
            asked, pauses = clock(), self._pauses
            await anyio.sleep(self.period)
            stall = clock() - asked - self.period
            if self._measuring and pauses == self._pauses and stall > self.max_stall:
                self.max_stall = stall


class GcPauses:
    """Times every collection of the cyclic garbage collector, through ``gc.callbacks``.

    ``max_pause`` is the longest collection of any generation; ``full`` counts
    the generation-2 (full) collections and ``max_full_pause`` is the longest of
    them. Collections while ``measuring`` is unset (a benchmark's own
    ``gc.collect()``) are not counted.
    """

    def __init__(self) -> None:
        self.max_pause = 0.0
        self.max_full_pause = 0.0
        self.total_pause = 0.0
        self.collections = [0, 0, 0]
        self.measuring = True
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        if not self.measuring:
            return
        pause = time.perf_counter() - self._started
        generation = info["generation"]
        self.collections[generation] += 1
        self.total_pause += pause
        self.max_pause = max(self.max_pause, pause)
        if generation == 2:
            self.max_full_pause = max(self.max_full_pause, pause)

    def __enter__(self) -> GcPauses:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc_info: object) -> None:
        gc.callbacks.remove(self._callback)


async def loop_lag(seconds: float) -> list[float]:
    """How late a 10 ms sleep wakes, in ms, over ``seconds``."""
    lags = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        before = time.perf_counter()
        await anyio.sleep(0.01)
        lags.append((time.perf_counter() - before - 0.01) * 1000)
    return sorted(lags)


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (``fraction`` in 0..1) of ``values``."""
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


class Words(BaseModel):
    text: str


@agentos.tool(name="local_echo")
async def local_echo(args: Words) -> str:
    """The in-process echo a remote one (an MCP server's, an A2A agent) is measured against."""
    return args.text


async def echo_rounds(
    runtime: agentos.Runtime,
    far: str,
    arguments: Mapping[str, agentos.Json],
    echoes: int,
    rounds: int,
) -> tuple[list[float], list[float]]:
    """Seconds per call of the tool ``far`` with ``arguments`` and of ``local_echo`` (means of
    ``echoes`` calls one after another), ``rounds`` rounds alternating the two after a
    warm-up of each: what a call of ``far`` costs beside one of ``local_echo``."""

    async def mean_seconds(tool_name: str, tool_arguments: Mapping[str, agentos.Json]) -> float:
        started = time.perf_counter()
        for _ in range(echoes):
            done = await runtime.wait(runtime.submit(tool_name, tool_arguments), 30)
            assert done.status == "completed", done
        return (time.perf_counter() - started) / echoes

    return await alternated(
        rounds,
        lambda: mean_seconds(far, arguments),
        lambda: mean_seconds("local_echo", {"text": "hi"}),
    )


async def alternated(
    rounds: int, first: Callable[[], Awaitable[float]], second: Callable[[], Awaitable[float]]
) -> tuple[list[float], list[float]]:
    """``rounds`` measures of ``first`` and of ``second``, taken in turn after a warm-up of
    each: on a shared machine a slow moment weighs on both, not on one."""
    await first()
    await second()
    firsts: list[float] = []
    seconds: list[float] = []
    for _ in range(rounds):
        firsts.append(await first())
        seconds.append(await second())
    return firsts, seconds


def median(values: Iterable[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def run_measure(measure: Callable[[], Awaitable[Figures]]) -> None:
    """An async benchmark's run: the runtime's info logs off, ``measure`` on anyio, its
    figures printed."""
    quiet_logs()
    emit(anyio.run(measure))


def emit(figures: Figures) -> None:
    """Print the figures as one JSON line: the runner reads the last line of stdout."""
    sys.stdout.write(json.dumps(figures, sort_keys=True) + "\n")
    sys.stdout.flush()
