"""Hosts hearing each other at once: ``NOTIFY`` when a process leaves news for a session (a
cancel request, a completed token), ``LISTEN`` on one connection of its own in each store.

NOTIFY is best-effort (a listener that was disconnected misses what was sent
meanwhile), so the host still polls the store every ``call_mirror_period``;
the news only wakes it early. A lost listening connection is opened again by
the next ``listen``, which the host calls every period.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import anyio
import asyncpg

from agentos._store.postgres.connection import LOST
from agentos._store.postgres.tx import CHANNEL

CONNECT_TIMEOUT = 5.0
"""Seconds a (re)connection may take: the host's mirror waits for it, once a period."""


class News:
    """One listening connection, and who to tell what it hears."""

    def __init__(self, dsn: str | None) -> None:
        self._dsn = dsn
        """Where to listen (None: nowhere, e.g. only a transaction-mode pooler is reachable)."""
        self._connection: asyncpg.Connection | None = None
        self._listeners: list[Callable[[str], None]] = []
        self._connecting = anyio.Lock()
        self._closed = False

    async def listen(self, callback: Callable[[str], None]) -> bool:
        """Call ``callback(session_id)`` for news from now on; whether the store is listening.

        Idempotent: calling it again with the same callback only reconnects if
        the listening connection was lost.
        """
        if callback not in self._listeners:
            self._listeners.append(callback)
        if self._dsn is None or self._closed:
            return False
        async with self._connecting:  # one listening connection, however many ask at once
            if self._connection is not None and not self._connection.is_closed():
                return True
            # Shielded: a connection cancelled half-made would leak; bounded all the same.
            with anyio.CancelScope(shield=True), anyio.move_on_after(CONNECT_TIMEOUT):
                connection = None
                try:
                    connection = await asyncpg.connect(
                        self._dsn, statement_cache_size=0, timeout=CONNECT_TIMEOUT
                    )
                    await connection.add_listener(CHANNEL, self._heard)
                except (*LOST, asyncpg.PostgresError, asyncpg.InterfaceError):
                    if connection is not None:
                        connection.terminate()
                    return False
                if self._closed:  # closed while connecting
                    connection.terminate()
                    return False
                self._connection = connection
                return True
            if connection is not None:  # the deadline passed after it connected
                connection.terminate()
            return False

    def unlisten(self, callback: Callable[[str], None]) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(callback)

    def _heard(self, _connection: object, _pid: int, _channel: str, payload: object) -> None:
        for callback in list(self._listeners):
            callback(str(payload))

    async def close(self) -> None:
        self._closed = True
        connection, self._connection = self._connection, None
        if connection is not None:
            with anyio.CancelScope(shield=True):
                try:
                    await connection.close(timeout=2)
                except (*LOST, asyncpg.PostgresError, TimeoutError):
                    connection.terminate()
