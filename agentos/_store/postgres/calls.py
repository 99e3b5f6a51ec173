"""The live mirror of calls in PostgreSQL: rows in ``calls``, and ``cancel_requests`` (a new
request tells the session's holder at once, ``news``); old rows pruned (``MIRROR_KEPT``)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from agentos._store.postgres.connection import Database, Db
from agentos._store.postgres.news import announce
from agentos._store.protocol import CancelRequest, MirroredCall
from agentos._store.records import (
    CALL_COLUMN_COUNT,
    CALL_COLUMNS,
    MIRROR_KEPT,
    PRUNE_PERIOD,
    call_from,
    call_values,
    request_from,
    text_column,
)

_UPDATES = ", ".join(
    f"{name} = EXCLUDED.{name}" for name in CALL_COLUMNS.replace(" ", "").split(",")[1:]
)
WRITE_CALL = (
    f"INSERT INTO calls ({CALL_COLUMNS}) VALUES "
    f"({', '.join(f'${n}' for n in range(1, CALL_COLUMN_COUNT + 1))}) "
    f"ON CONFLICT (call_id) DO UPDATE SET {_UPDATES}"
)
ANSWER = (
    "UPDATE cancel_requests SET answered_at = $1, answer = $2 "
    "WHERE call_id = $3 AND requested_at = $4"
)
"""An answer lands only on the request it answers (not on a newer one made meanwhile)."""


class CallRows:
    """The ``SessionStore`` mirror and cancel-request operations over one database."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self._pruned_at = -math.inf

    async def write(self, calls: Sequence[MirroredCall], answers: Sequence[CancelRequest]) -> None:
        if not calls and not answers:
            return
        now = self._database.now()

        async def write(db: Db) -> None:
            if calls:
                await db.executemany(WRITE_CALL, [call_values(call) for call in calls])
                if now - self._pruned_at >= PRUNE_PERIOD:
                    self._pruned_at = now
                    await db.execute(
                        "DELETE FROM calls WHERE call_id IN (SELECT call_id FROM calls "
                        "WHERE ended_at IS NOT NULL AND updated_at < $1 "
                        "FOR UPDATE SKIP LOCKED)",
                        now - MIRROR_KEPT,
                    )
            if answers:
                await db.executemany(
                    ANSWER,
                    [
                        (a.answered_at, json.dumps(a.answer), a.call_id, a.requested_at)
                        for a in answers
                    ],
                )

        await self._database.transaction(write)

    async def find(self, *, session_id: str | None, call_id: str | None) -> list[MirroredCall]:
        rows = await self._database.all(
            "SELECT * FROM calls WHERE ($1::text IS NULL OR session_id = $1) "
            "AND ($2::text IS NULL OR call_id = $2 OR provider_call_id = $2) "
            "ORDER BY created_at, call_id",
            session_id,
            call_id,
        )
        return [call_from(row) for row in rows]

    async def counts(self) -> dict[str, dict[str, int]]:
        rows = await self._database.all(
            "SELECT c.session_id, c.status, COUNT(*) AS n FROM calls AS c JOIN leases AS l "
            "ON l.session_id = c.session_id AND l.holder = c.holder "
            "GROUP BY c.session_id, c.status"
        )
        counts: dict[str, dict[str, int]] = {}
        for row in rows:
            counts.setdefault(row["session_id"], {})[row["status"]] = int(row["n"])
        return counts

    async def request_cancel(self, call_id: str, session_id: str, reason: str) -> CancelRequest:
        reason = text_column(reason) or ""
        request = CancelRequest(call_id, session_id, reason, self._database.now())

        async def leave(db: Db) -> None:
            await db.execute(
                "INSERT INTO cancel_requests (call_id, session_id, reason, requested_at) "
                "VALUES ($1, $2, $3, $4) ON CONFLICT (call_id) DO UPDATE SET "
                "session_id = EXCLUDED.session_id, reason = EXCLUDED.reason, "
                "requested_at = EXCLUDED.requested_at, answered_at = NULL, answer = NULL",
                call_id,
                session_id,
                reason,
                request.requested_at,
            )
            await announce(db, session_id)

        await self._database.transaction(leave)
        return request

    async def request_of(self, call_id: str) -> CancelRequest | None:
        row = await self._database.one("SELECT * FROM cancel_requests WHERE call_id = $1", call_id)
        return None if row is None else request_from(row)

    async def pending(self, holder: str) -> list[CancelRequest]:
        rows = await self._database.all(
            "SELECT r.* FROM cancel_requests AS r JOIN leases AS l USING (session_id) "
            "WHERE r.answered_at IS NULL AND l.holder = $1 ORDER BY r.requested_at",
            holder,
        )
        return [request_from(row) for row in rows]
