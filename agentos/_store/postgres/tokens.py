"""Continuation tokens in PostgreSQL: rows in ``tokens``, completed once (telling the session's
holder at once, ``news``), deleted a while after they expire."""

from __future__ import annotations

import json
from collections.abc import Sequence

from agentos._store.postgres.connection import Database, Db
from agentos._store.postgres.news import announce
from agentos._store.protocol import Completion, StoredToken
from agentos._store.records import text_column, token_from
from components import Json


class TokenRows:
    """The ``SessionStore`` token operations over one database."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def add(self, token: StoredToken) -> None:
        await self._database.all(
            "INSERT INTO tokens (token, session_id, call_id, provider_call_id, tool_name, "
            "tool_input, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
            "RETURNING 1",
            token.token,
            token.session_id,
            token.call_id,
            token.provider_call_id,
            token.tool_name,
            json.dumps(token.tool_input),
            token.created_at,
            token.expires_at,
        )

    async def complete(
        self, token: str, result: Json = None, *, error: str | None = None
    ) -> Completion:
        now = self._database.now()

        async def complete(db: Db) -> Completion:
            row = await db.fetchrow(
                "SELECT session_id, completed_at, expires_at FROM tokens WHERE token = $1 "
                "FOR UPDATE",
                token,
            )
            if row is None:
                return Completion.UNKNOWN
            if row["completed_at"] is not None:
                return Completion.ALREADY_COMPLETED
            if row["expires_at"] is not None and row["expires_at"] <= now:
                return Completion.EXPIRED
            await db.execute(
                "UPDATE tokens SET completed_at = $1, result = $2, error = $3 WHERE token = $4",
                now,
                json.dumps(result),
                text_column(error),
                token,
            )
            await announce(db, row["session_id"])
            return Completion.APPLIED

        return await self._database.transaction(complete)

    async def get(self, token: str) -> StoredToken | None:
        row = await self._database.one("SELECT * FROM tokens WHERE token = $1", token)
        return None if row is None else token_from(row, self._database.now())

    async def of_session(self, session_id: str) -> list[StoredToken]:
        rows = await self._database.all(
            "SELECT * FROM tokens WHERE session_id = $1 ORDER BY created_at", session_id
        )
        now = self._database.now()
        return [token_from(row, now) for row in rows]

    async def completed(self, tokens: Sequence[str]) -> list[StoredToken]:
        rows = await self._database.all(
            "SELECT * FROM tokens WHERE token = ANY($1::text[]) AND completed_at IS NOT NULL "
            "ORDER BY completed_at",
            list(tokens),
        )
        now = self._database.now()
        return [token_from(row, now) for row in rows]

    async def delete_expired(self, grace: float = 0.0) -> int:
        rows = await self._database.all(
            "DELETE FROM tokens WHERE expires_at IS NOT NULL AND expires_at <= $1 RETURNING 1",
            self._database.now() - grace,
        )
        return len(rows)
