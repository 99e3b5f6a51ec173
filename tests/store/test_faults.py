"""Issue 9, the store's faults: two hosts on one session, file modes, runner replies, a
database file replaced under a running host."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel

from agentos import AgentConfig
from agentos import CallOptions
from agentos import CallStatus
from agentos import Host
from agentos import LocalProcessRunner
from agentos import ManualClock
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import SessionInUseError
from agentos import SessionStatus
from agentos import SqliteStore
from agentos import StoreError
from agentos import YieldOnTimeout
from agentos import tool
from agentos.stores import StoredSession
from agentos.testing import Puppet
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from tests.support import ROOT
from tests.support.backends import Backend
from tests.support.backends import echo
from tests.support.backends import host_on
from tests.support.backends import say
from tests.support.backends import stored_texts
from tests.support.cli import agentos

pytestmark = pytest.mark.anyio


class Watched(SqliteStore):
    """A store that tells the test when a host has renewed its leases."""

    _renewed: anyio.Event | None = None
    _lost: dict[str, str | None] | None = None

    async def renew_leases(
        self, holder: str, session_ids: Sequence[str], *, ttl: float
    ) -> dict[str, str | None]:
        self._lost = await super().renew_leases(holder, session_ids, ttl=ttl)
        if self._renewed is not None:
            self._renewed.set()
        return self._lost

    async def renewal(self, advance: Callable[[float], None], seconds: float) -> object:
        """Advance the clock; what the renewal that follows found lost."""
        self._renewed = anyio.Event()
        advance(seconds)
        with anyio.fail_after(10):
            await self._renewed.wait()
        return self._lost


async def test_the_heartbeat_keeps_the_lease_and_notices_a_takeover(tmp_path: Path) -> None:
    """Issue 9 item 10: a host renews its leases every period of its clock, so a live
    holder keeps its session past the first expiry; the renewal that finds the session
    taken over stops it before it writes anything."""
    path = tmp_path / "agentos.db"
    puppet = Puppet()
    config = AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=1))
    provider = ScriptedProvider(
        (lambda r: "work" in last_user_text(r), lambda r: tool_calls(("puppet", {}))),
        (lambda r: True, lambda r: text("noted")),
    )
    clock = ManualClock()
    async with (
        await Watched.open(path, clock=clock.wall) as store,
        Runtime([puppet.tool], clock=clock) as runtime,
        Host(runtime, provider, store=store, lease_period=5, lease_expiry=15) as first,
    ):
        session = await first.create_session(config, session_id="s")
        session.post("work")
        with anyio.fail_after(10):
            while not (session.outstanding() and session.idle):
                clock.advance(0.001)  # the 1 ms yield deadline, on the runtime's clock
                await settle(runtime)
        for _ in range(4):  # 20 s: the first lease (15 s) would have lapsed
            await store.renewal(clock.advance, 5)
        async with host_on(Backend("sqlite", str(path)), ManualClock(clock.wall() + 14)) as second:
            with pytest.raises(SessionInUseError):
                await second.resume("s")
            await second.resume("s", steal=True)
            assert await store.renewal(clock.advance, 5) == {"s": second.holder}
        with anyio.fail_after(10):
            await session.wait_settled()  # a running call holds it until it stops
        assert session.status is SessionStatus.STOPPED
        assert f"taken over by {second.holder}" in session.errors[-1]


async def test_a_host_cancelled_while_open_still_gives_its_leases_up(tmp_path: Path) -> None:
    """A host closed by cancellation releases its leases shielded on the way out, so the
    next host (in this very process, whose leases count as live) loads without a steal."""
    path = tmp_path / "agentos.db"
    clock = ManualClock()
    async with (
        await SqliteStore.open(path, clock=clock.wall) as store,
        Runtime([], clock=clock) as runtime,
    ):
        with anyio.CancelScope() as scope:
            async with Host(runtime, echo(), store=store) as host:
                await say(await host.create_session(session_id="s"), "one")
                scope.cancel()
                await anyio.sleep_forever()
        assert scope.cancelled_caught
        assert await store.acquire_lease("s", "the next host", ttl=15) is not None


BACK_BEFORE_LEASES = """
    DROP TABLE leases; DROP TABLE calls; DROP TABLE cancel_requests; DROP TABLE a2a_tasks;
    ALTER TABLE sessions DROP COLUMN version; ALTER TABLE sessions DROP COLUMN board;
    ALTER TABLE sessions DROP COLUMN usage; ALTER TABLE sessions DROP COLUMN title;
    ALTER TABLE sessions DROP COLUMN first_words;
    DELETE FROM schema_migrations WHERE version > 1;
"""
"""A file of today taken back to schema version 1, as a file written before leases holds it."""


async def test_a_database_from_before_leases_is_migrated(tmp_path: Path) -> None:
    """Issue 9 item 10: the lease and the version come in a migration of their own, so a
    file written before them opens, and its sessions resume and take leases."""
    path = tmp_path / "agentos.db"
    async with await SqliteStore.open(path) as store:
        await store.create_session(StoredSession("old", {}, "idle", 1.0, 1.0))
    with sqlite3.connect(path) as db:
        db.executescript(BACK_BEFORE_LEASES)
    db.close()
    async with (
        host_on(Backend("sqlite", str(path))) as host,
        host_on(Backend("sqlite", str(path))) as other,
    ):
        await say(await host.resume("old"), "still here")
        with pytest.raises(SessionInUseError):
            await other.resume("old")
    assert await stored_texts(Backend("sqlite", str(path)), "old") == [
        "still here",
        "heard still here",
    ]


def test_the_cli_refuses_a_live_session_and_a_steal_loses_nothing(
    env: dict[str, str],
    quick_agent: str,
) -> None:
    """Issue 9 item 10: 'resume S --message' while 'run S --wait-for-async' is live in
    another process is refused in one line naming that process; 'resume --steal' takes
    the session, and the first process stops rather than overwrite what it wrote."""
    first = subprocess.Popen(
        [sys.executable, "-m", "agentos.cli", "run", "--agent", quick_agent, "--session-id",
         "S", "--wait-for-async", "Check Jane's calendar (60s)"],
        env=env, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert first.stderr is not None
        while '"event": "started"' not in (line := first.stderr.readline()):
            assert line, "the first process ended before its call started"
        refused = agentos(env, "resume", "S", "--message", "are you there?")
        refused.one_line_error(5, "session 'S' is in use by", f"pid {first.pid} on ", "--steal")
        stolen = agentos(env, "resume", "S", "--steal", "--message", "hello from the second")
        assert stolen.code == 0, stolen
        out, err = first.communicate(timeout=30)
    finally:
        first.kill()
    assert first.returncode == 1, (out, err)
    assert err.splitlines()[-1].startswith("error: the turn ended on an error: store:")
    assert "taken over by" in err.splitlines()[-1]
    shown = agentos(env, "show", "S")
    assert "user: hello from the second" in shown.out
    assert stolen.json["answer"] in shown.out


def test_the_default_database_is_private(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Issue 9 item 12a: the database agentos creates is 0600 (its -wal and -shm too) in
    folders it creates 0700, whatever the umask; what exists is left as it is."""
    path = tmp_path / "new" / "deeper" / "agentos.db"
    monkeypatch.setenv("AGENTOS_DB", str(path))
    existing = stat.S_IMODE(tmp_path.stat().st_mode)

    async def write() -> dict[str, int]:
        async with await SqliteStore.open() as store:
            assert store.path == path
            await store.create_session(StoredSession("s", {}, "idle", 1.0, 1.0))
            return {
                suffix: stat.S_IMODE((await anyio.Path(f"{store.path}{suffix}").stat()).st_mode)
                for suffix in ("", "-wal", "-shm")  # while open: closing removes the last two
            }

    before = os.umask(0o022)
    try:
        modes = anyio.run(write)
    finally:
        os.umask(before)
    assert modes == {"": 0o600, "-wal": 0o600, "-shm": 0o600}
    for folder in (path.parent, path.parent.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert stat.S_IMODE(tmp_path.stat().st_mode) == existing, "a folder we did not make"


class Job(BaseModel):
    reply: str


@tool
async def remote(args: Job) -> None:
    raise AssertionError("an isolated call does not run here")


@pytest.mark.parametrize(
    ("reply", "which"),
    [('{"result": 1, "error": "no"}', "both"), ("{}", "neither")],
)
async def test_an_isolated_reply_carries_exactly_one_of_result_and_error(
    tmp_path: Path, reply: str, which: str
) -> None:
    """Issue 9 item 12b: a runner reply with both result and error, or neither, fails
    the call with a clear message."""
    script = tmp_path / "runner.py"
    script.write_text(
        "import json, sys\n"
        "envelope = json.load(sys.stdin)\n"
        "reply = json.loads(envelope['tool_input']['reply'])\n"
        "print(json.dumps({'token': envelope['token'], **reply}))\n"
    )
    async with Runtime([remote]) as runtime:
        runtime.add_runner("local", LocalProcessRunner([sys.executable, str(script)]))
        call = runtime.submit("remote", {"reply": reply}, options=CallOptions(runner="local"))
        with anyio.fail_after(10):
            snapshot = await runtime.wait(call)
    assert snapshot.status is CallStatus.FAILED
    assert snapshot.error is not None
    assert snapshot.error.message == (
        f"the runner's reply must carry exactly one of 'result' and 'error', not {which}"
    )


@pytest.mark.parametrize("how", ["replaced", "deleted"])
async def test_a_database_replaced_under_a_running_host_stops_writing(
    tmp_path: Path, how: str
) -> None:
    """Issue 9 item 12c: when the database file is deleted or replaced under a running
    host, the next write fails with a clear StoreError (the session records it) instead
    of going to the unlinked file and reporting success; the new file is left alone."""
    path = tmp_path / "agentos.db"
    async with host_on(Backend("sqlite", str(path))) as host:
        session = await host.create_session(session_id="s")
        await say(session, "one")
        if how == "replaced":
            other = tmp_path / "other.db"
            with sqlite3.connect(other) as db:
                db.execute("CREATE TABLE mine (x)")
            os.replace(other, path)
        else:
            path.unlink()
        await say(session, "two")
        assert session.errors, "the turn must not be reported as saved"
        assert f"the database {path} was deleted or replaced" in session.errors[-1]
        with pytest.raises(StoreError, match="deleted or replaced"):
            await host.create_session(session_id="t")
    if how == "replaced":
        with sqlite3.connect(path) as db:
            tables = db.execute("SELECT name FROM sqlite_master").fetchall()
        assert tables == [("mine",)]
    else:
        assert not path.exists()
