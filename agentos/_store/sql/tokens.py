"""Continuation tokens: rows in ``tokens``, completed once (telling the session's holder at
once, where the backend can), deleted a while after they expire (until then a resumed
session can tell its model the call expired)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from agentos._store.protocol import Completion
from agentos._store.protocol import StoredToken
from agentos._store.records import text_column
from agentos._store.records import token_from
from agentos._store.sql.dialect import Table
from agentos._store.sql.dialect import Tx
from agentos._store.sql.dialect import marks
from components import Json

CHUNK = 500
"""Tokens looked up by one statement (SQLite limits a statement's parameters)."""


class TokenRows(Table):
    """The ``SessionStore`` token operations over one database."""

    async def add(self, token: StoredToken) -> None:
        await self._write(
            "INSERT INTO tokens (token, session_id, call_id, provider_call_id, tool_name, "
            "tool_input, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
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
        lock = self._database.dialect.for_update

        async def complete(tx: Tx) -> Completion:
            row = await tx.row(
                f"SELECT session_id, completed_at, expires_at FROM tokens WHERE token = ?{lock}",
                token,
            )
            if row is None:
                return Completion.UNKNOWN
            if row["completed_at"] is not None:
                return Completion.ALREADY_COMPLETED
            if row["expires_at"] is not None and row["expires_at"] <= now:
                return Completion.EXPIRED
            await tx.run(
                "UPDATE tokens SET completed_at = ?, result = ?, error = ? WHERE token = ?",
                now,
                json.dumps(result),
                text_column(error),
                token,
            )
            await tx.announce(row["session_id"])
            return Completion.APPLIED

        return await self._database.transaction(complete)

    async def get(self, token: str) -> StoredToken | None:
        row = await self._database.one("SELECT * FROM tokens WHERE token = ?", token)
        return None if row is None else token_from(row, self._database.now())

    async def of_session(self, session_id: str) -> list[StoredToken]:
        rows = await self._database.all(
            "SELECT * FROM tokens WHERE session_id = ? ORDER BY created_at", session_id
        )
        now = self._database.now()
        return [token_from(row, now) for row in rows]

    async def completed(self, tokens: Sequence[str]) -> list[StoredToken]:
        found: list[StoredToken] = []
        now = self._database.now()
        for first in range(0, len(tokens), CHUNK):
            chunk = tokens[first : first + CHUNK]
            rows = await self._database.all(
                f"SELECT * FROM tokens WHERE token IN ({marks(len(chunk))}) "
                "AND completed_at IS NOT NULL",
                *chunk,
            )
            found += [token_from(row, now) for row in rows]
        return sorted(found, key=lambda token: token.completed_at or 0.0)

    async def delete_expired(self, grace: float = 0.0) -> int:
        return await self._write(
            "DELETE FROM tokens WHERE expires_at IS NOT NULL AND expires_at <= ?",
            self._database.now() - grace,
        )
