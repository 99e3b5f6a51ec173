"""Issue 9, the store's faults: two hosts on one session, file modes, runner replies, a
database file replaced under a running host."""

from __future__ import annotations

import os
import sqlite3
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel

from agentos import (
    CallStatus,
    Host,
    LocalProcessRunner,
    ManualClock,
    Runtime,
    ScriptedProvider,
    Session,
    SqliteStore,
    StoredSession,
    StoreError,
    tool,
)
from agentos._provider import last_user_text, text
from agentos._sqlite_store import default_path

pytestmark = pytest.mark.anyio


def echo() -> ScriptedProvider:
    return ScriptedProvider((lambda r: True, lambda r: text(f"heard {last_user_text(r)}")))


@asynccontextmanager
async def host_on(path: Path, clock: ManualClock | None = None) -> AsyncIterator[Host]:
    """A host with its own runtime and its own connection to the database at ``path``."""
    clock = clock or ManualClock()
    async with AsyncExitStack() as stack:
        store = await stack.enter_async_context(await SqliteStore.open(path, clock=clock.wall))
        runtime = await stack.enter_async_context(Runtime([], clock=clock))
        yield await stack.enter_async_context(Host(runtime, echo(), store=store))


async def say(session: Session, words: str) -> None:
    session.post(words)
    with anyio.fail_after(10):
        await session.wait_idle()


def test_the_default_database_is_private(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Issue 9 item 12a: the database agentos creates is 0600 (its -wal and -shm too) in
    folders it creates 0700, whatever the umask; what exists is left as it is."""
    path = tmp_path / "new" / "deeper" / "agentos.db"
    monkeypatch.setenv("AGENTOS_DB", str(path))
    existing = stat.S_IMODE(tmp_path.stat().st_mode)

    async def write() -> dict[str, int]:
        async with await SqliteStore.open() as store:
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
    assert default_path() == path
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
        "reply = json.loads(envelope['input']['reply'])\n"
        "print(json.dumps({'token': envelope['token'], **reply}))\n"
    )
    async with Runtime([remote]) as runtime:
        runtime.add_runner("local", LocalProcessRunner([sys.executable, str(script)]))
        call = runtime.submit("remote", {"reply": reply}, runner="local")
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
    async with host_on(path) as host:
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
