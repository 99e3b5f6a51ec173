"""The live mirror of calls in the store: rows in ``calls``, and ``cancel_requests``.

The host holding a session writes its calls' rows (``Host(call_mirror_period=...)``,
``_host/mirror.py``); any process reads them, and leaves a cancel request that
the holder applies and answers (told at once, where the backend can). Nothing here
is needed to resume a session: the history and the tokens are. Old rows are pruned
(``records.MIRROR_KEPT``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from agentos._store.protocol import ASKING
from agentos._store.protocol import CancelRequest
from agentos._store.protocol import MirroredCall
from agentos._store.records import CALL_COLUMN_COUNT
from agentos._store.records import CALL_COLUMNS
from agentos._store.records import MIRROR_KEPT
from agentos._store.records import PRUNE_PERIOD
from agentos._store.records import call_from
from agentos._store.records import call_values
from agentos._store.records import request_from
from agentos._store.records import text_column
from agentos._store.sql.dialect import Table
from agentos._store.sql.dialect import Tx
from agentos._store.sql.dialect import marks

_UPDATES = ", ".join(
    f"{name} = excluded.{name}" for name in CALL_COLUMNS.replace(" ", "").split(",")[1:]
)
WRITE_CALL = (
    f"INSERT INTO calls ({CALL_COLUMNS}) VALUES ({marks(CALL_COLUMN_COUNT)}) "
    f"ON CONFLICT (call_id) DO UPDATE SET {_UPDATES}"
)
ANSWER = (
    "UPDATE cancel_requests SET answered_at = ?, answer = ? WHERE call_id = ? AND requested_at = ?"
)
"""An answer lands only on the request it answers (not on a newer one made meanwhile)."""
REQUEST = (
    "INSERT INTO cancel_requests (call_id, session_id, reason, requested_at) "
    "VALUES (?, ?, ?, ?) ON CONFLICT (call_id) DO UPDATE SET "
    "session_id = excluded.session_id, reason = excluded.reason, "
    "requested_at = excluded.requested_at, answered_at = NULL, answer = NULL"
)
"""A new request replaces the call's earlier one, answered or not."""
PRUNE = (
    "DELETE FROM calls WHERE call_id IN (SELECT call_id FROM calls "
    "WHERE ended_at IS NOT NULL AND updated_at < ?{skip})"
)
"""Finished calls not written for ``MIRROR_KEPT`` seconds (another host's locked ones aside)."""


class CallRows(Table):
    """The ``SessionStore`` mirror and cancel-request operations over one database."""

    _pruned_at = -math.inf
    """When this store last pruned the mirror."""

    async def write(self, calls: Sequence[MirroredCall], answers: Sequence[CancelRequest]) -> None:
        if not calls and not answers:
            return
        now = self._database.now()

        async def write(tx: Tx) -> None:
            if calls:
                await tx.run_many(WRITE_CALL, [call_values(call) for call in calls])
                if now - self._pruned_at >= PRUNE_PERIOD:
                    self._pruned_at = now
                    await tx.run(
                        PRUNE.format(skip=self._database.dialect.skip_locked), now - MIRROR_KEPT
                    )
            if answers:
                await tx.run_many(
                    ANSWER,
                    [
                        (a.answered_at, json.dumps(a.answer), a.call_id, a.requested_at)
                        for a in answers
                    ],
                )

        await self._database.transaction(write)

    async def find(self, *, session_id: str | None, call_id: str | None) -> list[MirroredCall]:
        rows = await self._database.all(
            "SELECT * FROM calls WHERE (CAST(? AS TEXT) IS NULL OR session_id = ?) "
            "AND (CAST(? AS TEXT) IS NULL OR call_id = ? OR provider_call_id = ?) "
            "ORDER BY created_at, call_id",
            session_id,
            session_id,
            call_id,
            call_id,
            call_id,
        )
        return [call_from(row) for row in rows]

    async def counts(self) -> dict[str, dict[str, int]]:
        rows = await self._database.all(
            "SELECT c.session_id, c.status, COUNT(*) AS n, "
            "SUM(CASE WHEN c.question IS NULL THEN 0 ELSE 1 END) AS asking "
            "FROM calls AS c JOIN leases AS l "
            "ON l.session_id = c.session_id AND l.holder = c.holder "
            "GROUP BY c.session_id, c.status"
        )
        counts: dict[str, dict[str, int]] = {}
        for row in rows:
            session = counts.setdefault(row["session_id"], {})
            session[row["status"]] = int(row["n"])
            if row["status"] == "running" and row["asking"]:
                session[ASKING] = int(row["asking"])
        return counts

    async def request_cancel(self, call_id: str, session_id: str, reason: str) -> CancelRequest:
        reason = text_column(reason) or ""
        request = CancelRequest(call_id, session_id, reason, self._database.now())

        async def leave(tx: Tx) -> None:
            await tx.run(REQUEST, call_id, session_id, reason, request.requested_at)
            await tx.announce(session_id)

        await self._database.transaction(leave)
        return request

    async def request_of(self, call_id: str) -> CancelRequest | None:
        row = await self._database.one("SELECT * FROM cancel_requests WHERE call_id = ?", call_id)
        return None if row is None else request_from(row)

    async def pending(self, holder: str) -> list[CancelRequest]:
        rows = await self._database.all(
            "SELECT r.* FROM cancel_requests AS r JOIN leases AS l USING (session_id) "
            "WHERE r.answered_at IS NULL AND l.holder = ? ORDER BY r.requested_at",
            holder,
        )
        return [request_from(row) for row in rows]
