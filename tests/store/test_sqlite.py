"""The SQLite store's own cases: its file (WAL, corrupt, locked, unwritable, the default
path) and its one-writer group commit; what every backend does is in test_backends.py."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import anyio
import pytest

from agentos import SqliteStore
from agentos import StoreError
from agentos.stores import TurnCommit
from tests.store.conftest import said
from tests.store.conftest import session

pytestmark = pytest.mark.anyio


async def test_migrations_run_once_and_the_journal_is_wal(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    for _ in range(2):
        store = await SqliteStore.open(path)
        await store.close()
    with sqlite3.connect(path) as db:
        versions = db.execute("SELECT version FROM schema_migrations").fetchall()
        mode = db.execute("PRAGMA journal_mode").fetchone()
    assert versions == [(v,) for v in range(1, len(versions) + 1)], "each once, in order"
    assert len(versions) >= 2
    assert mode == ("wal",)


async def test_a_corrupt_file_is_named_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "broken.db"
    garbage = b"this is not sqlite" * 100
    path.write_bytes(garbage)
    with pytest.raises(StoreError) as error:
        await SqliteStore.open(path)
    assert str(path) in str(error.value)
    assert "corrupt or not an SQLite file" in str(error.value)
    assert path.read_bytes() == garbage


async def test_another_writer_holding_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "busy.db"
    await (await SqliteStore.open(path)).close()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match="locked by another writer"):
            await SqliteStore.open(path, busy_timeout=0.05)
    finally:
        other.execute("ROLLBACK")
        other.close()


async def test_a_writer_busy_for_seconds_is_waited_out(tmp_path: Path) -> None:
    """A second process opening the file while the first migrates it (seconds on a loaded
    machine) waits for the lock instead of failing."""
    path = tmp_path / "busy.db"
    await (await SqliteStore.open(path)).close()
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN EXCLUSIVE")
    held = threading.Timer(2.5, lambda: other.execute("ROLLBACK"))
    held.start()
    try:
        await (await SqliteStore.open(path)).close()
    finally:
        held.join()
        other.close()


async def test_an_unwritable_location(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="choose a writable location"):
        await SqliteStore.open(Path("/proc/agentos-test/agentos.db"))


async def test_the_default_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTOS_DB", str(tmp_path / "x.db"))
    async with await SqliteStore.open() as store:
        assert store.path == tmp_path / "x.db"
    monkeypatch.delenv("AGENTOS_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # the user's data directory
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # where macOS keeps it
    async with await SqliteStore.open() as store:
        assert store.path.name == "agentos.db"
        assert store.path.is_relative_to(tmp_path)


async def test_turns_waiting_together_share_a_transaction(tmp_path: Path) -> None:
    begun: list[str] = []
    async with await SqliteStore.open(tmp_path / "a.db") as store:
        names = [f"s{number}" for number in range(20)]
        for name in names:
            await store.create_session(session(name))
        await store._db.set_trace_callback(
            lambda sql: begun.append(sql) if sql.startswith("BEGIN") else None
        )
        async with anyio.create_task_group() as group:
            for name in names:
                group.start_soon(
                    lambda name: store.commit_turn(TurnCommit(name, "idle", 0, (said(name),))),
                    name,
                )
        for name in names:
            loaded = await store.load_session(name)
            assert loaded is not None and loaded.history == (said(name),)
    assert 1 <= len(begun) <= 2  # the first alone (maybe), then everyone who waited for it


async def test_a_writer_cancelled_mid_transaction_still_writes_the_batch_once(
    tmp_path: Path,
) -> None:
    """The task writing a group commit writes other sessions' turns too, so a cancel that
    reaches it mid-transaction waits for the batch: every turn is written once, at the
    version it names, and each session's next write goes on from there."""
    inside, release = threading.Event(), threading.Event()

    def trace(sql: str) -> None:
        if sql.startswith("INSERT INTO messages") and not inside.is_set():
            inside.set()
            release.wait(5)

    writer = anyio.CancelScope()
    done: list[str] = []
    async with await SqliteStore.open(tmp_path / "a.db") as store:
        versions: dict[str, int] = {}
        for name in ("a", "b"):
            await store.create_session(session(name))
            taken = await store.acquire_lease(name, "me", ttl=60)
            assert taken is not None
            versions[name] = taken
        await store._db.set_trace_callback(trace)

        async def commit(name: str) -> None:
            with writer if name == "a" else anyio.CancelScope():
                await store.commit_turn(TurnCommit(name, "idle", 0, (said(name),), versions[name]))
                done.append(name)

        async with anyio.create_task_group() as group:
            group.start_soon(commit, "a")  # takes the writer, and b's turn with its own
            group.start_soon(commit, "b")
            await anyio.to_thread.run_sync(inside.wait, 5)
            writer.cancel()
            release.set()
        assert sorted(done) == ["a", "b"]
        for name in ("a", "b"):
            stored = await store.load_session(name)
            assert stored is not None and stored.history == (said(name),)
            assert stored.version == versions[name] + 1, "written once"
            again = TurnCommit(name, "idle", 0, (said(f"{name} again"),), versions[name] + 1)
            await store.commit_turn(again)


async def test_the_store_speaks_no_front_ends_language(tmp_path: Path) -> None:
    """The store says another file would do; naming how (a flag, a variable) is the CLI's."""
    (tmp_path / "a-file").write_text("")
    with pytest.raises(StoreError) as raised:
        await SqliteStore.open(tmp_path / "a-file" / "agentos.db")
    assert "choose a writable location" in str(raised.value)
    assert "--db" not in str(raised.value) and "AGENTOS_DB" not in str(raised.value)
    assert raised.value.other_file_helps
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"not a database" * 100)
    with pytest.raises(StoreError) as raised:
        await SqliteStore.open(corrupt)
    assert not raised.value.other_file_helps
