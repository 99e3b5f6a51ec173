"""A ``SessionStore`` made of its tables (``sql/``), written once over a backend's
``Database``: this class speaks the protocol over them."""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from typing import Self

import anyio

from agentos._store.batching import GroupCommit
from agentos._store.batching import PendingTurn
from agentos._store.protocol import CancelRequest
from agentos._store.protocol import Completion
from agentos._store.protocol import MirroredCall
from agentos._store.protocol import StoredSession
from agentos._store.protocol import StoredToken
from agentos._store.protocol import TurnCommit
from agentos._store.sql.a2a_tasks import A2aTaskRows
from agentos._store.sql.calls import CallRows
from agentos._store.sql.dialect import Database
from agentos._store.sql.leases import Leases
from agentos._store.sql.sessions import SessionRows
from agentos._store.sql.tokens import TokenRows
from components import Json


class TableStore:
    """The ``SessionStore`` protocol over the tables of one ``Database``; a backend subclass
    opens the database, brings its schema up to date, and says how a batch of turns is
    written (``GroupCommit``)."""

    def __init__(
        self,
        database: Database,
        write_together: Callable[[list[PendingTurn]], Awaitable[None]],
        commit_lock: anyio.Lock | None = None,
    ) -> None:
        """``commit_lock``: what a batch of turns waits for (SQLite's one writer, so turns
        gather behind every other transaction; by default a lock of the batches' own)."""
        self._sessions = SessionRows(database)
        self._turns = GroupCommit(commit_lock or anyio.Lock(), write_together)
        self._leases = Leases(database)
        self._tokens = TokenRows(database)
        self._calls = CallRows(database)
        self.a2a_tasks = A2aTaskRows(database)
        """The tasks ``agentos a2a`` serves (not part of ``SessionStore``: only that server
        reads them)."""

    async def _prepared(self, prepare: Callable[[], Awaitable[None]]) -> Self:
        """This store, once ``prepare`` (its schema brought up to date) ran; closed if it
        failed."""
        try:
            await prepare()
        except BaseException:
            await self.close()
            raise
        return self

    async def close(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ sessions

    async def create_session(self, session: StoredSession) -> None:
        await self._sessions.create(session)

    async def commit_turn(self, turn: TurnCommit) -> None:
        """Commit together with every other turn waiting now: under load one
        transaction carries many sessions' turns, and none waits behind N others."""
        await self._turns.write(PendingTurn.of(turn))

    async def set_status(self, session_id: str, status: str, *, version: int | None = None) -> None:
        await self._sessions.set_status(session_id, status, version=version)

    async def set_title(self, session_id: str, title: str | None) -> None:
        await self._sessions.set_title(session_id, title)

    async def load_session(self, session_id: str) -> StoredSession | None:
        return await self._sessions.load(session_id)

    async def list_sessions(self, *, prefix: str | None = None) -> list[StoredSession]:
        return await self._sessions.list(prefix)

    async def sessions_mentioning(self, text: str) -> list[str]:
        return await self._sessions.mentioning(text)

    # -------------------------------------------------------------------- leases

    async def acquire_lease(
        self, session_id: str, holder: str, *, ttl: float, steal: bool = False
    ) -> int | None:
        return await self._leases.acquire(session_id, holder, ttl=ttl, steal=steal)

    async def renew_leases(
        self, holder: str, session_ids: Sequence[str], *, ttl: float
    ) -> dict[str, str | None]:
        return await self._leases.renew(holder, session_ids, ttl=ttl)

    async def release_lease(self, session_id: str, holder: str) -> None:
        await self._leases.release(session_id, holder)

    async def release_leases(self, holder: str) -> None:
        await self._leases.release_all(holder)

    async def live_leases(self) -> dict[str, str]:
        return await self._leases.live()

    # -------------------------------------------------------------------- tokens

    async def add_token(self, token: StoredToken) -> None:
        await self._tokens.add(token)

    async def complete_token(
        self, token: str, result: Json = None, *, error: str | None = None
    ) -> Completion:
        return await self._tokens.complete(token, result, error=error)

    async def get_token(self, token: str) -> StoredToken | None:
        return await self._tokens.get(token)

    async def tokens_of(self, session_id: str) -> list[StoredToken]:
        return await self._tokens.of_session(session_id)

    async def completed_tokens(self, tokens: Sequence[str]) -> list[StoredToken]:
        return await self._tokens.completed(tokens) if tokens else []

    async def delete_expired_tokens(self, *, grace: float = 0.0) -> int:
        return await self._tokens.delete_expired(grace)

    # -------------------------------------------------------- the calls' mirror

    async def mirror_calls(
        self, calls: Sequence[MirroredCall], answers: Sequence[CancelRequest] = ()
    ) -> None:
        await self._calls.write(calls, answers)

    async def mirrored_calls(
        self, *, session_id: str | None = None, call_id: str | None = None
    ) -> list[MirroredCall]:
        return await self._calls.find(session_id=session_id, call_id=call_id)

    async def call_counts(self) -> dict[str, dict[str, int]]:
        return await self._calls.counts()

    async def request_cancel(self, call_id: str, session_id: str, reason: str) -> CancelRequest:
        return await self._calls.request_cancel(call_id, session_id, reason)

    async def cancel_request(self, call_id: str) -> CancelRequest | None:
        return await self._calls.request_of(call_id)

    async def pending_cancels(self, holder: str) -> list[CancelRequest]:
        return await self._calls.pending(holder)

    # ---------------------------------------------------------------------- news

    async def listen(self, callback: Callable[[str], None]) -> bool:
        """No news by default: holders poll (a backend that can tell them sooner says so)."""
        return False

    def unlisten(self, callback: Callable[[str], None]) -> None:
        return None


def a2a_tasks_of(store: object) -> A2aTaskRows | None:
    """The ``a2a_tasks`` table of ``store`` (None: a store not made of agentos's tables)."""
    return store.a2a_tasks if isinstance(store, TableStore) else None
