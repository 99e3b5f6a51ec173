"""The tables' SQL on a PostgreSQL connection (``sql.dialect.Tx``): ``?`` numbered ``$1``,
``$2``..., a write's row count read off its command tag, news sent with ``NOTIFY``."""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from agentos._store.postgres.bounds import lock_wait
from agentos._store.sql.dialect import Locked

if TYPE_CHECKING:
    Db = PoolConnectionProxy[asyncpg.Record]
    """A connection of the pool, as a transaction's work gets it."""
else:
    Db = PoolConnectionProxy

CHANNEL = "agentos_news"
"""The channel of ``NOTIFY``; each notification's payload is the session id the news is for."""


@functools.lru_cache(maxsize=512)
def numbered(sql: str) -> str:
    """``?`` placeholders as ``$1``, ``$2``... in order (no ``?`` stands in our SQL's text)."""
    counter = itertools.count(1)
    return re.sub(r"\?", lambda _: f"${next(counter)}", sql)


def row_count(tag: str) -> int:
    """The row count of a command tag such as ``UPDATE 3`` or ``INSERT 0 1`` (0 for one
    without, such as ``CREATE TABLE``)."""
    last = tag.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else 0


class PgTx:
    """Statements on one connection of the pool, inside the transaction it holds."""

    def __init__(self, connection: Db) -> None:
        self.connection = connection

    async def row(self, sql: str, *parameters: Any) -> asyncpg.Record | None:
        row: asyncpg.Record | None = await self.connection.fetchrow(numbered(sql), *parameters)
        return row

    async def rows(self, sql: str, *parameters: Any) -> list[asyncpg.Record]:
        return list(await self.connection.fetch(numbered(sql), *parameters))

    async def run(self, sql: str, *parameters: Any) -> int:
        try:
            return row_count(await self.connection.execute(numbered(sql), *parameters))
        except asyncpg.LockNotAvailableError:
            raise Locked("a row stayed locked by another transaction") from None

    async def run_many(self, sql: str, rows: Sequence[tuple[Any, ...]]) -> None:
        await self.connection.executemany(numbered(sql), rows)

    async def announce(self, session_id: str) -> None:
        await self.connection.execute("SELECT pg_notify($1, $2)", CHANNEL, session_id)

    async def bound_lock_wait(self, *, steal: bool) -> None:
        await self.connection.execute(lock_wait(steal))
