"""Sessions in the store: a row in ``sessions`` (a board session's board too) and the
history in ``messages``; turns are written in batches by the backend (``GroupCommit``).

Every write names the session version it expects and bumps it, so a host
that lost the session (its lease taken over) cannot replace what the new
owner wrote: the write is refused with a ``SessionConflictError`` instead.
"""

from __future__ import annotations

import json

from agentos._errors import SessionConflictError
from agentos._errors import StoreError
from agentos._store.batching import message_rows
from agentos._store.protocol import StoredSession
from agentos._store.records import message_from
from agentos._store.records import session_from
from agentos._store.records import text_column
from agentos._store.sql.dialect import Table
from agentos._store.sql.dialect import Tx

INSERT_MESSAGE = "INSERT INTO messages (session_id, seq, message) VALUES (?, ?, ?)"
UPDATE_STATUS = (
    "UPDATE sessions SET status = ?, updated_at = ?, version = version + 1 "
    "WHERE session_id = ? AND (CAST(? AS BIGINT) IS NULL OR version = ?)"
)
"""A write that names the version it expects (None: any) and bumps it."""
LISTED = (
    "SELECT session_id, config, status, parent_session_id, created_at, updated_at, version, "
    "usage, title, first_words FROM sessions WHERE CAST(? AS TEXT) IS NULL "
    "OR substr(session_id, 1, length(CAST(? AS TEXT))) = ? ORDER BY created_at, session_id"
)
"""Every session, or those whose id starts with the text; without histories or boards."""
MENTIONING = (
    "SELECT session_id FROM sessions WHERE session_id IN ("
    "SELECT session_id FROM messages WHERE {at}(message, ?) > 0 "
    "UNION SELECT session_id FROM sessions WHERE {at}(board, ?) > 0 "
    "UNION SELECT session_id FROM tokens WHERE {at}(call_id, ?) = 1 "
    "OR {at}(provider_call_id, ?) = 1 "
    "UNION SELECT session_id FROM calls WHERE {at}(call_id, ?) = 1 "
    "OR {at}(provider_call_id, ?) = 1) ORDER BY created_at, session_id"
)
"""Where a call whose id is (or starts with) the text may be: ``sessions_mentioning``."""


class SessionRows(Table):
    """The ``SessionStore`` session operations over one database (turns: ``GroupCommit``)."""

    async def create(self, session: StoredSession) -> None:
        async def insert(tx: Tx) -> None:
            await tx.run(
                "INSERT INTO sessions (session_id, config, status, parent_session_id, "
                "created_at, updated_at, board, title) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                session.session_id,
                json.dumps(session.config),
                session.status,
                session.parent_session_id,
                session.created_at,
                session.updated_at,
                None if session.board is None else json.dumps(session.board),
                text_column(session.title),
            )
            rows = message_rows(session.session_id, 0, session.history)
            if rows:
                await tx.run_many(INSERT_MESSAGE, rows)

        try:
            await self._database.transaction(insert)
        except StoreError as error:
            if "sessions_pkey" in str(error):  # PostgreSQL's word for it; SQLite's says it
                raise StoreError(f"a session {session.session_id!r} exists already") from None
            raise

    async def set_status(self, session_id: str, status: str, *, version: int | None) -> None:
        now = self._database.now()

        async def write(tx: Tx) -> None:
            if await tx.run(UPDATE_STATUS, status, now, session_id, version, version) != 1:
                raise await refusal(tx, self._database.name, session_id, version)

        await self._database.transaction(write)

    async def set_title(self, session_id: str, title: str | None) -> None:
        sql = "UPDATE sessions SET title = ? WHERE session_id = ?"
        if await self._write(sql, text_column(title), session_id) != 1:
            raise StoreError(f"no session {session_id!r} in {self._database.name}")

    async def load(self, session_id: str) -> StoredSession | None:
        async def read(tx: Tx) -> StoredSession | None:
            row = await tx.row("SELECT * FROM sessions WHERE session_id = ?", session_id)
            if row is None:
                return None
            rows = await tx.rows(
                "SELECT seq, message FROM messages WHERE session_id = ? ORDER BY seq", session_id
            )
            where = self._database.name
            history = tuple(
                message_from(r["message"], seq=r["seq"], session_id=session_id, where=where)
                for r in rows
            )
            board = None if row["board"] is None else json.loads(row["board"])
            return session_from(row, history, board)

        return await self._database.read(read)

    async def mentioning(self, text: str) -> list[str]:
        sql = MENTIONING.format(at=self._database.dialect.position)
        rows = await self._database.all(sql, *(text,) * 6)
        return [row["session_id"] for row in rows]

    async def list(self, prefix: str | None) -> list[StoredSession]:
        rows = await self._database.all(LISTED, prefix, prefix, prefix)
        return [session_from(row, ()) for row in rows]


async def refusal(tx: Tx, where: str, session_id: str, version: int | None) -> StoreError:
    """Why a write to ``session_id`` expecting ``version`` changed no row."""
    row = await tx.row("SELECT version FROM sessions WHERE session_id = ?", session_id)
    if row is None:
        return StoreError(f"no session {session_id!r} in {where}")
    lease = await tx.row("SELECT holder FROM leases WHERE session_id = ?", session_id)
    now = "" if lease is None else f"; {lease['holder']} holds it now"
    return SessionConflictError(
        f"session {session_id!r} was written or taken over by another host since this one "
        f"loaded it (version {row['version']}, expected {version}{now}); this host stops "
        "writing it, so nothing the other wrote is lost"
    )
