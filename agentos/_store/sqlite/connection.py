"""The store's one aiosqlite connection: one transaction at a time, every error explained.

Sessions, leases, tokens and the group-commit writer share the connection;
``Database.writer`` makes their transactions take turns, and every
transaction first checks that the file is still the one opened. It is the
``sql.dialect.Database`` the tables are written against.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from typing import TypeVar

import aiosqlite
import anyio

from agentos._errors import StoreError
from agentos._store.sql.dialect import SQLITE
from agentos._store.sql.dialect import Tx
from agentos._store.sqlite.file import FileWatch
from agentos._store.sqlite.file import explain

T = TypeVar("T")


class SqliteTx:
    """Statements on the connection, in the transaction that holds it (``Tx``)."""

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self.connection = connection

    async def row(self, sql: str, *parameters: Any) -> sqlite3.Row | None:
        row: sqlite3.Row | None = await (await self.connection.execute(sql, parameters)).fetchone()
        return row

    async def rows(self, sql: str, *parameters: Any) -> list[sqlite3.Row]:
        return list(await (await self.connection.execute(sql, parameters)).fetchall())

    async def run(self, sql: str, *parameters: Any) -> int:
        return int((await self.connection.execute(sql, parameters)).rowcount)

    async def run_many(self, sql: str, rows: Sequence[tuple[Any, ...]]) -> None:
        await self.connection.executemany(sql, rows)

    async def announce(self, session_id: str) -> None:
        """No one to tell: other processes poll the file."""

    async def bound_lock_wait(self, *, steal: bool) -> None:
        """Nothing: a transaction holds the whole file from its start."""


class Database:
    """The connection, its writer lock, the clock rows are stamped with, and the file watch."""

    dialect = SQLITE

    def __init__(self, path: Path, connection: aiosqlite.Connection, clock: Callable[[], float]):
        self.path = path
        self.name = str(path)
        self.connection = connection
        self.now = clock
        self.writer = anyio.Lock()
        """One transaction at a time: sessions and token completions share the connection."""
        self.file = FileWatch(path)

    async def lease_now(self) -> float:
        return self.now()

    async def transaction(self, work: Callable[[Tx], Awaitable[T]]) -> T:
        return await self.writing(work)

    async def writing(
        self, work: Callable[[SqliteTx], Awaitable[T]], *, take_writer: bool = True
    ) -> T:
        """``work`` in one ``BEGIN IMMEDIATE`` transaction, on the connection itself
        (``take_writer=False``: the caller holds ``writer`` already, as the group commit
        does)."""
        async with Transaction(self, take_writer=take_writer) as connection:
            return await work(SqliteTx(connection))

    async def read(self, work: Callable[[Tx], Awaitable[T]]) -> T:
        return await self._reading(work)

    async def _reading(self, work: Callable[[SqliteTx], Awaitable[T]]) -> T:
        """Outside a transaction and without the writer lock: WAL readers never wait."""
        try:
            return await work(SqliteTx(self.connection))
        except sqlite3.Error as error:
            raise explain(self.path, error) from None

    async def one(self, sql: str, *parameters: Any) -> sqlite3.Row | None:
        return await self._reading(lambda tx: tx.row(sql, *parameters))

    async def all(self, sql: str, *parameters: Any) -> list[sqlite3.Row]:
        return await self._reading(lambda tx: tx.rows(sql, *parameters))

    async def close(self) -> None:
        with contextlib.suppress(StoreError):
            self.file.check()
        await self.connection.close()


class Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any error, errors explained."""

    def __init__(self, database: Database, *, take_writer: bool = True) -> None:
        self._database = database
        self._take_writer = take_writer

    async def __aenter__(self) -> aiosqlite.Connection:
        database = self._database
        if self._take_writer:
            await database.writer.acquire()
        try:
            database.file.check()
            await database.connection.execute("BEGIN IMMEDIATE")
        except BaseException as error:
            if not isinstance(error, sqlite3.Error | StoreError):
                await rollback(database.connection)  # cancelled: the BEGIN may still have run
            self._release()
            if isinstance(error, sqlite3.Error):
                raise explain(database.path, error) from None
            raise
        return database.connection

    def _release(self) -> None:
        if self._take_writer:
            self._database.writer.release()

    async def __aexit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        db = self._database.connection
        try:
            if exc_type is not None:
                await rollback(db)
                if issubclass(exc_type, sqlite3.Error):
                    error = rest[0]
                    assert isinstance(error, sqlite3.Error)
                    raise explain(self._database.path, error) from None
                return
            try:
                await db.commit()
            except sqlite3.Error as error:
                await rollback(db)
                raise explain(self._database.path, error) from None
        finally:
            self._release()


async def rollback(db: aiosqlite.Connection) -> None:
    """Shielded: a cancelled transaction must not stay open on the shared connection."""
    with anyio.CancelScope(shield=True), contextlib.suppress(sqlite3.Error):
        await db.rollback()  # nothing to undo is fine
