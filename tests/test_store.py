"""The SQLite store: migrations, atomic turns, tokens, and every bad-database case."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentos import (
    CancelRequest,
    Completion,
    Message,
    MirroredCall,
    SqliteStore,
    StoredSession,
    StoredToken,
    StoreError,
    TurnCommit,
)

pytestmark = pytest.mark.anyio


def session(session_id: str = "s1", history: tuple[Message, ...] = ()) -> StoredSession:
    return StoredSession(session_id, {"model": "m"}, "idle", 1.0, 1.0, history=history)


def token(name: str = "tok", expires_at: float | None = None) -> StoredToken:
    return StoredToken(name, "s1", "call-1", "toolu_1", "approve", {"x": 1}, 1.0, expires_at)


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


async def test_sessions_round_trip_and_turns_replace_the_tail(tmp_path: Path) -> None:
    first: Message = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    async with await SqliteStore.open(tmp_path / "a.db", clock=lambda: 5.0) as store:
        await store.create_session(session(history=(first,)))
        merged: Message = {
            "role": "user",
            "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "again"}],
        }
        answer: Message = {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}
        await store.commit_turn(TurnCommit("s1", status="idle", keep=0, messages=(merged, answer)))
        loaded = await store.load_session("s1")
        assert loaded is not None
        assert loaded.history == (merged, answer)
        assert loaded.updated_at == 5.0
        assert [s.session_id for s in await store.list_sessions()] == ["s1"]
        assert await store.load_session("nope") is None
        with pytest.raises(StoreError, match="no session 'ghost'"):
            await store.commit_turn(TurnCommit("ghost", status="idle", keep=0, messages=()))


async def test_tokens_complete_once(tmp_path: Path) -> None:
    now = [10.0]
    async with await SqliteStore.open(tmp_path / "a.db", clock=lambda: now[0]) as store:
        await store.add_token(token("live"))
        await store.add_token(token("short", expires_at=20.0))
        assert await store.complete_token("live", {"ok": True}) is Completion.APPLIED
        assert await store.complete_token("live", {"ok": False}) is Completion.ALREADY_COMPLETED
        assert await store.complete_token("missing") is Completion.UNKNOWN
        stored = await store.get_token("live")
        assert stored is not None
        assert (stored.result, stored.completed_at) == ({"ok": True}, 10.0)
        now[0] = 20.0
        assert await store.complete_token("short", 1) is Completion.EXPIRED
        short = await store.get_token("short")
        assert short is not None and short.expired
        assert short.expiry_text == "expired: nobody completed it within 19 s"
        assert not any(t.expired for t in await store.tokens_of("s1") if t.token == "live")
        assert await store.delete_expired_tokens(grace=5) == 0, "kept a while after expiry"
        now[0] = 25.0
        assert await store.delete_expired_tokens(grace=5) == 1
        assert await store.complete_token("short", 1) is Completion.UNKNOWN, "deleted now"
        assert [t.token for t in await store.tokens_of("s1")] == ["live"]


async def test_a_corrupt_file_is_named_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "broken.db"
    garbage = b"this is not sqlite" * 100
    path.write_bytes(garbage)
    with pytest.raises(StoreError) as error:
        await SqliteStore.open(path)
    assert str(path) in str(error.value)
    assert "corrupt or not an SQLite file" in str(error.value)
    assert path.read_bytes() == garbage


async def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    await (await SqliteStore.open(path)).close()
    with sqlite3.connect(path) as db:
        newer = "SELECT MAX(version) + 1, 0 FROM schema_migrations"
        db.execute(f"INSERT INTO schema_migrations {newer}")
    with pytest.raises(StoreError, match="newer than this agentos knows"):
        await SqliteStore.open(path)


async def test_another_writer_holding_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "busy.db"
    await (await SqliteStore.open(path)).close()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match="locked by another writer"):
            await SqliteStore.open(path)
    finally:
        other.execute("ROLLBACK")
        other.close()


async def test_an_unwritable_location(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="choose a writable location"):
        await SqliteStore.open(Path("/proc/agentos-test/agentos.db"))


async def test_someone_elses_database(tmp_path: Path) -> None:
    path = tmp_path / "theirs.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE invoices (id INTEGER)")
    with pytest.raises(StoreError, match="tables that are not agentos's"):
        await SqliteStore.open(path)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT name FROM sqlite_master").fetchall() == [("invoices",)]


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


TEXT = st.text(max_size=30)
BLOCK = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}),
    st.fixed_dictionaries(
        {
            "type": st.just("tool_use"),
            "id": st.from_regex(r"toolu_[a-z0-9]{1,8}", fullmatch=True),
            "name": st.sampled_from(["a", "b"]),
            "input": st.dictionaries(st.text(max_size=5), st.integers() | TEXT, max_size=3),
        }
    ),
    st.fixed_dictionaries(
        {"type": st.just("tool_result"), "tool_use_id": TEXT, "content": TEXT},
        optional={"is_error": st.booleans()},
    ),
)
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant"]), "content": st.lists(BLOCK, max_size=4)}
)
STATUS = st.sampled_from(["idle", "requesting", "waiting", "stopped", "pending", "orphaned"])


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(turns=st.lists(st.tuples(st.lists(MESSAGE, max_size=3), STATUS), min_size=1, max_size=4))
def test_every_turn_and_status_round_trips(
    tmp_path: Path, turns: list[tuple[list[Any], str]]
) -> None:
    async def main() -> None:
        path = tmp_path / f"rt-{id(turns)}.db"
        path.unlink(missing_ok=True)
        async with await SqliteStore.open(path) as store:
            await store.create_session(session())
            history: list[Any] = []
            for messages, status in turns:
                keep = max(0, len(history) - 1)
                history = history[:keep] + messages
                await store.commit_turn(TurnCommit("s1", status, keep, tuple(messages)))
        async with await SqliteStore.open(path) as store:
            loaded = await store.load_session("s1")
        assert loaded is not None
        assert list(loaded.history) == history
        assert loaded.status == turns[-1][1]

    anyio.run(main)


def said(text: str) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


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


async def test_a_bad_turn_in_a_group_fails_alone(tmp_path: Path) -> None:
    outcomes: dict[str, str] = {}
    async with await SqliteStore.open(tmp_path / "a.db") as store:
        await store.create_session(session("a"))
        await store.create_session(session("b"))

        async def commit(name: str) -> None:
            try:
                await store.commit_turn(TurnCommit(name, "idle", 0, (said(name),)))
            except StoreError as error:
                outcomes[name] = str(error)
            else:
                outcomes[name] = "ok"

        async with anyio.create_task_group() as group:
            for name in ("a", "ghost", "b"):
                group.start_soon(commit, name)
        for name in ("a", "b"):
            loaded = await store.load_session(name)
            assert loaded is not None and loaded.history == (said(name),)
    assert outcomes["a"] == outcomes["b"] == "ok"
    assert outcomes["ghost"].startswith("no session 'ghost'")


async def test_a_writer_cancelled_mid_transaction_rolls_back_and_the_others_are_written(
    tmp_path: Path,
) -> None:
    inside, release = threading.Event(), threading.Event()

    def trace(sql: str) -> None:
        if sql.startswith("INSERT INTO messages") and not inside.is_set():
            inside.set()
            release.wait(5)

    writer = anyio.CancelScope()
    done: list[str] = []
    async with await SqliteStore.open(tmp_path / "a.db") as store:
        await store.create_session(session("a"))
        await store.create_session(session("b"))
        await store._db.set_trace_callback(trace)

        async def commit(name: str) -> None:
            with writer if name == "a" else anyio.CancelScope():
                await store.commit_turn(TurnCommit(name, "idle", 0, (said(name),)))
                done.append(name)

        async with anyio.create_task_group() as group:
            group.start_soon(commit, "a")  # takes the writer, and b's turn with its own
            group.start_soon(commit, "b")
            await anyio.to_thread.run_sync(inside.wait, 5)
            writer.cancel()
            release.set()
        assert done == ["b"]
        a, b = await store.load_session("a"), await store.load_session("b")
        assert a is not None and a.history == ()
        assert b is not None and b.history == (said("b"),)
        await store.commit_turn(TurnCommit("a", status="idle", keep=0, messages=(said("a again"),)))
        a = await store.load_session("a")
        assert a is not None and a.history == (said("a again"),)


def mirrored(call_id: str, status: str = "running", **fields: Any) -> MirroredCall:
    values: dict[str, Any] = {
        "session_id": "s1",
        "provider_call_id": f"toolu_{call_id}",
        "tool_name": "slow",
        "tool_input": {"n": 1},
        "created_at": 1.0,
        "updated_at": 2.0,
        "holder": "me",
    }
    return MirroredCall(call_id, status=status, **(values | fields))


async def test_the_calls_mirror_round_trips_and_counts(tmp_path: Path) -> None:
    """Issue 11: rows replace the earlier row of the same call; they are found by either id,
    narrowed by session; counts are per session and status, of the holder's rows."""
    async with await SqliteStore.open(tmp_path / "a.db") as store:
        for name in ("s1", "s2"):
            await store.create_session(session(name))
            await store.acquire_lease(name, "me", ttl=60)
        assert await store.mirrored_calls() == []
        first = mirrored("c1", progress={"percent": 20}, progress_count=2)
        deferred = mirrored("c2", "pending", deferred=True)
        await store.mirror_calls([first, deferred])
        done = mirrored("c1", "cancelled", cancel_reason="stalled", ended_at=3.0)
        other = mirrored("c3", "completed", session_id="s2", result={"ok": [1, 2]})
        await store.mirror_calls([done, other])
        assert await store.mirrored_calls(session_id="s1") == [done, deferred]
        assert await store.mirrored_calls(call_id="toolu_c3") == [other]
        assert await store.mirrored_calls(call_id="c3", session_id="s1") == []
        assert await store.mirrored_calls(call_id="c1") == [done]
        assert await store.call_counts() == {
            "s1": {"cancelled": 1, "pending": 1},
            "s2": {"completed": 1},
        }
        await store.acquire_lease("s2", "them", ttl=60, steal=True)
        assert await store.call_counts() == {"s1": {"cancelled": 1, "pending": 1}}, (
            "what the previous holder wrote does not count"
        )


async def test_cancel_requests_reach_the_holder_and_keep_its_answer(tmp_path: Path) -> None:
    """Issue 11: a request is pending for the host holding its session only; an answer lands
    with the mirror's rows, and only on the request it answers (not on a newer one)."""
    now = [10.0]
    async with await SqliteStore.open(tmp_path / "a.db", clock=lambda: now[0]) as store:
        for name in ("s1", "s2"):
            await store.create_session(session(name))
        await store.acquire_lease("s1", "me", ttl=60)
        await store.acquire_lease("s2", "them", ttl=60)
        assert await store.live_leases() == {"s1": "me", "s2": "them"}
        request = await store.request_cancel("c1", "s1", "stalled")
        await store.request_cancel("c9", "s2", "theirs")
        assert request == CancelRequest("c1", "s1", "stalled", 10.0)
        assert await store.pending_cancels("me") == [request]
        assert await store.pending_cancels("nobody") == []
        answer: dict[str, Any] = {"cancelled": True, "found": True}
        answered = CancelRequest("c1", "s1", "stalled", 10.0, 11.0, answer)
        await store.mirror_calls([mirrored("c1", "cancelled")], [answered])
        assert await store.cancel_request("c1") == answered
        assert await store.pending_cancels("me") == []
        now[0] = 12.0
        again = await store.request_cancel("c1", "s1", "really")
        await store.mirror_calls([], [answered])  # a late answer to the earlier request
        assert await store.cancel_request("c1") == again, "the newer request waits still"
        assert await store.cancel_request("c0") is None
        now[0] = 100.0
        assert await store.live_leases() == {}, "expired"


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
