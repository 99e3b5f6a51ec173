"""The store's one aiosqlite connection: one transaction at a time, every error explained.

Sessions, leases, tokens and the group-commit writer share the connection;
``Database.writer`` makes their transactions take turns, and every
transaction first checks that the file is still the one opened.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiosqlite
import anyio

from agentos._errors import StoreError
from agentos._store.sqlite.file import FileWatch, explain


class Database:
    """The connection, its writer lock, the clock rows are stamped with, and the file watch."""

    def __init__(self, path: Path, connection: aiosqlite.Connection, clock: Callable[[], float]):
        self.path = path
        self.connection = connection
        self.now = clock
        self.writer = anyio.Lock()
        """One transaction at a time: sessions and token completions share the connection."""
        self.file = FileWatch(path)

    def transaction(self, *, take_writer: bool = True) -> Transaction:
        return Transaction(self, take_writer=take_writer)

    async def one(self, sql: str, parameters: tuple[Any, ...]) -> sqlite3.Row | None:
        try:
            cursor = await self.connection.execute(sql, parameters)
            row: sqlite3.Row | None = await cursor.fetchone()
        except sqlite3.Error as error:
            raise explain(self.path, error) from None
        return row

    async def all(self, sql: str, parameters: tuple[Any, ...]) -> list[sqlite3.Row]:
        try:
            rows = await (await self.connection.execute(sql, parameters)).fetchall()
        except sqlite3.Error as error:
            raise explain(self.path, error) from None
        return list(rows)

    async def close(self) -> None:
        with contextlib.suppress(StoreError):
            self.file.check()
        await self.connection.close()


class Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any error, errors explained."""

    def __init__(self, database: Database, *, take_writer: bool = True) -> None:
        self._database = database
        self._take_writer = take_writer
        """False when the caller already holds the writer lock."""

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
