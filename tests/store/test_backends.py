"""Issue 27: the store's contract, run once per backend (SQLite and PostgreSQL): records,
migrations, group commit, versions, leases across hosts, the calls' mirror and the news."""

from __future__ import annotations

import os
import signal
import sys
from contextlib import AsyncExitStack
from dataclasses import replace
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentos import Completion
from agentos import Json
from agentos import JsonObject
from agentos import ManualClock
from agentos import PostgresStore
from agentos import SessionConflictError
from agentos import SessionInUseError
from agentos import SessionStatus
from agentos import SqliteStore
from agentos import StoreError
from agentos import open_store
from agentos.stores import ASKING
from agentos.stores import CancelRequest
from agentos.stores import MirroredCall
from agentos.stores import StoredToken
from agentos.stores import TurnCommit
from agentos.turns import Message
from tests.store.conftest import said
from tests.store.conftest import session
from tests.support import ROOT
from tests.support.backends import Backend
from tests.support.backends import host_on
from tests.support.backends import say
from tests.support.backends import stored_texts

pytestmark = pytest.mark.anyio


def token(name: str = "tok", expires_at: float | None = None) -> StoredToken:
    return StoredToken(name, "s1", "call-1", "toolu_1", "approve", {"x": 1}, 1.0, expires_at)


async def test_sessions_round_trip_and_turns_replace_the_tail(backend: Backend) -> None:
    async with await backend.open(clock=lambda: 5.0) as store:
        await store.create_session(session(history=(said("hi"),)))
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
        board: dict[str, Json] = {"nodes": [1, "two", {"three": None}]}
        await store.commit_turn(TurnCommit("s1", "idle", keep=2, messages=(), board=board))
        loaded = await store.load_session("s1")
        assert loaded is not None and loaded.board == board and len(loaded.history) == 2


async def test_tokens_complete_once(backend: Backend) -> None:
    now = [10.0]
    async with await backend.open(clock=lambda: now[0]) as store:
        await store.add_token(token("live"))
        await store.add_token(token("short", expires_at=20.0))
        assert await store.completed_tokens(["live", "short"]) == []
        assert await store.complete_token("live", {"ok": True}) is Completion.APPLIED
        assert await store.complete_token("live", {"ok": False}) is Completion.ALREADY_COMPLETED
        assert await store.complete_token("missing") is Completion.UNKNOWN
        stored = await store.get_token("live")
        assert stored is not None
        assert (stored.result, stored.completed_at) == ({"ok": True}, 10.0)
        assert await store.completed_tokens(["live", "short", "missing"]) == [stored]
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


async def test_migrations_run_once_and_a_newer_schema_is_refused(backend: Backend) -> None:
    for _ in range(2):
        await (await backend.open()).close()
    await backend.raw(
        "INSERT INTO schema_migrations SELECT MAX(version) + 1, 0 FROM schema_migrations"
    )
    with pytest.raises(StoreError, match="newer than this agentos knows"):
        await backend.open()


async def test_a_title_is_a_label_written_beside_the_turns(backend: Backend) -> None:
    """Issue 30: a session's name round-trips through load and list; it bumps no version and
    leaves ``updated_at`` alone, so the host holding the session writes on undisturbed."""
    async with await backend.open(clock=lambda: 5.0) as store:
        await store.create_session(session("s1"))
        await store.create_session(replace(session("s2"), title="named at birth\x00"))
        version = await store.acquire_lease("s1", "holder", ttl=60)
        assert version is not None
        unnamed = await store.load_session("s1")
        assert unnamed is not None and unnamed.title is None
        await store.set_title("s1", "Trip to Oslo")
        named = await store.load_session("s1")
        assert named is not None and named.title == "Trip to Oslo"
        assert (named.version, named.updated_at) == (version, 1.0)
        listed = {s.session_id: s.title for s in await store.list_sessions()}
        assert listed == {"s1": "Trip to Oslo", "s2": "named at birth\ufffd"}
        await store.commit_turn(TurnCommit("s1", "idle", 0, (said("hi"),), version))
        await store.set_title("s1", None)
        reset = await store.load_session("s1")
        assert reset is not None and reset.title is None and len(reset.history) == 1
        with pytest.raises(StoreError, match="no session 'ghost'"):
            await store.set_title("ghost", "x")


async def test_the_first_words_a_turn_writes_name_the_session_in_a_listing(
    backend: Backend,
) -> None:
    """Issue 45: a listing reads no history, yet names every session by the first thing the
    person said (written with a turn; a later turn without them keeps them)."""
    async with await backend.open() as store:
        await store.create_session(session("s1"))
        first = TurnCommit(
            "s1", "idle", 0, (said("Plan\x00 a trip"),), first_words="Plan\x00 a trip"
        )
        await store.commit_turn(first)
        await store.commit_turn(TurnCommit("s1", "idle", 1, (said("more"),)))
        (listed,) = await store.list_sessions()
        assert (listed.history, listed.title) == ((), None)
        assert listed.first_words == listed.shown_title() == "Plan\ufffd a trip"


async def test_a_store_from_before_titles_migrates_keeping_its_sessions(
    backend: Backend,
) -> None:
    """Issue 30: a database from before titles (SQLite 5, PostgreSQL 3: no title, no first
    words) gains the columns on open; its sessions stay, unnamed, and can be named."""
    async with await backend.open() as store:
        await store.create_session(session("old", history=(said("from before"),)))
    await backend.raw(
        "ALTER TABLE sessions DROP COLUMN title; ALTER TABLE sessions DROP COLUMN first_words; "
        "ALTER TABLE calls DROP COLUMN log; ALTER TABLE calls DROP COLUMN disposition; "
        "ALTER TABLE calls DROP COLUMN question; DROP TABLE a2a_tasks; "
        "DELETE FROM schema_migrations WHERE version > (SELECT MAX(version) - 6 FROM "
        "schema_migrations)"
    )
    async with await backend.open() as store:
        old = await store.load_session("old")
        assert old is not None and old.title is None and old.history == (said("from before"),)
        await store.set_title("old", "Named at last")
        assert [s.title for s in await store.list_sessions()] == ["Named at last"]


async def test_someone_elses_database_is_refused_and_left_alone(backend: Backend) -> None:
    await backend.raw("CREATE TABLE invoices (id INTEGER)")
    with pytest.raises(StoreError, match="tables that are not agentos's") as refused:
        await backend.open()
    assert refused.value.other_file_helps
    await backend.raw("INSERT INTO invoices VALUES (1)")  # still there, still theirs


async def test_turns_waiting_together_all_land_and_a_bad_one_fails_alone(
    backend: Backend,
) -> None:
    outcomes: dict[str, str] = {}
    names = [f"s{number}" for number in range(20)]
    async with await backend.open() as store:
        for name in names:
            await store.create_session(session(name))

        async def commit(name: str) -> None:
            try:
                await store.commit_turn(TurnCommit(name, "idle", 0, (said(name),)))
            except StoreError as error:
                outcomes[name] = str(error)
            else:
                outcomes[name] = "ok"

        async with anyio.create_task_group() as group:
            for name in [*names[:10], "ghost", *names[10:]]:
                group.start_soon(commit, name)
        for name in names:
            loaded = await store.load_session(name)
            assert loaded is not None and loaded.history == (said(name),)
    assert {outcomes[name] for name in names} == {"ok"}
    assert outcomes["ghost"].startswith("no session 'ghost'")


async def test_writes_name_the_version_they_expect(backend: Backend) -> None:
    """Issue 9 item 10: commit_turn and set_status with a stale version are refused,
    each for its own session only, inside a group commit too."""
    async with await backend.open() as one, await backend.open() as two:
        await one.create_session(session("a"))
        await one.create_session(session("b"))
        version_a = await one.acquire_lease("a", "one", ttl=60)
        version_b = await one.acquire_lease("b", "one", ttl=60)
        assert version_a is not None and version_b is not None
        with pytest.raises(SessionInUseError, match="in use by one"):
            await two.acquire_lease("a", "two", ttl=60)
        assert await two.acquire_lease("a", "two", ttl=60, steal=True) == version_a + 1
        assert await one.acquire_lease("ghost", "one", ttl=60) is None
        results: dict[str, BaseException | None] = {}

        async def commit(session_id: str, version: int) -> None:
            try:
                await one.commit_turn(TurnCommit(session_id, "idle", 0, (said("hi"),), version))
                results[session_id] = None
            except StoreError as error:
                results[session_id] = error

        async with anyio.create_task_group() as group:  # waiting together: one group commit
            group.start_soon(commit, "a", version_a)
            group.start_soon(commit, "b", version_b)
        assert isinstance(results["a"], SessionConflictError)
        assert "holds it now" in str(results["a"]) and "two" in str(results["a"])
        assert results["b"] is None
        with pytest.raises(SessionConflictError):
            await one.set_status("a", "stopped", version=version_a)
        await one.set_status("b", "stopped", version=version_b + 1)
        stored_a, stored_b = await two.load_session("a"), await two.load_session("b")
        assert stored_a is not None and stored_b is not None
        assert (stored_a.history, stored_a.version) == ((), version_a + 1)
        assert (stored_b.status, stored_b.version) == ("stopped", version_b + 2)


async def test_of_hosts_racing_for_an_expired_lease_exactly_one_wins(backend: Backend) -> None:
    """Issue 27: eight stores (eight connections) try to take one expired lease at once."""
    now = [100.0]
    async with AsyncExitStack() as stack:
        stores = [await backend.open(clock=lambda: now[0]) for _ in range(8)]
        for store in stores:
            stack.push_async_callback(store.close)
        for round_ in range(5):
            await stores[0].create_session(session(f"r{round_}"))
            await stores[0].acquire_lease(f"r{round_}", "gone", ttl=10)
        now[0] = 200.0  # every lease expired
        outcomes: dict[str, list[str]] = {}

        async def take(index: int, session_id: str) -> None:
            try:
                await stores[index].acquire_lease(session_id, f"host {index}", ttl=10)
            except SessionInUseError:
                outcomes.setdefault("refused", []).append(f"host {index}")
            else:
                outcomes.setdefault("won", []).append(f"host {index}")

        for round_ in range(5):
            outcomes.clear()
            async with anyio.create_task_group() as group:
                for index in range(8):
                    group.start_soon(take, index, f"r{round_}")
            won, refused = outcomes.get("won", []), outcomes.get("refused", [])
            assert len(won) == 1 and len(refused) == 7, (won, refused)
            assert (await stores[0].live_leases())[f"r{round_}"] == won[0]


async def test_renewals_keep_leases_and_say_which_were_lost(backend: Backend) -> None:
    now = [10.0]
    async with await backend.open(clock=lambda: now[0]) as store:
        for name in ("a", "b", "c"):
            await store.create_session(session(name))
            await store.acquire_lease(name, "me", ttl=5)
        await store.acquire_lease("b", "them", ttl=5, steal=True)
        await store.release_lease("c", "me")
        now[0] = 14.0
        assert await store.renew_leases("me", ["a", "b", "c"], ttl=5) == {"b": "them", "c": None}
        now[0] = 18.0  # "a" renewed at 14 lives to 19; "b" (not renewed) lapsed at 15
        assert await store.live_leases() == {"a": "me"}
        await store.release_leases("me")
        assert await store.live_leases() == {}


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


async def test_the_calls_mirror_round_trips_and_counts(backend: Backend) -> None:
    """Issue 11: rows replace the earlier row of the same call; they are found by either id,
    narrowed by session; counts are per session and status, of the holder's rows; a
    finished call's row goes a day after its last write."""
    now = [10.0]
    async with await backend.open(clock=lambda: now[0]) as store:
        for name in ("s1", "s2"):
            await store.create_session(session(name))
            await store.acquire_lease(name, "me", ttl=60)
        assert await store.mirrored_calls() == []
        first = mirrored("c1", progress={"percent": 20}, progress_count=2)
        deferred = mirrored("c2", "pending", deferred=True)
        await store.mirror_calls([first, deferred])
        done = mirrored("c1", "cancelled", cancel_reason="stalled", ended_at=3.0)
        other = mirrored("c3", "completed", session_id="s2", result={"ok": [1, 2]}, ended_at=3.0)
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
        now[0] = 2.0 + 24 * 3600 + 1
        await store.mirror_calls([mirrored("c4", updated_at=now[0])])
        assert [c.call_id for c in await store.mirrored_calls()] == ["c2", "c4"], (
            "finished a day ago: pruned; still pending: kept"
        )


async def test_a_mirrored_calls_newest_log_line_and_disposition_round_trip(
    backend: Backend,
) -> None:
    """Issue 45: a row keeps the newest progress payload and the newest log line apart, and
    how the call ran; a store from before them gains the columns, keeping its rows."""
    async with await backend.open(clock=lambda: 10.0) as store:
        await store.create_session(session())
        await store.mirror_calls([mirrored("c0", progress={"percent": 20})])
    await backend.raw(
        "ALTER TABLE calls DROP COLUMN log; ALTER TABLE calls DROP COLUMN disposition; "
        "ALTER TABLE calls DROP COLUMN question; DROP TABLE a2a_tasks; "
        "DELETE FROM schema_migrations WHERE version > (SELECT MAX(version) - 4 FROM "
        "schema_migrations)"
    )
    async with await backend.open(clock=lambda: 10.0) as store:
        (old,) = await store.mirrored_calls()
        assert (old.progress, old.log, old.disposition) == ({"percent": 20}, None, None)
        call = mirrored(
            "c1",
            progress={"percent": 40},
            log="fetched page 4\x00",
            disposition="decorated:run_async",
        )
        await store.mirror_calls([call])
        (row,) = await store.mirrored_calls(call_id="c1")
        assert (row.progress, row.log, row.disposition) == (
            {"percent": 40},
            "fetched page 4\ufffd",
            "decorated:run_async",
        )


async def test_a_mirrored_calls_question_round_trips_and_is_counted(backend: Backend) -> None:
    """Issue 49: a running call's row keeps the question it waits on; ``call_counts`` counts
    the asking calls of the holder's rows under ``ASKING``; a row written again without it
    (answered) asks nothing; a store from before the column gains it, keeping its rows."""
    asked: JsonObject = {"message": "Which city?", "form": None, "url": None,
                         "source": "test", "asked_at": 3.0}  # fmt: skip
    async with await backend.open(clock=lambda: 10.0) as store:
        await store.create_session(session())
        await store.acquire_lease("s1", "me", ttl=60)
        await store.mirror_calls([mirrored("c0")])
    await backend.raw(
        "ALTER TABLE calls DROP COLUMN question; DROP TABLE a2a_tasks; "
        "DELETE FROM schema_migrations WHERE version > (SELECT MAX(version) - 3 FROM "
        "schema_migrations)"
    )
    async with await backend.open(clock=lambda: 10.0) as store:
        (old,) = await store.mirrored_calls()
        assert (old.call_id, old.question) == ("c0", None)
        await store.mirror_calls([mirrored("c1", question=asked), mirrored("c2", question=asked)])
        assert (await store.mirrored_calls(call_id="c1"))[0].question == asked
        assert (await store.call_counts())["s1"] == {"running": 3, ASKING: 2}
        await store.mirror_calls([mirrored("c1"), mirrored("c2", "completed")])
        assert (await store.mirrored_calls(call_id="c1"))[0].question is None
        assert (await store.call_counts())["s1"] == {"running": 2, "completed": 1}


async def test_a_nul_in_plain_text_is_kept_as_a_replacement_character(backend: Backend) -> None:
    """Review of issue 27: PostgreSQL's text refuses NUL; an error, a cancel reason and a
    token's error with one are written (as U+FFFD, on every backend alike), and JSON keeps
    it exactly."""
    async with await backend.open(clock=lambda: 10.0) as store:
        await store.create_session(session())
        call = mirrored("c1", "failed", error_message="bad\x00byte", progress={"t": "a\x00b"})
        await store.mirror_calls([call])
        (row,) = await store.mirrored_calls()
        assert (row.error_message, row.progress) == ("bad\ufffdbyte", {"t": "a\x00b"})
        request = await store.request_cancel("c1", "s1", "why\x00")
        assert request.reason == "why\ufffd" == (await store.cancel_request("c1") or request).reason
        await store.add_token(token("t"))
        assert await store.complete_token("t", error="no\x00pe") is Completion.APPLIED
        completed = await store.get_token("t")
        assert completed is not None and completed.error == "no\ufffdpe"


async def test_cancel_requests_reach_the_holder_and_keep_its_answer(backend: Backend) -> None:
    """Issue 11: a request is pending for the host holding its session only; an answer lands
    with the mirror's rows, and only on the request it answers (not on a newer one)."""
    now = [10.0]
    async with await backend.open(clock=lambda: now[0]) as store:
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


async def test_news_of_a_cancel_or_a_completion_reaches_the_listeners(backend: Backend) -> None:
    """Issue 27: on PostgreSQL any process's news arrives (NOTIFY, this store's own too);
    SQLite has none, nor a store behind a transaction-mode pooler, and ``listen`` says so."""
    async with await backend.open() as holder, await backend.open() as other:
        await holder.create_session(session())
        heard: list[str] = []
        arrived = anyio.Event()

        def note(session_id: str) -> None:
            heard.append(session_id)
            arrived.set()

        listening = await holder.listen(note)
        assert listening is backend.hears_others
        assert await holder.listen(note) is listening, "listening again is harmless"
        await other.request_cancel("c1", "s1", "stalled")
        await other.add_token(token("t"))
        assert await other.complete_token("t", 1) is Completion.APPLIED

        async def hear(count: int) -> None:
            nonlocal arrived
            with anyio.fail_after(10):
                while len(heard) < count:
                    await arrived.wait()
                    arrived = anyio.Event()

        if listening:
            await hear(2)
            await holder.request_cancel("c2", "s1", "mine")
            await hear(3)
        assert heard == (["s1", "s1", "s1"] if listening else [])
        holder.unlisten(note)


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
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(turns=st.lists(st.tuples(st.lists(MESSAGE, max_size=3), STATUS), min_size=1, max_size=4))
def test_every_turn_and_status_round_trips(
    backend: Backend, turns: list[tuple[list[Any], str]]
) -> None:
    async def main() -> None:
        name = f"rt-{id(turns)}-{os.urandom(4).hex()}"
        async with await backend.open() as store:
            await store.create_session(session(name))
            history: list[Any] = []
            for messages, status in turns:
                keep = max(0, len(history) - 1)
                history = history[:keep] + messages
                await store.commit_turn(TurnCommit(name, status, keep, tuple(messages)))
        async with await backend.open() as store:
            loaded = await store.load_session(name)
        assert loaded is not None
        assert list(loaded.history) == history
        assert loaded.status == turns[-1][1]

    anyio.run(main)


@pytest.mark.parametrize(
    ("garbage", "problem"),
    [
        ("{not json", "it is not JSON"),
        ("", "it is not JSON"),
        ("[1, 2]", "it is JSON list, not a message object"),
        ("null", "it is JSON NoneType, not a message object"),
    ],
)
async def test_a_message_that_cannot_be_read_is_named_and_the_rest_read(
    backend: Backend, garbage: str, problem: str
) -> None:
    """A message row changed behind the store's back is a ``StoreError`` naming the session,
    the message and what is wrong, not a bare ``JSONDecodeError`` (nor a history holding
    something that is not a message); the other sessions read as before."""
    async with await backend.open() as store:
        await store.create_session(session("s", history=(said("hi"), said("there"))))
        await store.create_session(session("other", history=(said("fine"),)))
    quoted = garbage.replace("'", "''")
    await backend.raw(
        f"UPDATE messages SET message = '{quoted}' WHERE session_id = 's' AND seq = 1"
    )
    async with await backend.open() as store:
        with pytest.raises(StoreError) as raised:
            await store.load_session("s")
        other = await store.load_session("other")
    assert "message 1 of session 's' in " in str(raised.value)
    assert problem in str(raised.value)
    assert other is not None and other.history == (said("fine"),)


# ------------------------------------------------------------------ hosts on one store


async def test_a_live_session_is_refused_and_a_steal_is_never_overwritten(
    backend: Backend,
) -> None:
    """Issue 9 item 10: while one host holds a session another cannot load it (one line
    naming the holder); a steal makes the first host stop writing, so nothing the second
    wrote is replaced, and the first host's other sessions go on."""
    async with host_on(backend) as first, host_on(backend) as second:
        mine = await first.create_session(session_id="s")
        other = await first.create_session(session_id="t")
        await say(mine, "one")
        with pytest.raises(SessionInUseError) as refused:
            await second.resume("s")
        message = str(refused.value)
        assert first.holder in message and "steal=True" in message and "\n" not in message
        assert "s" not in {summary.session_id for summary in second.list()}

        taken = await second.resume("s", steal=True)
        await say(taken, "two")
        await say(mine, "late")  # the first host still thinks it owns "s"

        assert mine.status is SessionStatus.STOPPED
        assert "written or taken over by another host" in mine.errors[-1]
        assert taken.errors == []
        await say(other, "still here")
        assert other.errors == [] and other.replies == ["heard still here"]
    assert await stored_texts(backend, "s") == ["one", "heard one", "two", "heard two"]
    assert await stored_texts(backend, "t") == ["still here", "heard still here"]


async def test_a_holder_that_stopped_renewing_loses_its_lease(backend: Backend) -> None:
    """Issue 9 item 10: a lease not renewed within its expiry is free without a steal;
    the old holder's next commit is refused and changes nothing."""
    stuck, now = ManualClock(), ManualClock()
    async with host_on(backend, stuck) as first, host_on(backend, now) as second:
        session = await first.create_session(session_id="s")
        await say(session, "one")
        now.advance(14)
        with pytest.raises(SessionInUseError):
            await second.resume("s")
        now.advance(2)  # 16 s: the first host's clock never moved, so it never renewed
        resumed = await second.resume("s")
        await say(resumed, "two")
        await say(session, "lost")
        assert "written or taken over by another host" in session.errors[-1]
    assert await stored_texts(backend, "s") == ["one", "heard one", "two", "heard two"]


async def test_a_dead_holder_on_this_machine_frees_its_lease_at_once(backend: Backend) -> None:
    """Issue 9 item 10: a lease whose process is gone (same host name, no such pid)
    is free before it expires; a live process's lease is not."""
    async with host_on(backend) as host:
        await host.create_session(session_id="s")
    holder = [
        sys.executable,
        "-c",
        "import sys, anyio\n"
        "from agentos import open_store\n"
        "async def main():\n"
        "    async with await open_store(sys.argv[1]) as store:\n"
        "        await store.acquire_lease('s', 'child', ttl=3600)\n"
        "        print('held', flush=True)\n"
        "        sys.stdin.readline()\n"
        "anyio.run(main)\n",
        backend.address,
    ]
    async with await anyio.open_process(holder, cwd=ROOT) as child:
        assert child.stdout is not None
        with anyio.fail_after(20):
            assert (await child.stdout.receive()).startswith(b"held")
        async with host_on(backend) as host:
            with pytest.raises(SessionInUseError, match="in use by child"):
                await host.resume("s")
        child.send_signal(signal.SIGKILL)  # no chance to give the lease up
        await child.wait()
    async with host_on(backend) as host:
        await say(await host.resume("s"), "after")


async def test_open_store_picks_the_backend_by_its_address(backend: Backend) -> None:
    async with await open_store(backend.address) as store:
        assert isinstance(store, SqliteStore if backend.name == "sqlite" else PostgresStore)
