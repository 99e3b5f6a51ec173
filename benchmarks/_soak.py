"""A soak: 1,000 busy sessions on one Host for a minute, with every kind of call.

Each session posts a message, waits until it is answered, and posts again at
once. A ``ScriptedProvider`` answers a user message with three parallel tool
calls drawn from a fixed mix, and the request that carries their results with
a text: slow async work (``slow``, 20-200 ms), a failure (``fail``), sync work
in a worker thread (``blocking``, 5-20 ms), a call the harness cancels about
50 ms after it starts (``doomed``), and a call that times out (``stuck``,
hard timeout 0.2 s). Finished calls are kept 15 s (``retention_seconds``) so
the world reaches a steady size within the warm-up.

Figures (``soak.`` prefix, or ``--prefix``): the runtime's longest tick, the
event loop's longest stall (a heartbeat task sleeping 5 ms), the
p50/p99/max of a turn (post to idle), the RSS growth per turn after a
warm-up (the first 40 % of the run; RSS read after ``gc.collect()``, the
sessions' growing histories included), every garbage collection's pause
(``gc.callbacks``), and what is left at the end beyond the baseline taken
before the runtime opened: open file descriptors, threads, asyncio tasks.
The leak figures are also checked: the process exits 1 (after printing the
figures) if any is above 0 or a session recorded an error.

Nothing waits between turns, so the one event loop is busy all the time: the loop's
longest stall is then the longest pass it makes, and a pass runs the step of every
session ready in it (nearly all of them, since sync calls stopped queueing behind
threads that waited for the loop). It falls with the CPU a turn costs, not with the
collector alone; ``gc_max_full_pause_ms`` is the collector's part.

``--seconds`` (default: ``AGENTOS_SOAK_SECONDS`` or 60) sets the run's length;
``--tune-gc`` calls ``agentos.tune_gc()`` once the sessions exist.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import sys
import threading
import time
from collections import deque
from typing import Any

import anyio
import anyio.lowlevel
from pydantic import BaseModel

import agentos
from agentos import AgentConfig
from agentos import Host
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import Session
from agentos import SessionStatus
from agentos import Tool
from agentos import ToolContext
from agentos import UnknownCallError
from benchmarks._common import Empty
from benchmarks._common import Figures
from benchmarks._common import GcPauses
from benchmarks._common import Heartbeat
from benchmarks._common import emit
from benchmarks._common import percentile
from benchmarks._common import quiet_logs
from benchmarks._common import settled_rss

SESSIONS = 1_000
SECONDS = 60.0
WARM_UP_FRACTION = 0.4
CALLS_PER_TURN = 3
RETENTION_SECONDS = 15.0
CANCEL_AFTER_SECONDS = 0.05
STUCK_TIMEOUT_SECONDS = 0.2
MIX = {"slow": 40, "fail": 15, "blocking": 15, "doomed": 15, "stuck": 15}
"""Tool name -> weight in the draw of each call."""
SETTLE_SECONDS = 5.0
"""How long worker threads get to exit after the run before they count as left over."""


class Work(BaseModel):
    seconds: float = 0.0


class Soak:
    """The tools, the model and the bookkeeping of one run."""

    def __init__(self, seed: int = 9) -> None:
        self.random = random.Random(seed)
        self.doomed: deque[tuple[float, str]] = deque()
        """Started ``doomed`` calls, oldest first: (when, call id)."""
        self.turn_seconds: list[float] = []
        self.turns = 0
        self.ending = False
        self.provider = ScriptedProvider(
            (self._has_results, self._answer), (self._always, self._call_tools)
        )
        self._ids = 0

    def tools(self) -> list[Tool[Any]]:
        soak = self

        @agentos.tool
        async def slow(args: Work) -> dict[str, float]:
            """Async work that takes a while."""
            await anyio.sleep(args.seconds)
            return {"slept": args.seconds}

        @agentos.tool
        async def fail(args: Empty) -> None:
            """Fails after a moment."""
            await anyio.sleep(0.005)
            raise RuntimeError("the soak's failing tool failed, as it always does")

        @agentos.tool
        def blocking(args: Work, ctx: ToolContext) -> str:
            """Sync work in a worker thread."""
            time.sleep(args.seconds)
            return ctx.call_id

        @agentos.tool
        async def doomed(args: Empty, ctx: ToolContext) -> None:
            """Waits until the harness cancels it."""
            soak.doomed.append((time.perf_counter(), ctx.call_id))
            await anyio.sleep_forever()

        @agentos.tool(timeout=STUCK_TIMEOUT_SECONDS)
        async def stuck(args: Empty) -> None:
            """Waits until its hard timeout."""
            await anyio.sleep_forever()

        return [slow, fail, blocking, doomed, stuck]

    @staticmethod
    def _has_results(request: ModelRequest) -> bool:
        content = request.messages[-1]["content"]
        return isinstance(content, list) and any(
            block.get("type") == "tool_result" for block in content
        )

    @staticmethod
    def _always(request: ModelRequest) -> bool:
        return True

    @staticmethod
    def _answer(request: ModelRequest) -> ModelResponse:
        return ModelResponse([{"type": "text", "text": "done"}], "end_turn")

    def _call_tools(self, request: ModelRequest) -> ModelResponse:
        names = self.random.choices(list(MIX), weights=list(MIX.values()), k=CALLS_PER_TURN)
        uses: list[dict[str, Any]] = []
        for name in names:
            self._ids += 1
            arguments: dict[str, float] = {}
            if name == "slow":
                arguments = {"seconds": self.random.uniform(0.02, 0.2)}
            elif name == "blocking":
                arguments = {"seconds": self.random.uniform(0.005, 0.02)}
            uses.append(
                {"type": "tool_use", "id": f"toolu_{self._ids}", "name": name, "input": arguments}
            )
        return ModelResponse(uses, "tool_use")

    async def converse(self, session: Session) -> None:
        clock = time.perf_counter
        while not self.ending:
            if session.status is SessionStatus.STOPPED:
                return  # it crashed: its errors say why, and the soak reports them
            started = clock()
            session.post("go on")
            await session.wait_idle()
            self.turn_seconds.append(clock() - started)
            self.turns += 1
            self.provider.requests.clear()  # the scripted model keeps every request

    async def cancel_doomed(self, runtime: Runtime) -> None:
        """Cancels each ``doomed`` call about ``CANCEL_AFTER_SECONDS`` after it started."""
        while True:
            due = time.perf_counter() - CANCEL_AFTER_SECONDS
            while self.doomed and self.doomed[0][0] <= due:
                _, call_id = self.doomed.popleft()
                with contextlib.suppress(UnknownCallError):
                    runtime.cancel(call_id, "the soak cancels every doomed call")
            await anyio.sleep(0.01)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def measure(seconds: float, count: int, tune_gc: bool) -> Figures:
    tasks_before = len(asyncio.all_tasks())
    soak = Soak()
    heartbeat = Heartbeat()
    frozen = 0
    async with (
        Runtime(
            soak.tools(),
            max_running=CALLS_PER_TURN * count,
            max_running_per_session=CALLS_PER_TURN,
            retention_seconds=RETENTION_SECONDS,
        ) as runtime,
        Host(runtime, soak.provider) as host,
    ):
        config = AgentConfig()
        sessions = [
            await host.create_session(config, session_id=f"soak-{number}")
            for number in range(count)
        ]
        if tune_gc:
            frozen = agentos.tune_gc().frozen
        with GcPauses() as pauses:
            async with anyio.create_task_group() as group:
                group.start_soon(heartbeat.beat)
                group.start_soon(soak.cancel_doomed, runtime)
                with anyio.fail_after(seconds + 60):  # the last turns end within a minute
                    async with anyio.create_task_group() as talks:
                        for session in sessions:
                            talks.start_soon(soak.converse, session)
                        await anyio.sleep(seconds * WARM_UP_FRACTION)
                        pauses.measuring = heartbeat.measuring = False
                        warm_rss, warm_turns = settled_rss(), soak.turns
                        warm_turn_count = len(soak.turn_seconds)
                        pauses.measuring = heartbeat.measuring = True
                        await anyio.sleep(seconds * (1 - WARM_UP_FRACTION))
                        soak.ending = True
                pauses.measuring = heartbeat.measuring = False
                end_rss, end_turns = settled_rss(), soak.turns
                group.cancel_scope.cancel()
        statistics = runtime.statistics()
        errors = [f"{s.session_id}: {s.errors}" for s in sessions if s.errors]
        for error in errors[:5]:
            print(error, file=sys.stderr)
        for session in sessions:
            session.stop()
        with anyio.fail_after(60):
            for session in sessions:
                await session.wait_idle()
        stopped = sum(session.status is SessionStatus.STOPPED for session in sessions)
    await anyio.lowlevel.checkpoint()
    tasks_left = len(asyncio.all_tasks()) - tasks_before
    turns_ms = [value * 1000 for value in soak.turn_seconds[warm_turn_count:]]
    return {
        "soak.sessions": count,
        "soak.seconds": seconds,
        "soak.turns": soak.turns,
        "soak.turns_per_s": round(soak.turns / seconds, 1),
        "soak.max_tick_ms": round(statistics.max_tick_us / 1000, 3),
        "soak.max_loop_stall_ms": round(heartbeat.max_stall * 1000, 3),
        "soak.turn_p50_ms": round(percentile(turns_ms, 0.5), 3),
        "soak.turn_p99_ms": round(percentile(turns_ms, 0.99), 3),
        "soak.turn_max_ms": round(max(turns_ms), 3),
        "soak.rss_growth_bytes_per_turn": round((end_rss - warm_rss) / (end_turns - warm_turns)),
        "soak.rss_end_bytes": end_rss,
        "soak.history_messages_per_session": round(
            sum(len(session.history) for session in sessions) / count
        ),
        "soak.gc_max_pause_ms": round(pauses.max_pause * 1000, 3),
        "soak.gc_max_full_pause_ms": round(pauses.max_full_pause * 1000, 3),
        "soak.gc_full_collections": pauses.collections[2],
        "soak.gc_collections": sum(pauses.collections),
        "soak.gc_pause_seconds": round(pauses.total_pause, 3),
        "soak.gc_frozen_objects": frozen,
        "soak.calls_forgotten": statistics.calls_forgotten,
        "soak.sessions_with_errors": len(errors),
        "soak.sessions_not_stopped": count - stopped,
        "soak.tasks_leaked": tasks_left,
    }


def leftovers(fds_before: int, threads_before: int) -> Figures:
    """File descriptors and threads beyond the baseline once the run is over.

    anyio's idle worker threads exit on their own: they get ``SETTLE_SECONDS``.
    """
    deadline = time.monotonic() + SETTLE_SECONDS
    while threading.active_count() > threads_before and time.monotonic() < deadline:
        time.sleep(0.05)
    return {
        "soak.fds_leaked": open_fds() - fds_before,
        "soak.threads_leaked": threading.active_count() - threads_before,
    }


LEAKS = ("fds_leaked", "threads_leaked", "tasks_leaked", "sessions_with_errors")
"""Figures the soak itself requires to be 0."""


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks._soak")
    parser.add_argument(
        "--seconds", type=float, default=float(os.environ.get("AGENTOS_SOAK_SECONDS", SECONDS))
    )
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--tune-gc", action="store_true", help="call agentos.tune_gc() first")
    parser.add_argument("--prefix", default="soak.", help="prefix of every figure's name")
    options = parser.parse_args()
    if options.seconds <= 0 or options.sessions < 1:
        parser.error("--seconds must be > 0 and --sessions >= 1")
    quiet_logs()
    fds_before, threads_before = open_fds(), threading.active_count()
    figures = anyio.run(measure, options.seconds, options.sessions, options.tune_gc)
    figures |= leftovers(fds_before, threads_before)
    emit({options.prefix + name.removeprefix("soak."): v for name, v in figures.items()})
    failed = [name for name in LEAKS if figures[f"soak.{name}"] != 0]
    if failed:
        print(f"soak: expected 0 for {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
