"""Many sessions at once: 1,000 conversations on one Host, 5 turns each.

A zero-latency scripted model answers every user message with three
parallel tool calls (one response, three ``tool_use`` blocks) and every
request that carries their results with a text, which ends the turn. Each
tool sleeps 10 ms (``anyio.sleep``) and returns a small value. Every session
posts its 5 user messages one after another (the next once the session is
idle again), all 1,000 sessions at the same time, with the default
``AgentConfig`` (asynchronous, yield when all done) and caps that never
throttle.

With ``--store``, the host commits every turn to a ``SqliteStore`` in a
temporary directory (the ``sessions.store.*`` figures): the commit of the
results comes before the request that carries them.

``sessions.event_to_request_*``: per turn, from the moment the last of the
turn's three tools returns (read inside the tool just before it returns) to
the moment the provider's ``complete`` is entered for the request that
carries those results. ``sessions.rss_bytes_per_session``: RSS after the run
(after ``gc.collect()``, host and sessions alive, histories held) minus RSS
with the runtime and host open before any session exists, per session.

``--rounds N`` runs it N times, each on a fresh runtime, and reports the round whose
``sessions.cpu_us_per_turn`` is the median (the machine is shared: one round can land on a
busy moment); ``sessions.cpu_us_per_turn_rounds`` lists every round's, lowest first.

``--memory`` (with ``--turns N``) prints only what a session of N turns holds:
``sessions.rss_bytes_per_session_N_turns`` as above, or with ``--store``
``sessions.store_bytes_per_session_N_turns``, the database's files (with its
write-ahead log) once the host has closed, per session.

``--tracked`` prints only ``gc.tracked_objects_per_kept_turn``: the objects the cyclic
collector tracks (``len(gc.get_objects())``, after ``gc.collect()``) once every session
has run its turns, minus the same count once the sessions exist and before any turn,
divided by the turns kept (sessions times turns). Host, sessions and runtime stay alive, so
it counts what a finished 3-call turn leaves for the collector to traverse at every full
collection: its history and its finished calls (kept 600 s, the runtime's default).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio

import agentos
from agentos import AgentConfig
from agentos import Host
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import Runtime
from agentos import Session
from agentos import SqliteStore
from agentos import ToolContext
from benchmarks._common import Empty
from benchmarks._common import Figures
from benchmarks._common import emit
from benchmarks._common import percentile
from benchmarks._common import quiet_logs
from benchmarks._common import settled_rss

SESSIONS = 1_000
TURNS = 5
TOOLS_PER_TURN = 3
TOOL_SECONDS = 0.01
TOOL_NAME = "work"


class Probe:
    """What the tools and the model record: tool return times, and the delays seen."""

    def __init__(self) -> None:
        self.returned: dict[str, float] = {}
        """session id -> when its latest tool returned (the last one of the turn wins)."""
        self.delays: list[float] = []
        """Seconds from the last tool of a turn returning to the next request being issued."""

    def tool(self) -> agentos.Tool[Empty]:
        returned = self.returned
        clock = time.perf_counter

        @agentos.tool(name=TOOL_NAME)
        async def work(args: Empty, ctx: ToolContext) -> int:
            """Sleeps 10 ms and returns a small value."""
            await anyio.sleep(TOOL_SECONDS)
            returned[ctx.session_id] = clock()
            return 7

        return work


class BenchModel:
    """A zero-latency model: three parallel tool calls for a user message, text for results.

    Cheaper than ``ScriptedProvider``: no rule list, and it keeps no requests.
    Every response is built fresh, as a real provider's would be.
    """

    name = "bench"

    def __init__(self, probe: Probe) -> None:
        self._probe = probe
        self._ids = itertools.count()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        entered = time.perf_counter()
        content = request.messages[-1]["content"]
        if isinstance(content, list) and content and content[0].get("type") == "tool_result":
            returned = self._probe.returned.pop(request.session_id)
            self._probe.delays.append(entered - returned)
            return ModelResponse([{"type": "text", "text": "done"}], "end_turn")
        uses: list[dict[str, Any]] = [
            {"type": "tool_use", "id": f"toolu_{next(self._ids)}", "name": TOOL_NAME, "input": {}}
            for _ in range(TOOLS_PER_TURN)
        ]
        return ModelResponse(uses, "tool_use")


async def converse(session: Session, turns: int) -> None:
    for turn in range(turns):
        session.post(f"turn {turn}: do three things")
        await session.wait_idle()


def check(sessions: list[Session], turns: int) -> None:
    """Every session ran every turn to its final text, with no error."""
    for session in sessions:
        if session.errors:
            raise RuntimeError(f"{session.session_id}: {session.errors}")
        if session.requests != 2 * turns or len(session.history) != 4 * turns:
            raise RuntimeError(
                f"{session.session_id}: {session.requests} requests and "
                f"{len(session.history)} messages after {turns} turns"
            )
        if session.replies[-1] != "done":
            raise RuntimeError(f"{session.session_id}: last reply {session.replies[-1]!r}")


async def measure(count: int, turns: int, store_in: Path | None = None) -> Figures:
    probe = Probe()
    async with AsyncExitStack() as stack:
        store = None
        if store_in is not None:
            store = await stack.enter_async_context(await SqliteStore.open(store_in / "bench.db"))
        runtime = await stack.enter_async_context(
            Runtime(
                [probe.tool()],
                max_running=TOOLS_PER_TURN * count,
                max_running_per_session=TOOLS_PER_TURN,
            )
        )
        host = await stack.enter_async_context(Host(runtime, BenchModel(probe), store=store))
        config = AgentConfig()
        before = settled_rss()
        sessions = [
            await host.create_session(config, session_id=f"session-{number}")
            for number in range(count)
        ]
        tracked_before = tracked_objects()
        ticks_before = runtime.statistics().ticks
        started = time.perf_counter()
        cpu_started = time.process_time()
        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                for session in sessions:
                    group.start_soon(converse, session, turns)
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
        after = settled_rss()
        tracked_after = tracked_objects()
        check(sessions, turns)
        statistics = runtime.statistics()
        ticks = statistics.ticks - ticks_before
    stored = 0 if store_in is None else folder_bytes(store_in)
    delays_ms = [delay * 1000 for delay in probe.delays]
    if len(delays_ms) != count * turns:
        raise RuntimeError(f"expected {count * turns} delays, got {len(delays_ms)}")
    return {
        "sessions.count": count,
        "sessions.turns": count * turns,
        "sessions.wall_seconds": round(wall, 3),
        "sessions.turns_per_s": round(count * turns / wall, 1),
        "sessions.cpu_us_per_turn": round(cpu / (count * turns) * 1e6, 1),
        "sessions.event_to_request_p50_ms": round(percentile(delays_ms, 0.5), 3),
        "sessions.event_to_request_p99_ms": round(percentile(delays_ms, 0.99), 3),
        "sessions.event_to_request_max_ms": round(max(delays_ms), 3),
        "sessions.rss_bytes_per_session": round((after - before) / count, 1),
        "sessions.store_bytes_per_session": round(stored / count, 1),
        "sessions.ticks": ticks,
        "sessions.hand_offs_here": statistics.hand_offs_here,
        "sessions.hand_offs_spawned": statistics.hand_offs_spawned,
        "gc.tracked_objects_per_kept_turn": round(
            (tracked_after - tracked_before) / (count * turns), 1
        ),
    }


def tracked_objects() -> int:
    """How many objects the cyclic collector tracks now, after a full collection."""
    gc.collect()
    return len(gc.get_objects())


def folder_bytes(folder: Path) -> int:
    """The size of the files in ``folder`` (the database and its write-ahead log)."""
    return sum(file.stat().st_size for file in folder.iterdir())


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks._sessions")
    parser.add_argument("--sessions", type=positive, default=SESSIONS)
    parser.add_argument("--turns", type=positive, default=TURNS)
    parser.add_argument("--prefix", default="sessions.", help="prefix of every figure's name")
    parser.add_argument("--store", action="store_true", help="commit turns to a SqliteStore")
    parser.add_argument("--memory", action="store_true", help="only what a session holds")
    parser.add_argument(
        "--tracked", action="store_true", help="only the objects a kept turn leaves tracked"
    )
    parser.add_argument(
        "--rounds", type=positive, default=1, help="run N times, keep the median CPU round"
    )
    options = parser.parse_args()
    quiet_logs()
    rounds = []
    for _ in range(options.rounds):
        with tempfile.TemporaryDirectory() as folder:
            store_in = Path(folder) if options.store else None
            rounds.append(anyio.run(measure, options.sessions, options.turns, store_in))
    rounds.sort(key=lambda figures: figures["sessions.cpu_us_per_turn"])
    figures = rounds[len(rounds) // 2]
    if options.rounds > 1:
        spent = [str(figures["sessions.cpu_us_per_turn"]) for figures in rounds]
        figures["sessions.cpu_us_per_turn_rounds"] = " / ".join(spent)
    if options.tracked:
        emit({"gc.tracked_objects_per_kept_turn": figures["gc.tracked_objects_per_kept_turn"]})
        return
    if options.memory:
        held = "store_bytes_per_session" if options.store else "rss_bytes_per_session"
        emit({f"sessions.{held}_{options.turns}_turns": figures[f"sessions.{held}"]})
        return
    emit(
        {
            options.prefix + name.removeprefix("sessions."): value
            for name, value in figures.items()
            if name.startswith("sessions.")
        }
    )


if __name__ == "__main__":
    main()
