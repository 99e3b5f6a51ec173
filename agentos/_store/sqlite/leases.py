"""Who owns a session: its lease (holder, expiry) is a row in ``leases``.

Taking a lease bumps the session's version, so a host that lost the session
cannot replace what the new owner writes; a lease whose process is known to
be dead (same machine, pid gone) is free at once.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence

import aiosqlite

from agentos._errors import SessionInUseError
from agentos._store.liveness import lease_is_live, this_machine
from agentos._store.sqlite.connection import Database


class Leases:
    """The ``SessionStore`` lease operations over one database."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def acquire(
        self, session_id: str, holder: str, *, ttl: float, steal: bool = False
    ) -> int | None:
        now = self._database.now()
        async with self._database.transaction() as db:
            row = await (
                await db.execute("SELECT version FROM sessions WHERE session_id = ?", (session_id,))
            ).fetchone()
            if row is None:
                return None
            lease = await lease_of(db, session_id)
            if (
                lease is not None
                and lease["holder"] != holder
                and not steal
                and lease_is_live(lease["expires_at"], lease["hostname"], lease["pid"], now)
            ):
                raise SessionInUseError(session_id, lease["holder"], lease["expires_at"] - now)
            await db.execute(
                "INSERT OR REPLACE INTO leases (session_id, holder, pid, hostname, renewed_at, "
                "expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, holder, os.getpid(), this_machine(), now, now + ttl),
            )
            version = int(row["version"]) + 1
            await db.execute(
                "UPDATE sessions SET version = ? WHERE session_id = ?", (version, session_id)
            )
        return version

    async def renew(
        self, holder: str, session_ids: Sequence[str], *, ttl: float
    ) -> dict[str, str | None]:
        now = self._database.now()
        async with self._database.transaction() as db:
            await db.execute(
                "UPDATE leases SET renewed_at = ?, expires_at = ? WHERE holder = ?",
                (now, now + ttl, holder),
            )
            rows = await (
                await db.execute("SELECT session_id FROM leases WHERE holder = ?", (holder,))
            ).fetchall()
            held = {row["session_id"] for row in rows}
            lost: dict[str, str | None] = {}
            for session_id in session_ids:
                if session_id not in held:
                    lease = await lease_of(db, session_id)
                    lost[session_id] = None if lease is None else lease["holder"]
        return lost

    async def release(self, session_id: str, holder: str) -> None:
        async with self._database.transaction() as db:
            await db.execute(
                "DELETE FROM leases WHERE session_id = ? AND holder = ?", (session_id, holder)
            )

    async def live(self) -> dict[str, str]:
        now = self._database.now()
        rows = await self._database.all("SELECT * FROM leases", ())
        return {
            row["session_id"]: row["holder"]
            for row in rows
            if lease_is_live(row["expires_at"], row["hostname"], row["pid"], now)
        }

    async def release_all(self, holder: str) -> None:
        async with self._database.transaction() as db:
            await db.execute("DELETE FROM leases WHERE holder = ?", (holder,))


async def lease_of(db: aiosqlite.Connection, session_id: str) -> sqlite3.Row | None:
    """The session's lease row, expired or not (None: nobody ever held it, or it was released)."""
    cursor = await db.execute("SELECT * FROM leases WHERE session_id = ?", (session_id,))
    row: sqlite3.Row | None = await cursor.fetchone()
    return row
