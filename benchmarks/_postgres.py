"""Sessions on PostgreSQL across hosts (issue 27), on a throwaway server the bench starts.

``pg.hosts_4_sessions_1000_turns_per_s``: 1,000 sessions split over 4 host processes on one
database, 5 turns each (a user message, one tool call, its result, an answer: two commits a
turn), all at once; ``sqlite.hosts_1_sessions_1000_turns_per_s`` is the same workload on one
host and an SQLite file. ``pg.cross_host_cancel_ms_p99``: from another host's
``request_cancel`` to the holder's tool seeing its cancellation; ``..._complete_ms_p99``:
from another host's ``complete_token`` to the holder's deferred call being completed (both
through NOTIFY, the holder's poll period left at 0.5 s). ``pg.failover_seconds``: from
SIGKILL of a host holding 50 sessions (leases of 2 s, on "another machine") to all of them
resumed on this one, and ``pg.turns_lost`` the committed turns missing then.
``pg.takeover_seconds_paused_holder`` (``--paused-holder``, a job of its own): from SIGSTOP of a
host holding a session's commit open (its row locked; leases of 2 s) to this host resuming it.
``pg.bytes_per_session_40_turns`` beside ``sqlite.bytes_per_session_40_turns``: what 40
turns of a session take in each store (tables and indexes; the SQLite file).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import asyncpg

from agentos import AgentConfig
from agentos import Disposition
from agentos import Host
from agentos import ModelRequest
from agentos import PostgresStore
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import Session
from agentos import SessionInUseError
from agentos import SqliteStore
from agentos import ToolContext
from agentos import ToolPolicy
from agentos import YieldOnTimeout
from agentos import open_store
from agentos import tool
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import text
from agentos.testing import tool_calls
from benchmarks._common import Empty
from benchmarks._common import Figures
from benchmarks._common import emit
from benchmarks._common import percentile
from benchmarks._common import quiet_logs

ROOT = Path(__file__).resolve().parent.parent
TURNS = 5
FAILOVER_SESSIONS = 50
FAILOVER_LEASE_EXPIRY = 2.0
SAMPLES = 60
CONFIG = AgentConfig(
    policy=ToolPolicy(rules={"approve": Disposition.DEFER}),
    async_yield_strategy=YieldOnTimeout(milliseconds=1),
)


@tool
async def work(args: Empty) -> int:
    """Returns at once."""
    return 7


@tool
async def approve(args: Empty) -> str:
    """Deferred: a human (another host) completes it."""
    return "never"


def script() -> ScriptedProvider:
    """A turn asks for ``work``, "hold" and "ask" for those calls; a result gets an answer."""

    def asked(request: ModelRequest) -> Any:
        words = last_user_text(request)
        if words.startswith("turn"):
            return tool_calls(("work", {}))
        if words in ("hold", "ask"):
            return tool_calls(("hold" if words == "hold" else "approve", {}))
        return text("noted")  # a call's outcome, told later

    return ScriptedProvider(
        (lambda r: bool(last_tool_results(r)), lambda r: text("done")),
        (lambda r: True, asked),
    )


# ------------------------------------------------------------------ throughput


async def host_turns(address: str, sessions: int, prefix: str) -> None:
    """A host process of the throughput run: ``ready``, then on a line from stdin the turns."""
    quiet_logs()
    async with (
        await open_store(address) as store,
        Runtime([work]) as runtime,
        Host(runtime, script(), store=store) as host,
    ):
        made = [await host.create_session(session_id=f"{prefix}{n}") for n in range(sessions)]
        print("ready", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.readline)
        start = time.time()

        async def talk(session: Session) -> None:
            for turn in range(TURNS):
                session.post(f"turn {turn}")
                await session.wait_idle()

        async with anyio.create_task_group() as group:
            for session in made:
                group.start_soon(talk, session)
        end = time.time()
        print(json.dumps({"turns": sessions * TURNS, "start": start, "end": end}), flush=True)


def turns_per_second(address: str, hosts: int, sessions: int) -> float:
    """Start ``hosts`` host processes sharing ``sessions``; all turns over the wall time."""
    each = sessions // hosts
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "benchmarks._postgres",
                "--turns-host",
                address,
                "--sessions",
                str(each),
                "--prefix",
                f"h{n}-",
            ],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(hosts)
    ]
    try:
        for child in children:
            assert child.stdout is not None and child.stdout.readline() == "ready\n"
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        reports = [
            json.loads(child.communicate(timeout=600)[0].splitlines()[-1]) for child in children
        ]
    finally:
        for child in children:
            child.kill()
    elapsed = max(r["end"] for r in reports) - min(r["start"] for r in reports)
    return float(sum(r["turns"] for r in reports) / elapsed)


# ------------------------------------------------------------- across hosts


async def cross_host(dsn: str) -> Figures:
    """Cancel and complete latencies from one host's store to another host holding calls."""
    cancelled: dict[str, float] = {}
    heard = anyio.Event()

    @tool
    async def hold(args: Empty, ctx: ToolContext) -> None:
        """Waits until cancelled, noting when."""
        try:
            await anyio.sleep_forever()
        finally:
            cancelled[ctx.call_id] = time.perf_counter()
            heard.set()

    async with (
        await PostgresStore.open(dsn) as store,
        await PostgresStore.open(dsn) as other,
        Runtime([hold, work, approve]) as runtime,
        Host(runtime, script(), store=store) as holder,
    ):
        holding = await holder.create_session(CONFIG, session_id="holding")
        asking = await holder.create_session(CONFIG, session_id="asking")
        cancels, completes = [], []
        for _ in range(SAMPLES):
            holding.post("hold")
            await holding.wait_idle()
            (call,) = holding.outstanding()
            heard = anyio.Event()
            start = time.perf_counter()
            await other.request_cancel(call.call_id, "holding", "bench")
            with anyio.fail_after(10):
                await heard.wait()
            cancels.append((cancelled[call.call_id] - start) * 1e3)
            await holding.wait_idle()

            asking.post("ask")
            await asking.wait_idle()
            (deferred,) = [c for c in asking.outstanding() if c.tool_name == "approve"]
            (token,) = [t for t in await other.tokens_of("asking") if t.call_id == deferred.call_id]
            start = time.perf_counter()
            await other.complete_token(token.token, "yes")
            await runtime.wait(deferred.call_id, 10)
            completes.append((time.perf_counter() - start) * 1e3)
            await asking.wait_idle()
    return {
        "pg.cross_host_cancel_ms_p50": round(percentile(cancels, 0.5), 2),
        "pg.cross_host_cancel_ms_p99": round(percentile(cancels, 0.99), 2),
        "pg.cross_host_complete_ms_p50": round(percentile(completes, 0.5), 2),
        "pg.cross_host_complete_ms_p99": round(percentile(completes, 0.99), 2),
    }


# ------------------------------------------------------------------ failover


async def failing_host(dsn: str) -> None:
    """The host that is killed: it holds sessions with committed turns, on another machine."""
    quiet_logs()
    socket.gethostname = lambda: "another-machine"
    async with (
        await PostgresStore.open(dsn) as store,
        Runtime([work]) as runtime,
        Host(
            runtime, script(), store=store, lease_period=0.5, lease_expiry=FAILOVER_LEASE_EXPIRY
        ) as host,
    ):
        for n in range(FAILOVER_SESSIONS):
            session = await host.create_session(session_id=f"f{n}")
            for turn in range(2):
                session.post(f"turn {turn}")
                await session.wait_idle()
        print(json.dumps({"turns": FAILOVER_SESSIONS * 2}), flush=True)
        await anyio.sleep_forever()


async def failover(dsn: str) -> Figures:
    program = [sys.executable, "-m", "benchmarks._postgres", "--failing-host", dsn]
    async with await anyio.open_process(program, cwd=ROOT) as child:
        assert child.stdout is not None
        committed = json.loads(await child.stdout.receive())["turns"]
        killed = time.perf_counter()
        child.send_signal(signal.SIGKILL)
        await child.wait()
    async with (
        await PostgresStore.open(dsn) as store,
        Runtime([work]) as runtime,
        Host(runtime, script(), store=store) as host,
    ):
        left = [f"f{n}" for n in range(FAILOVER_SESSIONS)]
        while left:
            try:
                await host.resume(left[0])
            except SessionInUseError:
                await anyio.sleep(0.02)  # the bench's own wait for the lease: what it measures
            else:
                left.pop(0)
        seconds = time.perf_counter() - killed
        found = 0
        for n in range(FAILOVER_SESSIONS):
            stored = await store.load_session(f"f{n}")
            assert stored is not None
            found += sum(
                1
                for message in stored.history
                if message["role"] == "user"
                and any(b.get("type") == "text" for b in message["content"])
            )
    return {
        "pg.failover_seconds": round(seconds, 2),
        "pg.failover_lease_expiry_seconds": FAILOVER_LEASE_EXPIRY,
        "pg.turns_lost": committed - found,
    }


# ------------------------------------------------------------- paused holder


async def paused_holder(dsn: str) -> Figures:
    """SIGSTOP the holder while its turn's commit is open; resume its session here."""
    from tests.support.pg_stalled_host import LEASE_EXPIRY

    program = [sys.executable, "-m", "tests.support.pg_stalled_host", dsn]
    async with await anyio.open_process(program, cwd=ROOT) as child:
        assert child.stdout is not None and child.stdin is not None
        assert (await child.stdout.receive()).startswith(b"open")
        child.send_signal(signal.SIGSTOP)
        paused = time.perf_counter()
        try:
            async with (
                await PostgresStore.open(dsn) as store,
                Runtime([]) as runtime,
                Host(runtime, script(), store=store) as host,
            ):
                with anyio.fail_after(60):
                    while True:
                        try:
                            await host.resume("s")
                        except SessionInUseError:
                            await anyio.sleep(0.02)  # the bench's own wait: what it measures
                        else:
                            break
                seconds = time.perf_counter() - paused
        finally:
            child.send_signal(signal.SIGCONT)
        await child.stdin.send(b"go\n")
        with anyio.fail_after(60):
            await child.wait()
    return {
        "pg.takeover_seconds_paused_holder": round(seconds, 2),
        "pg.takeover_lease_expiry_seconds": LEASE_EXPIRY,
    }


# ------------------------------------------------------------------- storage


async def forty_turns(address: str, sessions: int) -> None:
    async with (
        await open_store(address) as store,
        Runtime([work]) as runtime,
        Host(runtime, script(), store=store) as host,
    ):
        for n in range(sessions):
            session = await host.create_session(session_id=f"b{n}")
            for turn in range(40):
                session.post(f"turn {turn}: what is the state of the world today?")
                await session.wait_idle()


async def storage(dsn: str) -> Figures:
    sessions = 20
    connection = await asyncpg.connect(dsn)
    size = "SELECT sum(pg_total_relation_size(relid)) FROM pg_stat_user_tables"
    try:
        await forty_turns(dsn, 0)  # the schema, before measuring
        await connection.execute("VACUUM")
        before = await connection.fetchval(size)
        await forty_turns(dsn, sessions)
        await connection.execute("VACUUM")
        after = await connection.fetchval(size)
    finally:
        await connection.close()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "agentos.db"
        await forty_turns(str(path), 0)
        empty = path.stat().st_size
        await forty_turns(str(path), sessions)
        async with await SqliteStore.open(path):
            pass  # closing checkpoints the write-ahead log into the file
        full = path.stat().st_size + sum(p.stat().st_size for p in path.parent.glob("agentos.db-*"))
    pg, sqlite = float(after - before) / sessions, (full - empty) / sessions
    return {
        "pg.bytes_per_session_40_turns": round(pg),
        "sqlite.bytes_per_session_40_turns": round(sqlite),
        "pg.bytes_ratio_vs_sqlite": round(pg / sqlite, 2),
    }


# ---------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns-host", metavar="ADDRESS")
    parser.add_argument("--failing-host", metavar="DSN")
    parser.add_argument("--paused-holder", action="store_true")
    parser.add_argument("--sessions", type=int, default=0)
    parser.add_argument("--prefix", default="s")
    arguments = parser.parse_args()
    if arguments.turns_host:
        anyio.run(host_turns, arguments.turns_host, arguments.sessions, arguments.prefix)
        return
    if arguments.failing_host:
        anyio.run(failing_host, arguments.failing_host)
        return
    quiet_logs()
    sys.path.insert(0, str(ROOT))
    from tests.support.postgres import HOW
    from tests.support.postgres import postgres_cluster
    from tests.support.postgres import server_available

    if not server_available():
        emit({"pg.skipped": HOW})
        return
    figures: Figures = {}
    with postgres_cluster() as cluster:
        if arguments.paused_holder:
            emit(anyio.run(paused_holder, cluster.database()))
            return
        figures["pg.hosts_4_sessions_1000_turns_per_s"] = round(
            turns_per_second(cluster.database(), 4, 1000)
        )
        with tempfile.TemporaryDirectory() as folder:
            figures["sqlite.hosts_1_sessions_1000_turns_per_s"] = round(
                turns_per_second(str(Path(folder) / "agentos.db"), 1, 1000)
            )
        figures |= anyio.run(cross_host, cluster.database())
        figures |= anyio.run(failover, cluster.database())
        figures |= anyio.run(storage, cluster.database())
    emit(figures)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONPATH", str(ROOT))
    main()
