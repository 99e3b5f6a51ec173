"""The live mirror of calls in the store: rows in ``calls``, and ``cancel_requests``.

The host holding a session writes its calls' rows (``Host(call_mirror_period=...)``,
``_host/mirror.py``); any process reads them, and leaves a cancel request that
the holder applies and answers. Nothing here is needed to resume a session:
the history and the tokens are.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from agentos._store.protocol import CancelRequest, MirroredCall
from agentos._store.sqlite.connection import Database

_COLUMNS = (
    "call_id, session_id, provider_call_id, tool_name, tool_input, status, deferred, progress, "
    "progress_count, result, error_kind, error_message, cancel_reason, created_at, started_at, "
    "ended_at, updated_at, holder"
)
WRITE_CALL = f"INSERT OR REPLACE INTO calls ({_COLUMNS}) VALUES ({', '.join('?' * 18)})"
ANSWER = (
    "UPDATE cancel_requests SET answered_at = ?, answer = ? WHERE call_id = ? AND requested_at = ?"
)
"""An answer lands only on the request it answers (not on a newer one made meanwhile)."""


class CallRows:
    """The ``SessionStore`` mirror and cancel-request operations over one database."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def write(self, calls: Sequence[MirroredCall], answers: Sequence[CancelRequest]) -> None:
        if not calls and not answers:
            return
        async with self._database.transaction() as db:
            if calls:
                await db.executemany(WRITE_CALL, [_row(call) for call in calls])
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
        return [_call(row) for row in rows]

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
        return None if row is None else _request(row)

    async def pending(self, holder: str) -> list[CancelRequest]:
        rows = await self._database.all(
            "SELECT r.* FROM cancel_requests AS r JOIN leases AS l USING (session_id) "
            "WHERE r.answered_at IS NULL AND l.holder = ? ORDER BY r.requested_at",
            (holder,),
        )
        return [_request(row) for row in rows]


def _row(call: MirroredCall) -> tuple[Any, ...]:
    return (
        call.call_id,
        call.session_id,
        call.provider_call_id,
        call.tool_name,
        json.dumps(call.tool_input) if call.tool_input else "{}",
        call.status,
        int(call.deferred),
        None if call.progress is None else json.dumps(call.progress),
        call.progress_count,
        None if call.result is None else json.dumps(call.result),
        call.error_kind,
        call.error_message,
        call.cancel_reason,
        call.created_at,
        call.started_at,
        call.ended_at,
        call.updated_at,
        call.holder,
    )


def _call(row: sqlite3.Row) -> MirroredCall:
    fields = _decoded(row, ("tool_input", "progress", "result"))
    fields["deferred"] = bool(fields["deferred"])
    return MirroredCall(**fields)


def _request(row: sqlite3.Row) -> CancelRequest:
    return CancelRequest(**_decoded(row, ("answer",)))


def _decoded(row: sqlite3.Row, json_columns: tuple[str, ...]) -> dict[str, Any]:
    """The row's columns by name (they are the dataclass's fields), JSON ones parsed."""
    fields = {name: row[name] for name in row.keys()}  # noqa: SIM118 - a Row is no mapping
    for name in json_columns:
        if fields[name] is not None:
            fields[name] = json.loads(fields[name])
    return fields
