"""The leases a host holds in its store: one per loaded session, renewed, given up.

While a lease holds, another host (another process) cannot load the session
unless it steals it; a session whose lease was taken over is told so, and
stops writing, so nothing the new owner writes is lost.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
from collections.abc import Callable
from collections.abc import Mapping

import anyio

from agentos._errors import StoreError
from agentos._kernel.clock import Clock
from agentos._kernel.clock import sleep
from agentos._store.protocol import SessionStore

_hosts = itertools.count(1)


class LeaseKeeper:
    """Takes, renews every ``period`` seconds (each good for ``expiry``) and releases leases."""

    def __init__(
        self, store: SessionStore | None, holder: str | None, *, period: float, expiry: float | None
    ) -> None:
        if period <= 0:
            raise ValueError(f"lease_period must be positive, got {period!r}")
        expiry = 3 * period if expiry is None else expiry
        if expiry <= period:
            raise ValueError(
                f"lease_expiry ({expiry!r}) must be longer than lease_period "
                f"({period!r}), or leases lapse between renewals"
            )
        self.store = store
        self.holder = holder or _holder_name()
        self.period = period
        self.expiry = expiry
        self.held: set[str] = set()
        """Sessions whose lease this host holds."""

    async def acquire(self, session_id: str, *, steal: bool) -> int | None:
        """Take the session's lease; its version (None: no such session)."""
        assert self.store is not None
        version = await self.store.acquire_lease(
            session_id, self.holder, ttl=self.expiry, steal=steal
        )
        if version is not None:
            self.held.add(session_id)
        return version

    async def release(self, session_id: str) -> None:
        """Give the session's lease up (when it is unloaded, or could not be loaded)."""
        if self.store is None or session_id not in self.held:
            return
        self.held.discard(session_id)
        with anyio.CancelScope(shield=True), contextlib.suppress(StoreError):
            await self.store.release_lease(session_id, self.holder)

    async def release_all(self) -> None:
        """Give every lease up, shielded: the host is closing, perhaps cancelled."""
        if self.store is None or not self.held:
            return
        self.held.clear()
        with anyio.CancelScope(shield=True), contextlib.suppress(StoreError):
            await self.store.release_leases(self.holder)

    async def keep(self, clock: Clock, lost: Callable[[str, str | None], None]) -> None:
        """Renew the leases every period; ``lost(session, new holder)`` for each taken over."""
        store = self.store
        assert store is not None
        while True:
            await sleep(clock, self.period)
            if not self.held:
                continue
            try:
                taken = await store.renew_leases(self.holder, list(self.held), ttl=self.expiry)
            except Exception:  # the sessions' commits report it; the next period tries again
                continue
            self._lose(taken, lost)

    async def holders(self, lost: Callable[[str, str | None], None]) -> dict[str, str]:
        """Who holds each session now: this host for those it holds, else the store's live
        leases; a session another host took since the last renewal is ``lost`` at once."""
        if self.store is None:
            return {}
        live = await self.store.live_leases()
        self._lose({s: live[s] for s in self.held if live.get(s, self.holder) != self.holder}, lost)
        unlisted = [s for s in self.held if s not in live]
        if unlisted:  # taken and let go since (or lapsed): renewing says which
            with contextlib.suppress(StoreError):
                taken = await self.store.renew_leases(self.holder, unlisted, ttl=self.expiry)
                self._lose(taken, lost)
        return live | dict.fromkeys(self.held, self.holder)

    def _lose(
        self, taken: Mapping[str, str | None], lost: Callable[[str, str | None], None]
    ) -> None:
        for session_id, holder in taken.items():
            self.held.discard(session_id)
            lost(session_id, holder)


def _holder_name() -> str:
    """``pid N on HOSTNAME``; a process's second and later hosts add ``, host K``."""
    number = next(_hosts)
    name = f"pid {os.getpid()} on {socket.gethostname()}"
    return name if number == 1 else f"{name}, host {number}"
