"""The embedded store: one SQLite file in WAL mode, reached through aiosqlite.

Each turn is committed in one transaction, so a crash loses at most the turn
in flight; turns of several sessions that wait to be written at the same
time share a transaction (group commit, ``commit``).
Migrations are versioned in ``schema_migrations`` and run once
(``schema``). A file that is corrupt, locked by another writer, of a
newer schema or not writable gets a ``StoreError`` naming the file and what
to do; nothing is ever overwritten.

A session is owned by one host at a time: its lease (holder, expiry) is a
row in ``leases`` (``leases``), and every write names the session
version it expects (``sessions``), so a host that lost the session
cannot replace what the new owner wrote. A file or folder the store creates
is private to the user (0600, 0700); a file deleted or replaced under a
running store is noticed before the next write, which fails rather than
going to the old, unlinked file (``file``). The host that holds a
session mirrors its calls into ``calls`` and answers ``cancel_requests``
(``calls``), so other processes can look at and cancel them.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Self

import aiosqlite
import platformdirs

from agentos._errors import StoreError
from agentos._store.protocol import (
    CancelRequest,
    Completion,
    MirroredCall,
    StoredSession,
    StoredToken,
    TurnCommit,
)
from agentos._store.sqlite.calls import CallRows
from agentos._store.sqlite.commit import GroupCommit, PendingTurn
from agentos._store.sqlite.connection import Database
from agentos._store.sqlite.file import create_private, explain
from agentos._store.sqlite.leases import Leases
from agentos._store.sqlite.schema import MIGRATIONS, SCHEMA_VERSION, prepare
from agentos._store.sqlite.sessions import SessionRows, message_rows
from agentos._store.sqlite.tokens import TokenRows
from components import Json

__all__ = ["BUSY_TIMEOUT_SECONDS", "MIGRATIONS", "SCHEMA_VERSION", "SqliteStore", "default_path"]

BUSY_TIMEOUT_SECONDS = 2.0


def default_path() -> Path:
    """``$AGENTOS_DB``, else ``agentos.db`` in the user's data directory."""
    override = os.environ.get("AGENTOS_DB")
    if override:
        return Path(override)
    return Path(platformdirs.user_data_dir("agentos")) / "agentos.db"


class SqliteStore:
    """A ``SessionStore`` in one SQLite file. Use ``await SqliteStore.open(path)``."""

    default_path = staticmethod(default_path)

    def __init__(self, path: Path, connection: aiosqlite.Connection, clock: Callable[[], float]):
        self.path = path
        self._db = connection
        self._database = database = Database(path, connection, clock)
        self._sessions = SessionRows(database)
        self._turns = GroupCommit(database)
        self._leases = Leases(database)
        self._tokens = TokenRows(database)
        self._calls = CallRows(database)

    @classmethod
    async def open(
        cls,
        path: str | Path | None = None,
        *,
        clock: Callable[[], float] = time.time,
        busy_timeout: float = BUSY_TIMEOUT_SECONDS,
    ) -> Self:
        """Open (creating and migrating if need be); wait up to ``busy_timeout`` for a lock."""
        path = Path(path) if path is not None else default_path()
        try:
            create_private(path)
        except OSError as error:
            raise StoreError(
                f"cannot create the database {path}: {error.strerror}; choose a writable location",
                other_file_helps=True,
            ) from None
        try:
            connection = await aiosqlite.connect(path, timeout=busy_timeout)
        except sqlite3.Error as error:
            raise explain(path, error) from None
        try:
            store = cls(path, connection, clock)
        except OSError as error:
            await connection.close()
            raise StoreError(f"cannot open the database {path}: {error.strerror}") from None
        try:
            await prepare(store._database)
        except BaseException:
            await connection.close()
            raise
        return store

    async def close(self) -> None:
        await self._database.close()

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
        rows = message_rows(turn.session_id, turn.keep, turn.messages)
        board = None if turn.board is None else json.dumps(turn.board)
        pending = PendingTurn(turn.session_id, turn.status, turn.keep, rows, turn.version, board)
        await self._turns.write(pending)

    async def set_status(self, session_id: str, status: str, *, version: int | None = None) -> None:
        await self._sessions.set_status(session_id, status, version=version)

    async def load_session(self, session_id: str) -> StoredSession | None:
        return await self._sessions.load(session_id)

    async def list_sessions(self) -> list[StoredSession]:
        return await self._sessions.list()

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
