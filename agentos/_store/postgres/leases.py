"""Who owns a session across hosts: its lease (holder, expiry) is a row in ``leases``, taken
with one statement that also bumps the session's version (the fence).

``INSERT ... ON CONFLICT DO UPDATE ... WHERE`` decides on the latest committed
lease row, under its row lock: of two hosts racing for an expired lease,
exactly one takes it, and the other sees the winner's live lease. A lease
whose process is known to be dead (same machine, pid gone) is free at once.
Expiry is judged by the server's clock, which every host shares. A take
never waits long on a row another transaction locked (a holder stalled
mid-transaction, say): the session is in use until the server ends it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import asyncpg

from agentos._errors import SessionInUseError, StoreError
from agentos._store.liveness import lease_is_live, this_machine
from agentos._store.postgres.bounds import lock_wait
from agentos._store.postgres.connection import Database, Db

TAKE = """
WITH taken AS (
    INSERT INTO leases (session_id, holder, pid, hostname, renewed_at, expires_at)
    SELECT session_id, $2, $3, $4, $5, $6 FROM sessions WHERE session_id = $1
    ON CONFLICT (session_id) DO UPDATE SET
        holder = EXCLUDED.holder, pid = EXCLUDED.pid, hostname = EXCLUDED.hostname,
        renewed_at = EXCLUDED.renewed_at, expires_at = EXCLUDED.expires_at
    WHERE leases.holder = EXCLUDED.holder OR leases.expires_at <= EXCLUDED.renewed_at
        OR $7 OR leases.holder = $8
    RETURNING session_id
)
UPDATE sessions SET version = sessions.version + 1 FROM taken
WHERE sessions.session_id = taken.session_id RETURNING sessions.version
"""
"""Take the lease if it is free, expired, ours, stolen ($7) or a dead process's ($8)."""
ATTEMPTS = 5
"""Lookups between takes, each time the lease changed hands under us."""


class Locked(StoreError):
    """The lease's or the session's row stayed locked by another transaction."""


class Leases:
    """The ``SessionStore`` lease operations over one database."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def acquire(
        self, session_id: str, holder: str, *, ttl: float, steal: bool = False
    ) -> int | None:
        now = await self._database.lease_now()
        dead: str | None = None
        for _ in range(ATTEMPTS):
            try:
                version = await self._take(session_id, holder, now, ttl, steal, dead)
            except Locked:
                raise await self._locked(session_id, now) from None
            if version is not None:
                return version
            lease = await self._lease(session_id)
            if lease is None:
                return None
            if lease["holder"] is None or lease["holder"] == dead:
                continue  # released, or its holder changed meanwhile: try again
            if not lease_is_live(lease["expires_at"], lease["hostname"], lease["pid"], now):
                dead = lease["holder"]
                continue
            raise SessionInUseError(session_id, lease["holder"], lease["expires_at"] - now)
        raise StoreError(f"the lease of session {session_id!r} kept changing hands; try again")

    async def _lease(self, session_id: str) -> asyncpg.Record | None:
        """The session's lease (a row of NULLs if none; None: no such session), read without
        waiting on locks."""
        return await self._database.one(
            "SELECT l.* FROM sessions AS s LEFT JOIN leases AS l USING (session_id) "
            "WHERE s.session_id = $1",
            session_id,
        )

    async def _locked(self, session_id: str, now: float) -> SessionInUseError:
        """In use: by the lease's holder, whose transaction (or another's) holds its rows."""
        lease = await self._lease(session_id)
        if lease is None or lease["holder"] is None:
            return SessionInUseError(session_id, "another host's transaction", 0.0)
        return SessionInUseError(session_id, lease["holder"], max(lease["expires_at"] - now, 0))

    async def _take(
        self, session_id: str, holder: str, now: float, ttl: float, steal: bool, dead: str | None
    ) -> int | None:
        async def take(db: Db) -> int | None:
            await db.execute(lock_wait(steal))
            try:
                version: int | None = await db.fetchval(
                    TAKE,
                    session_id,
                    holder,
                    os.getpid(),
                    this_machine(),
                    now,
                    now + ttl,
                    steal,
                    dead,
                )
            except asyncpg.LockNotAvailableError:
                raise Locked(f"the lease of {session_id!r} is locked") from None
            return version

        return await self._database.transaction(take)

    async def renew(
        self, holder: str, session_ids: Sequence[str], *, ttl: float
    ) -> dict[str, str | None]:
        now = await self._database.lease_now()

        async def renew(db: Db) -> dict[str, str | None]:
            rows = await db.fetch(
                "UPDATE leases SET renewed_at = $1, expires_at = $2 WHERE holder = $3 "
                "RETURNING session_id",
                now,
                now + ttl,
                holder,
            )
            held = {row["session_id"] for row in rows}
            missing = [session_id for session_id in session_ids if session_id not in held]
            lost: dict[str, str | None] = dict.fromkeys(missing)
            if missing:
                for row in await db.fetch(
                    "SELECT session_id, holder FROM leases WHERE session_id = ANY($1::text[])",
                    missing,
                ):
                    lost[row["session_id"]] = row["holder"]
            return lost

        return await self._database.transaction(renew)

    async def release(self, session_id: str, holder: str) -> None:
        await self._database.all(
            "DELETE FROM leases WHERE session_id = $1 AND holder = $2 RETURNING 1",
            session_id,
            holder,
        )

    async def release_all(self, holder: str) -> None:
        await self._database.all("DELETE FROM leases WHERE holder = $1 RETURNING 1", holder)

    async def live(self) -> dict[str, str]:
        now = await self._database.lease_now()
        rows = await self._database.all("SELECT * FROM leases WHERE expires_at > $1", now)
        return {
            row["session_id"]: row["holder"]
            for row in rows
            if lease_is_live(row["expires_at"], row["hostname"], row["pid"], now)
        }
