"""Who owns a session across hosts: its lease (holder, expiry) is a row in ``leases``, taken
in one transaction that also bumps the session's version (the fence).

``INSERT ... ON CONFLICT DO UPDATE ... WHERE`` decides on the latest committed
lease row, under its row lock: of two hosts racing for an expired lease,
exactly one takes it, and the other sees the winner's live lease. A lease
whose process is known to be dead (same machine, pid gone) is free at once.
Expiry is judged by ``Database.lease_now`` (PostgreSQL: the server's clock, which
every host shares). A take never waits long on a row another transaction locked
(a holder stalled mid-transaction, say): the session is in use until that ends.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from agentos._errors import SessionInUseError
from agentos._errors import StoreError
from agentos._store.liveness import lease_is_live
from agentos._store.liveness import this_machine
from agentos._store.records import Row
from agentos._store.sql.dialect import Locked
from agentos._store.sql.dialect import Table
from agentos._store.sql.dialect import Tx
from agentos._store.sql.dialect import marks

TAKE = """
INSERT INTO leases (session_id, holder, pid, hostname, renewed_at, expires_at)
SELECT session_id, ?, ?, ?, ?, ? FROM sessions WHERE session_id = ?
ON CONFLICT (session_id) DO UPDATE SET
    holder = excluded.holder, pid = excluded.pid, hostname = excluded.hostname,
    renewed_at = excluded.renewed_at, expires_at = excluded.expires_at
WHERE leases.holder = excluded.holder OR leases.expires_at <= excluded.renewed_at
    OR CAST(? AS BOOLEAN) OR leases.holder = ?
"""
"""Take the lease if it is free, expired, ours, stolen or a dead process's (the last two
parameters)."""
ATTEMPTS = 5
"""Lookups between takes, each time the lease changed hands under us."""


class Leases(Table):
    """The ``SessionStore`` lease operations over one database."""

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

    async def _lease(self, session_id: str) -> Row | None:
        """The session's lease (a row of NULLs if none; None: no such session), read without
        waiting on locks."""
        return await self._database.one(
            "SELECT l.* FROM sessions AS s LEFT JOIN leases AS l USING (session_id) "
            "WHERE s.session_id = ?",
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
        """The session's new version, if the lease was taken."""
        mine = (holder, os.getpid(), this_machine(), now, now + ttl)

        async def take(tx: Tx) -> int | None:
            await tx.bound_lock_wait(steal=steal)
            if not await tx.run(TAKE, *mine, session_id, steal, dead):
                return None
            await tx.run(
                "UPDATE sessions SET version = version + 1 WHERE session_id = ?", session_id
            )
            row = await tx.row("SELECT version FROM sessions WHERE session_id = ?", session_id)
            assert row is not None  # the lease was just taken from its row
            return int(row["version"])

        return await self._database.transaction(take)

    async def renew(
        self, holder: str, session_ids: Sequence[str], *, ttl: float
    ) -> dict[str, str | None]:
        now = await self._database.lease_now()

        async def renew(tx: Tx) -> dict[str, str | None]:
            await tx.run(
                "UPDATE leases SET renewed_at = ?, expires_at = ? WHERE holder = ?",
                now,
                now + ttl,
                holder,
            )
            rows = await tx.rows("SELECT session_id FROM leases WHERE holder = ?", holder)
            held = {row["session_id"] for row in rows}
            missing = [session_id for session_id in session_ids if session_id not in held]
            lost: dict[str, str | None] = dict.fromkeys(missing)
            if missing:
                for row in await tx.rows(
                    "SELECT session_id, holder FROM leases "
                    f"WHERE session_id IN ({marks(len(missing))})",
                    *missing,
                ):
                    lost[row["session_id"]] = row["holder"]
            return lost

        return await self._database.transaction(renew)

    async def release(self, session_id: str, holder: str) -> None:
        await self._write(
            "DELETE FROM leases WHERE session_id = ? AND holder = ?", session_id, holder
        )

    async def release_all(self, holder: str) -> None:
        await self._write("DELETE FROM leases WHERE holder = ?", holder)

    async def live(self) -> dict[str, str]:
        now = await self._database.lease_now()
        rows = await self._database.all("SELECT * FROM leases WHERE expires_at > ?", now)
        return {
            row["session_id"]: row["holder"]
            for row in rows
            if lease_is_live(row["expires_at"], row["hostname"], row["pid"], now)
        }
