"""Sessions in the store: a row in ``sessions`` (a board session's board too) and the
history in ``messages``.

Every write names the session version it expects and bumps it, so a host
that lost the session (its lease taken over) cannot replace what the new
owner wrote: the write is refused with a ``SessionConflictError`` instead.
"""

from __future__ import annotations

import json
from pathlib import Path

import aiosqlite

from agentos._errors import SessionConflictError, StoreError
from agentos._store.batching import message_rows
from agentos._store.protocol import StoredSession
from agentos._store.records import message_from, session_from, text_column
from agentos._store.sqlite.connection import Database
from agentos._store.sqlite.leases import lease_of

UPDATE_STATUS = (
    "UPDATE sessions SET status = ?, updated_at = ?, version = version + 1 "
    "WHERE session_id = ? AND (? IS NULL OR version = ?)"
)
"""A write that names the version it expects (None: any) and bumps it."""
INSERT_MESSAGE = "INSERT INTO messages (session_id, seq, message) VALUES (?, ?, ?)"
MENTIONING = (
    "SELECT session_id FROM sessions WHERE session_id IN ("
    "SELECT session_id FROM messages WHERE instr(message, ?) > 0 "
    "UNION SELECT session_id FROM sessions WHERE instr(board, ?) > 0 "
    "UNION SELECT session_id FROM tokens WHERE instr(call_id, ?) = 1 "
    "OR instr(provider_call_id, ?) = 1 "
    "UNION SELECT session_id FROM calls WHERE instr(call_id, ?) = 1 "
    "OR instr(provider_call_id, ?) = 1) ORDER BY created_at, session_id"
)
"""Where a call whose id is (or starts with) the text may be: ``sessions_mentioning``."""


class SessionRows:
    """The ``SessionStore`` session operations over one database (turns: ``GroupCommit``)."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def create(self, session: StoredSession) -> None:
        async with self._database.transaction() as db:
            await db.execute(
                "INSERT INTO sessions (session_id, config, status, parent_session_id, "
                "created_at, updated_at, board, title) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session.session_id,
                    json.dumps(session.config),
                    session.status,
                    session.parent_session_id,
                    session.created_at,
                    session.updated_at,
                    None if session.board is None else json.dumps(session.board),
                    text_column(session.title),
                ),
            )
            await db.executemany(
                INSERT_MESSAGE, message_rows(session.session_id, 0, session.history)
            )

    async def set_status(self, session_id: str, status: str, *, version: int | None) -> None:
        database = self._database
        async with database.transaction() as db:
            cursor = await db.execute(
                UPDATE_STATUS, (status, database.now(), session_id, version, version)
            )
            if cursor.rowcount != 1:
                raise await refusal(db, database.path, session_id, version)

    async def set_title(self, session_id: str, title: str | None) -> None:
        database = self._database
        async with database.transaction() as db:
            cursor = await db.execute(
                "UPDATE sessions SET title = ? WHERE session_id = ?",
                (text_column(title), session_id),
            )
            if cursor.rowcount != 1:
                raise StoreError(f"no session {session_id!r} in {database.path}")

    async def load(self, session_id: str) -> StoredSession | None:
        database = self._database
        row = await database.one("SELECT * FROM sessions WHERE session_id = ?", (session_id,))
        if row is None:
            return None
        rows = await database.all(
            "SELECT seq, message FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
        )
        where = database.path
        history = tuple(
            message_from(r["message"], seq=r["seq"], session_id=session_id, where=where)
            for r in rows
        )
        board = None if row["board"] is None else json.loads(row["board"])
        return session_from(row, history, board)

    async def mentioning(self, text: str) -> list[str]:
        rows = await self._database.all(MENTIONING, (text,) * 6)
        return [row["session_id"] for row in rows]

    async def list(self, prefix: str | None) -> list[StoredSession]:
        rows = await self._database.all(
            "SELECT * FROM sessions WHERE ? IS NULL OR substr(session_id, 1, length(?)) = ? "
            "ORDER BY created_at, session_id",
            (prefix, prefix, prefix),
        )
        return [session_from(row, ()) for row in rows]


async def refusal(
    db: aiosqlite.Connection, path: Path, session_id: str, version: int | None
) -> StoreError:
    """Why a write to ``session_id`` expecting ``version`` changed no row."""
    row = await (
        await db.execute("SELECT version FROM sessions WHERE session_id = ?", (session_id,))
    ).fetchone()
    if row is None:
        return StoreError(f"no session {session_id!r} in {path}")
    lease = await lease_of(db, session_id)
    now = "" if lease is None else f"; {lease['holder']} holds it now"
    return SessionConflictError(
        f"session {session_id!r} was written or taken over by another host since this one "
        f"loaded it (version {row['version']}, expected {version}{now}); this host stops "
        "writing it, so nothing the other wrote is lost"
    )
