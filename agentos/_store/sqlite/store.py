"""The embedded store: one SQLite file in WAL mode, reached through aiosqlite.

Each turn is committed in one transaction, so a crash loses at most the turn
in flight; turns of several sessions that wait to be written at the same
time share a transaction (group commit, ``commit``).
Migrations are versioned in ``schema_migrations`` and run once
(``schema``). A file that is corrupt, locked by another writer, of a
newer schema or not writable gets a ``StoreError`` naming the file and what
to do; nothing is ever overwritten.

The tables are written once for both backends (``_store/sql/``: sessions, leases,
tokens, the calls' mirror); this package holds what is SQLite's own: the connection
(``connection``), the file (``file``), the schema's history and how a batch of turns
is written (``commit``). A session is owned by one host at a time: its lease is a row
in ``leases``, and every write names the session version it expects, so a host that
lost the session cannot replace what the new owner wrote. A file or folder the store
creates is private to the user (0600, 0700); a file deleted or replaced under a
running store is noticed before the next write, which fails rather than going to the
old, unlinked file (``file``).
"""

from __future__ import annotations

import functools
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Self

import aiosqlite
import platformdirs

from agentos._errors import StoreError
from agentos._store.sqlite.commit import write_together
from agentos._store.sqlite.connection import Database
from agentos._store.sqlite.file import create_private
from agentos._store.sqlite.file import explain
from agentos._store.sqlite.schema import MIGRATIONS
from agentos._store.sqlite.schema import SCHEMA_VERSION
from agentos._store.sqlite.schema import prepare
from agentos._store.tables import TableStore

__all__ = ["BUSY_TIMEOUT_SECONDS", "MIGRATIONS", "SCHEMA_VERSION", "SqliteStore", "default_path"]

BUSY_TIMEOUT_SECONDS = 15.0
"""How long a statement waits for another process's write lock: long enough for a second
process to wait out the first one's migrations on a loaded machine, short enough to say so."""


def default_path() -> Path:
    """``$AGENTOS_DB``, else ``agentos.db`` in the user's data directory."""
    override = os.environ.get("AGENTOS_DB")
    if override:
        return Path(override)
    return Path(platformdirs.user_data_dir("agentos")) / "agentos.db"


class SqliteStore(TableStore):
    """A ``SessionStore`` in one SQLite file. Use ``await SqliteStore.open(path)``."""

    default_path = staticmethod(default_path)

    def __init__(self, path: Path, connection: aiosqlite.Connection, clock: Callable[[], float]):
        self.path = path
        self._db = connection
        self._database = database = Database(path, connection, clock)
        super().__init__(database, functools.partial(write_together, database), database.writer)

    @classmethod
    async def open(
        cls,
        path: str | Path | None = None,
        *,
        clock: Callable[[], float] = time.time,
        busy_timeout: float = BUSY_TIMEOUT_SECONDS,
    ) -> Self:
        """Open (creating and migrating if need be); wait up to ``busy_timeout`` for a lock."""
        path = Path(path) if path is not None else default_path()
        try:
            create_private(path)
        except OSError as error:
            raise StoreError(
                f"cannot create the database {path}: {error.strerror}; choose a writable location",
                other_file_helps=True,
            ) from None
        try:
            connection = await aiosqlite.connect(path, timeout=busy_timeout)
        except sqlite3.Error as error:
            raise explain(path, error) from None
        try:
            store = cls(path, connection, clock)
        except OSError as error:
            await connection.close()
            raise StoreError(f"cannot open the database {path}: {error.strerror}") from None
        return await store._prepared(lambda: prepare(store._database))

    async def close(self) -> None:
        await self._database.close()
