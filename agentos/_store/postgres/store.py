"""The server store: sessions in PostgreSQL (through asyncpg), shared by hosts on many machines.

The same tables (``_store/sql/``, written once), schema story and group commit as the
SQLite store: turns waiting at one moment share a transaction (``commit``: one statement
per table for the batch). This package holds what is PostgreSQL's own: the pool
(``pool``, ``connection``, ``tx``), the bounds on a stalled host (``bounds``), the
schema's history and the news. A session is owned by one host at a time, through a lease
row whose taking bumps the session's fenced version (``sql/leases``); a host that
lost the session writes nothing more of it. Cancel requests and completed
tokens left by any process ``NOTIFY`` the session's holder (``news``), which
also polls for them. Behind a transaction-mode pooler (``pooler=True``)
prepared statements are off and the news comes only by the poll, unless
``listen_dsn`` reaches the server directly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Self

import asyncpg

from agentos._store.postgres.bounds import IN_EACH_TRANSACTION
from agentos._store.postgres.commit import TurnWriter
from agentos._store.postgres.connection import Database
from agentos._store.postgres.connection import server_name
from agentos._store.postgres.connection import without_pooler
from agentos._store.postgres.news import News
from agentos._store.postgres.pool import connect
from agentos._store.postgres.schema import MIGRATIONS
from agentos._store.postgres.schema import SCHEMA_VERSION
from agentos._store.postgres.schema import prepare
from agentos._store.tables import TableStore

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "PostgresStore"]


class PostgresStore(TableStore):
    """A ``SessionStore`` in a PostgreSQL database. Use ``await PostgresStore.open(dsn)``."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        address: str,
        clock: Callable[[], float] | None,
        listen_dsn: str | None,
        first: str | None = None,
    ) -> None:
        self.address = address
        """The server and database, without a password."""
        self._database = database = Database(pool, address, clock, first)
        self._news = News(listen_dsn)
        super().__init__(database, TurnWriter(database).write_together)

    @classmethod
    async def open(
        cls,
        dsn: str,
        *,
        clock: Callable[[], float] | None = None,
        pool_size: int = 10,
        pooler: bool = False,
        listen_dsn: str | None = None,
        connect_timeout: float = 10.0,
    ) -> Self:
        """Connect (creating and migrating the schema if need be).

        ``clock``: the wall clock rows are stamped with and leases judged by
        [default: the server's for leases, so hosts whose clocks disagree agree on who
        holds a session, and ``time.time`` for the rest]. ``pool_size``: connections
        at most. ``pooler``: ``dsn`` is a transaction-mode pooler (PgBouncer and the
        like); ``?pooler=transaction`` in the DSN says the same, and a PgBouncer is found
        without either (it refuses startup settings). ``listen_dsn``: where
        to ``LISTEN`` [default: ``dsn``, or nowhere behind a pooler].
        """
        dsn, pooled = without_pooler(dsn)
        pooler = pooler or pooled
        name = server_name(dsn)
        pool, pooler = await connect(
            dsn, name, pooler=pooler, size=pool_size, connect_timeout=connect_timeout
        )
        first = IN_EACH_TRANSACTION if pooler else None
        store = cls(pool, name, clock, listen_dsn or (None if pooler else dsn), first)
        return await store._prepared(lambda: prepare(store._database))

    async def close(self) -> None:
        await self._news.close()
        await self._database.close()

    async def listen(self, callback: Callable[[str], None]) -> bool:
        """Other processes' news arrives too (``LISTEN``), unless only a pooler is reachable."""
        return await self._news.listen(callback)

    def unlisten(self, callback: Callable[[str], None]) -> None:
        self._news.unlisten(callback)
