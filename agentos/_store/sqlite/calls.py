"""The live mirror of calls in the store: rows in ``calls``, and ``cancel_requests``.

The host holding a session writes its calls' rows (``Host(call_mirror_period=...)``,
``_host/mirror.py``); any process reads them, and leaves a cancel request that
the holder applies and answers. Nothing here is needed to resume a session:
the history and the tokens are. Old rows are pruned (``records.MIRROR_KEPT``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

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
from agentos._store.sqlite.connection import Database

WRITE_CALL = (
    f"INSERT OR REPLACE INTO calls ({CALL_COLUMNS}) VALUES ({', '.join('?' * CALL_COLUMN_COUNT)})"
)
ANSWER = (
    "UPDATE cancel_requests SET answered_at = ?, answer = ? WHERE call_id = ? AND requested_at = ?"
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
        async with self._database.transaction() as db:
            if calls:
                await db.executemany(WRITE_CALL, [call_values(call) for call in calls])
                now = self._database.now()
                if now - self._pruned_at >= PRUNE_PERIOD:
                    self._pruned_at = now
                    await db.execute(
                        "DELETE FROM calls WHERE ended_at IS NOT NULL AND updated_at < ?",
                        (now - MIRROR_KEPT,),
                    )
            if answers:
                await db.executemany(
                    ANSWER,
                    [
                        (a.answered_at, json.dumps(a.answer), a.call_id, a.requested_at)
                        for a in answers
                    ],
                )

    async def find(self, *, session_id: str | None, call_id: str | None) -> list[MirroredCall]:
        where, parameters = [], []
        if session_id is not None:
            where.append("session_id = ?")
            parameters.append(session_id)
        if call_id is not None:
            where.append("(call_id = ? OR provider_call_id = ?)")
            parameters += [call_id, call_id]
        sql = "SELECT * FROM calls"
        if where:
            sql += " WHERE " + " AND ".join(where)
        rows = await self._database.all(sql + " ORDER BY created_at, call_id", tuple(parameters))
        return [call_from(row) for row in rows]

    async def counts(self) -> dict[str, dict[str, int]]:
        rows = await self._database.all(
            "SELECT c.session_id, c.status, COUNT(*) AS n FROM calls AS c JOIN leases AS l "
            "ON l.session_id = c.session_id AND l.holder = c.holder "
            "GROUP BY c.session_id, c.status",
            (),
        )
        counts: dict[str, dict[str, int]] = {}
        for row in rows:
            counts.setdefault(row["session_id"], {})[row["status"]] = int(row["n"])
        return counts

    async def request_cancel(self, call_id: str, session_id: str, reason: str) -> CancelRequest:
        reason = text_column(reason) or ""
        request = CancelRequest(call_id, session_id, reason, self._database.now())
        async with self._database.transaction() as db:
            await db.execute(
                "INSERT OR REPLACE INTO cancel_requests (call_id, session_id, reason, "
                "requested_at) VALUES (?, ?, ?, ?)",
                (call_id, session_id, reason, request.requested_at),
            )
        return request

    async def request_of(self, call_id: str) -> CancelRequest | None:
        row = await self._database.one(
            "SELECT * FROM cancel_requests WHERE call_id = ?", (call_id,)
        )
        return None if row is None else request_from(row)

    async def pending(self, holder: str) -> list[CancelRequest]:
        rows = await self._database.all(
            "SELECT r.* FROM cancel_requests AS r JOIN leases AS l USING (session_id) "
            "WHERE r.answered_at IS NULL AND l.holder = ? ORDER BY r.requested_at",
            (holder,),
        )
        return [request_from(row) for row in rows]
