"""The store's asyncpg pool: transactions retried across a lost connection, errors explained.

A database restarted under a running host leaves dead connections in the
pool; the first statement on one fails, so a transaction that fails before
its ``COMMIT`` was sent is tried again on a fresh connection (a few times,
while the server comes back). A ``COMMIT`` whose answer was lost is never
retried: the error says its outcome is unknown. Every other error becomes one
``StoreError`` naming the server (never the password) and what to do.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any
from typing import TypeVar
from urllib.parse import parse_qsl
from urllib.parse import urlencode
from urllib.parse import urlsplit

import anyio
import asyncpg

from agentos._errors import StoreError
from agentos._store.batching import CommitOutcomeUnknown
from agentos._store.postgres.tx import Db
from agentos._store.postgres.tx import PgTx
from agentos._store.sql.dialect import POSTGRES
from agentos._store.sql.dialect import Tx

T = TypeVar("T")

RETRY_PAUSES = (0.05, 0.2, 0.5, 1.0)
"""Seconds between attempts at a transaction whose connection was lost before it committed."""

LOST = (
    OSError,
    asyncpg.PostgresConnectionError,
    asyncpg.CannotConnectNowError,
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
)
"""Errors that say the connection, not the statement, failed (a statement's timeout aside)."""
GOODBYE_READ = "cannot switch to state"
"""How asyncpg's ``InternalClientError`` begins when it read the server's goodbye (an idle
transaction ended, the backend terminated) before the socket's end: it refuses every next
statement on that connection, which is as good as lost."""
COMMAND_TIMEOUT = 30.0
"""Seconds a statement may take: a half-open connection or a stuck lock fails, never hangs."""


def is_lost(error: BaseException) -> bool:
    """Whether ``error`` says the connection went away (then a retry on a new one may do)."""
    if isinstance(error, TimeoutError):  # an OSError, but the server is there: too slow
        return False
    if isinstance(error, LOST):
        return True
    if isinstance(error, asyncpg.InternalClientError):
        return str(error).startswith(GOODBYE_READ)
    return isinstance(error, asyncpg.InterfaceError) and "connection is closed" in str(error)


def without_pooler(dsn: str) -> tuple[str, bool]:
    """The DSN without agentos's own ``pooler=transaction`` query option, and whether it had it
    (asyncpg would send an unknown option to the server as a setting)."""
    parts = urlsplit(dsn)
    query = parse_qsl(parts.query, keep_blank_values=True)
    kept = [(key, value) for key, value in query if key != "pooler"]
    modes = {value for key, value in query if key == "pooler"}
    if modes - {"transaction"}:
        raise StoreError(
            f"pooler={'/'.join(sorted(modes))} in the database address: only "
            "pooler=transaction is known (PgBouncer's transaction mode)"
        )
    return parts._replace(query=urlencode(kept)).geturl(), bool(modes)


def server_name(dsn: str) -> str:
    """``postgresql://user@host:port/db``, without a password: what error messages show."""
    parts = urlsplit(dsn)
    user, _, hosts = parts.netloc.rpartition("@")
    user = user.partition(":")[0]
    return f"{parts.scheme}://{user + '@' if user else ''}{hosts or 'localhost'}{parts.path}"


class Database:
    """The pool, the clock rows are stamped with, and how every statement's error reads
    (the ``sql.dialect.Database`` the tables are written against)."""

    dialect = POSTGRES

    def __init__(
        self,
        pool: asyncpg.Pool,
        name: str,
        clock: Callable[[], float] | None,
        first: str | None = None,
    ) -> None:
        self.pool = pool
        self.name = name
        self._first = first
        """A statement every transaction starts with (its bounds, behind a pooler)."""
        self.now = clock or _wall
        """What rows are stamped with."""
        self._server_time = clock is None

    async def lease_now(self) -> float:
        """The time leases are judged by: the server's, so that hosts whose clocks disagree
        agree on who holds what (a clock given to the store, in tests, is used instead)."""
        if not self._server_time:
            return self.now()
        row = await self.one("SELECT extract(epoch FROM clock_timestamp())::float8 AS now")
        assert row is not None
        return float(row["now"])

    async def transaction(self, work: Callable[[Tx], Awaitable[T]]) -> T:
        return await self.on_connection(lambda connection: work(PgTx(connection)))

    async def read(self, work: Callable[[Tx], Awaitable[T]]) -> T:
        """In a transaction too: what it reads is one moment's."""
        return await self.transaction(work)

    async def on_connection(self, work: Callable[[Db], Awaitable[T]]) -> T:
        """``work`` in one transaction, tried again (from the start) if the connection is
        lost before the ``COMMIT``; a lost ``COMMIT`` is ``CommitOutcomeUnknown``, never
        repeated."""
        for pause in (*RETRY_PAUSES, None):
            phase = "working"
            try:
                async with self.pool.acquire(timeout=COMMAND_TIMEOUT) as connection:
                    transaction = connection.transaction()
                    try:
                        await transaction.start()
                        if self._first is not None:
                            await connection.execute(self._first)
                        result = await work(connection)
                    except BaseException:
                        with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                            await transaction.rollback()
                        raise
                    phase = "committing"
                    await transaction.commit()
                    phase = "committed"
                return result
            except StoreError:
                raise  # the work's own verdict (a version conflict, say)
            except Exception as error:
                if phase == "committed":  # only giving the connection back failed
                    return result
                if phase == "committing" and (is_lost(error) or isinstance(error, TimeoutError)):
                    raise CommitOutcomeUnknown(
                        f"the connection to {self.name} was lost while a commit was sent "
                        f"({describe(error)}); it may or may not have been applied"
                    ) from None
                if isinstance(error, TimeoutError):
                    raise StoreError(
                        f"the database {self.name} did not answer within "
                        f"{COMMAND_TIMEOUT:g} s; nothing was written"
                    ) from None
                if not is_lost(error):
                    raise failed(self.name, error) from None
                if pause is None:
                    raise unreachable(self.name, error) from None
                await anyio.sleep(pause)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    async def one(self, sql: str, *parameters: Any) -> asyncpg.Record | None:
        return await self.on_connection(lambda connection: PgTx(connection).row(sql, *parameters))

    async def all(self, sql: str, *parameters: Any) -> list[asyncpg.Record]:
        return await self.on_connection(lambda connection: PgTx(connection).rows(sql, *parameters))

    async def close(self) -> None:
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(5):
                await self.pool.close()
                return
            self.pool.terminate()


def unreachable(name: str, error: BaseException) -> StoreError:
    return StoreError(
        f"cannot reach the database {name} ({describe(error)}); "
        "check that PostgreSQL is running and the address is right"
    )


def failed(name: str, error: Exception) -> StoreError:
    refused = asyncpg.InvalidPasswordError | asyncpg.InvalidAuthorizationSpecificationError
    if isinstance(error, refused):
        return StoreError(f"the database {name} refused the login: {error}")
    if isinstance(error, asyncpg.InvalidCatalogNameError):
        return StoreError(f"{error} on {name}; create it first (createdb)")
    if isinstance(error, asyncpg.InsufficientPrivilegeError):
        return StoreError(f"the database {name} refused: {error}; grant the user access")
    if isinstance(error, asyncpg.InterfaceError):  # the client's own: an address option, say
        return StoreError(f"cannot use the database {name}: {describe(error)}")
    return StoreError(f"the database {name} failed: {describe(error)}")


def _wall() -> float:
    return time.time()


def describe(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
