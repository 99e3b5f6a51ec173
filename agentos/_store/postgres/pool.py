"""The store's connection pool: to the server itself, or through a transaction-mode pooler.

Reaching the server itself, each connection carries its bounds as startup
settings and caches prepared statements. Behind a pooler (said by
``?pooler=transaction``, or found: PgBouncer refuses startup settings it does
not know) a connection may change server between transactions, so nothing
is cached and the bounds are set in each transaction.
"""

from __future__ import annotations

import asyncpg

from agentos._store.postgres.bounds import SERVER_SETTINGS
from agentos._store.postgres.connection import COMMAND_TIMEOUT
from agentos._store.postgres.connection import LOST
from agentos._store.postgres.connection import failed
from agentos._store.postgres.connection import unreachable


async def connect(
    dsn: str, name: str, *, pooler: bool, size: int, connect_timeout: float
) -> tuple[asyncpg.Pool, bool]:
    """The pool, and whether it goes through a pooler (said, or found when opening)."""
    try:
        return await _pool(
            dsn, name, pooler=pooler, size=size, connect_timeout=connect_timeout
        ), pooler
    except asyncpg.ProtocolViolationError as error:
        if pooler or "unsupported startup parameter" not in str(error):
            raise failed(name, error) from None
    try:  # PgBouncer, reached without ?pooler=transaction: as if it had been said
        return await _pool(dsn, name, pooler=True, size=size, connect_timeout=connect_timeout), True
    except asyncpg.ProtocolViolationError as error:
        raise failed(name, error) from None


async def _pool(
    dsn: str, name: str, *, pooler: bool, size: int, connect_timeout: float
) -> asyncpg.Pool:
    """A pool whose first connection is made; its errors explained (a protocol violation
    aside: it may be a pooler refusing the settings)."""
    try:
        return await asyncpg.create_pool(
            dsn,
            min_size=0,  # no floor kept: asyncpg's refilling logs a traceback per retry
            init_size=1,
            max_size=size,
            statement_cache_size=0 if pooler else 100,
            timeout=connect_timeout,
            command_timeout=COMMAND_TIMEOUT,
            server_settings=None if pooler else SERVER_SETTINGS,
        )
    except asyncpg.ProtocolViolationError:
        raise
    except TimeoutError:
        raise unreachable(name, TimeoutError(f"no answer in {connect_timeout:g} s")) from None
    except LOST as error:
        raise unreachable(name, error) from None
    except (asyncpg.PostgresError, asyncpg.InterfaceError) as error:
        raise failed(name, error) from None
