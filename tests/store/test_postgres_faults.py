"""Issue 27, PostgreSQL's faults: a host SIGKILLed mid-turn whose sessions another resumes, and
the database restarted under a running host."""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Iterator

import anyio
import asyncpg
import asyncpg.transaction
import pytest

from agentos import Completion
from agentos import Host
from agentos import PostgresStore
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import SessionInUseError
from agentos import SessionStatus
from agentos import StoreError
from agentos.stores import StoredSession
from agentos.stores import TurnCommit
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.turns import Message
from tests.support import ROOT
from tests.support.backends import Backend
from tests.support.backends import echo
from tests.support.backends import say
from tests.support.backends import stored_texts
from tests.support.pg_host import LEASE_EXPIRY
from tests.support.pg_host import approve
from tests.support.pg_host import work
from tests.support.pg_stalled_host import LEASE_EXPIRY as STALLED_LEASE_EXPIRY
from tests.support.postgres import Cluster
from tests.support.postgres import postgres_cluster
from tests.support.processes import dies_within

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def own_server() -> Iterator[Cluster]:
    """A server of this module's own, to stop and start under a running host."""
    with postgres_cluster(acknowledged_is_durable=True) as cluster:
        if cluster.directory is None:
            pytest.skip("a server of your own (AGENTOS_TEST_POSTGRES) is never restarted")
        yield cluster


def later(seconds: float) -> float:
    """The wall clock of a host that looks ``seconds`` from now: leases expired meanwhile."""
    return time.time() + seconds


async def test_a_host_killed_mid_turn_loses_its_sessions_to_another(postgres_dsn: str) -> None:
    """Issue 27: SIGKILL a host holding three sessions (a call running, one deferred, each).
    Until its leases expire another host is refused, naming it; after, that host resumes
    every session: the running calls read orphaned (the model is told), the deferred ones
    wait on with their tokens, and a token completed then completes its call there."""
    program = [sys.executable, "-m", "tests.support.pg_host", postgres_dsn, "3"]
    async with await anyio.open_process(program, cwd=ROOT) as child:
        assert child.stdout is not None
        with anyio.fail_after(30):
            assert (await child.stdout.receive()).startswith(b"ready")
        child.send_signal(signal.SIGKILL)  # mid-turn: two calls outstanding in each session
        await child.wait()
    assert dies_within(child.pid, 10)

    provider = ScriptedProvider(
        (lambda r: True, lambda r: text("noted")),
    )
    async with await PostgresStore.open(postgres_dsn) as now:
        with pytest.raises(SessionInUseError, match="in use by host-b"):
            await now.acquire_lease("s0", "me", ttl=5)
    async with (
        await PostgresStore.open(postgres_dsn, clock=lambda: later(LEASE_EXPIRY + 0.5)) as store,
        Runtime([work, approve]) as runtime,
        Host(runtime, provider, store=store) as host,
    ):
        for number in range(3):
            session = await host.resume(f"s{number}")
            asked = len(provider.requests)
            session.post("what happened?")  # the model hears of the restart on its next turn
            with anyio.fail_after(10):
                while not (session.idle and len(provider.requests) > asked):
                    await settle(runtime)
            told = last_user_text(provider.requests[asked])
            assert "(work) finished: orphaned" in told, told
            (waiting,) = session.outstanding()
            assert (waiting.tool_name, waiting.status.value) == ("approve", "pending")
            (token,) = await store.tokens_of(f"s{number}")
            assert await host.complete(token.token, "yes") is Completion.APPLIED
            with anyio.fail_after(10):
                while session.outstanding() or not session.idle:
                    await settle(runtime)
            assert session.status is not SessionStatus.STOPPED and session.errors == []
        assert set((await store.live_leases()).values()) == {host.holder}


async def test_the_database_restarted_under_a_running_host(own_server: Cluster) -> None:
    """Issue 27: the pool's connections die with the server; the next turn commits on fresh
    ones. A turn committed while the server is down is reported and kept in memory, and the
    next commit after the server is back writes it: nothing is lost."""
    backend = Backend("postgres", own_server.database())
    async with (
        await backend.open() as store,
        Runtime([]) as runtime,
        Host(runtime, echo(), store=store) as host,
    ):
        session = await host.create_session(session_id="s")
        await say(session, "one")
        own_server.stop("fast")
        own_server.start()
        await say(session, "two")
        assert session.errors == [], "a restart between turns is not even noticed"
        own_server.stop("immediate")
        try:
            await say(session, "three")
        finally:
            own_server.start()
        assert session.errors, "the commits that failed are reported"
        for error in session.errors:
            assert error.kind == "store" and "cannot reach the database" in error.message
            assert "postgresql://postgres@127.0.0.1" in error.message
        await say(session, "four")
    assert await stored_texts(backend, "s") == [
        *("one", "heard one", "two", "heard two"),
        *("three", "heard three", "four", "heard four"),
    ]


class CommitFault:
    """Fault injection at the driver: the next COMMIT's answer is lost (after or instead of
    applying it), or comes only once released."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.mode = ""
        self.held = anyio.Event()
        self.release = anyio.Event()
        real = asyncpg.transaction.Transaction.commit

        async def commit(transaction: asyncpg.transaction.Transaction) -> None:
            mode, self.mode = self.mode, ""
            if mode == "applied, then hold":
                await real(transaction)
                self.held.set()
                await self.release.wait()
                return
            if mode == "applied, answer lost":
                await real(transaction)
                raise asyncpg.ConnectionDoesNotExistError("connection was closed")
            if mode == "not applied":
                await transaction.rollback()
                raise asyncpg.ConnectionDoesNotExistError("connection was closed")
            if mode == "goodbye read, socket still open":  # what SIGCONT after a pause can give
                await transaction.rollback()
                raise asyncpg.InternalClientError(
                    "cannot switch to state 15; another operation (2) is in progress"
                )
            await real(transaction)

        monkeypatch.setattr(asyncpg.transaction.Transaction, "commit", commit)


def turn(session_id: str, words: str, version: int) -> TurnCommit:
    said: Message = {"role": "user", "content": [{"type": "text", "text": words}]}
    return TurnCommit(session_id, "idle", 0, (said,), version)


async def leased(store: PostgresStore, session_id: str) -> int | None:
    """A new session, its lease taken by ``me``: the version to commit its first turn at."""
    await store.create_session(StoredSession(session_id, {}, "idle", 1.0, 1.0))
    return await store.acquire_lease(session_id, "me", ttl=60)


async def test_a_commit_whose_answer_was_lost_is_settled_not_written_twice(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review of issue 27: a COMMIT applied but unanswered counts as written (the next turn
    goes on from it, no conflict); one not applied is reported, and writing it again works."""
    fault = CommitFault(monkeypatch)
    async with await PostgresStore.open(postgres_dsn) as store:
        version = await leased(store, "s")
        assert version is not None
        fault.mode = "applied, answer lost"
        await store.commit_turn(turn("s", "one", version))
        await store.commit_turn(turn("s", "two", version + 1))
        fault.mode = "not applied"
        with pytest.raises(StoreError, match="cut off and not applied"):
            await store.commit_turn(turn("s", "three", version + 2))
        await store.commit_turn(turn("s", "three", version + 2))
        stored = await store.load_session("s")
        assert stored is not None and stored.version == version + 3
        assert stored.history == turn("s", "three", 0).messages


async def test_a_commit_refused_by_a_driver_that_read_the_servers_goodbye_is_settled(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that ended a paused host's transaction sends its error before closing; a
    driver that reads the error first refuses the COMMIT with an internal error. That is a
    lost connection like any other (settled by reading the database), not a failure of the
    database to report: the turn is said to be cut off, and written again it goes in."""
    fault = CommitFault(monkeypatch)
    async with await PostgresStore.open(postgres_dsn) as store:
        version = await leased(store, "s")
        assert version is not None
        fault.mode = "goodbye read, socket still open"
        with pytest.raises(StoreError, match="cut off and not applied"):
            await store.commit_turn(turn("s", "one", version))
        await store.commit_turn(turn("s", "one", version))
        stored = await store.load_session("s")
        assert stored is not None and stored.version == version + 1


async def test_a_writer_cancelled_mid_commit_still_writes_the_others_once(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review of issue 27: the task that writes a group commit writes other sessions' turns
    too; cancelling it while the COMMIT is out neither loses them nor writes them twice."""
    fault = CommitFault(monkeypatch)
    async with await PostgresStore.open(postgres_dsn) as store:
        versions: dict[str, int] = {}
        for name in ("a", "b"):
            taken = await leased(store, name)
            assert taken is not None
            versions[name] = taken
        writer = anyio.CancelScope()
        outcomes: dict[str, str] = {}

        async def commit(name: str) -> None:
            with writer if name == "a" else anyio.CancelScope():
                await store.commit_turn(turn(name, "hi", versions[name]))
                outcomes[name] = "written"

        fault.mode = "applied, then hold"
        async with anyio.create_task_group() as group:
            group.start_soon(commit, "a")  # takes the writer, and b's turn with its own
            group.start_soon(commit, "b")
            with anyio.fail_after(10):
                await fault.held.wait()
            writer.cancel()  # the batch is committed; its answer has not come back yet
            fault.release.set()
        assert outcomes["b"] == "written", "b's turn was written once, by a's task"
        for name in ("a", "b"):
            stored = await store.load_session(name)
            assert stored is not None and stored.version == versions[name] + 1, name


async def test_leases_go_by_the_servers_clock_not_a_hosts(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review of issue 27: a host whose clock runs an hour ahead does not see a live lease
    as expired (nor one that expired as live): expiry is the server's to judge."""
    async with await PostgresStore.open(postgres_dsn) as first:
        await first.create_session(StoredSession("s", {}, "idle", 1.0, 1.0))
        await first.acquire_lease("s", "first", ttl=60)
        real = time.time
        monkeypatch.setattr(time, "time", lambda: real() + 3600)
        async with await PostgresStore.open(postgres_dsn) as ahead:
            with pytest.raises(SessionInUseError, match="in use by first") as refused:
                await ahead.acquire_lease("s", "ahead", ttl=60)
            assert 50 < refused.value.seconds_left <= 60
            assert await ahead.live_leases() == {"s": "first"}
            assert await ahead.renew_leases("ahead", ["s"], ttl=60) == {"s": "first"}


async def test_a_holder_paused_with_a_transaction_open_is_taken_over(postgres_dsn: str) -> None:
    """Issue 46, point 6: a holder SIGSTOPped while its turn's commit is open keeps the
    session's row locked; another host still takes the session over soon after the lease
    expires (the server ends the idle transaction; a take never waits on a lock). Woken, the
    holder writes nothing and says, in words, that the session was taken over."""
    program = [sys.executable, "-m", "tests.support.pg_stalled_host", postgres_dsn]
    async with await anyio.open_process(program, cwd=ROOT) as child:
        assert child.stdout is not None and child.stdin is not None and child.stderr is not None
        with anyio.fail_after(30):
            assert (await child.stdout.receive()).startswith(b"open")
        child.send_signal(signal.SIGSTOP)
        try:
            paused = time.monotonic()
            async with (
                await PostgresStore.open(postgres_dsn) as store,
                Runtime([]) as runtime,
                Host(runtime, echo(), store=store, holder="host-b") as host,
            ):
                refused: list[str] = []
                with anyio.fail_after(25):  # a statement waiting on the lock fails after 30 s
                    while True:
                        try:
                            session = await host.resume("s")
                        except SessionInUseError as error:
                            refused.append(str(error))
                            await anyio.sleep(0.1)
                        else:
                            break
                took = time.monotonic() - paused
                assert took < 10 * STALLED_LEASE_EXPIRY, f"taken over after {took:.1f} s"
                assert refused and all("in use by host-a" in error for error in refused)
                await say(session, "three")
                child.send_signal(signal.SIGCONT)
                await child.stdin.send(b"go\n")
                with anyio.fail_after(30):
                    said = b"".join([chunk async for chunk in child.stdout]).decode()
                    errors = b"".join([chunk async for chunk in child.stderr]).decode()
                    await child.wait()
                assert session.errors == []
        finally:
            if child.returncode is None:
                child.send_signal(signal.SIGCONT)
    told = said.strip().splitlines()
    assert len(told) == 1 and told[0].startswith("error: session 's' was "), said + errors
    assert "taken over" in told[0] and "host-b" in told[0], said + errors  # renewal or commit
    assert child.returncode == 0 and "Traceback" not in errors, errors
    backend = Backend("postgres", postgres_dsn)
    assert await stored_texts(backend, "s") == ["one", "heard one", "three", "heard three"]


async def test_a_database_outage_prints_nothing_but_the_sessions_errors(
    own_server: Cluster,
) -> None:
    """Issue 46, point 8: while the server is down, a host whose application configured no
    logging prints nothing (the pool used to print a traceback on every reconnection); its
    session still reports each commit that failed, in one line naming the server."""
    dsn = own_server.database()
    program = [sys.executable, "-m", "tests.support.pg_outage_host", dsn]
    async with await anyio.open_process(program, cwd=ROOT) as child:
        assert child.stdout is not None and child.stdin is not None and child.stderr is not None
        with anyio.fail_after(30):
            assert (await child.stdout.receive()).startswith(b"ready")
        own_server.stop("immediate")
        try:
            await child.stdin.send(b"down\n")
            with anyio.fail_after(60):
                said = b"".join([chunk async for chunk in child.stdout]).decode()
                printed = b"".join([chunk async for chunk in child.stderr]).decode()
                await child.wait()
        finally:
            own_server.start()
    assert printed == "", printed
    errors = said.strip().splitlines()
    assert errors and child.returncode == 0, said
    for error in errors:
        assert error.startswith("error: cannot reach the database postgresql://postgres@"), error
