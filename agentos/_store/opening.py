"""One address for every store: a ``postgresql://`` URL, or the path of an SQLite file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from agentos._store.sqlite.store import SqliteStore

if TYPE_CHECKING:
    from agentos._store.postgres.store import PostgresStore

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_address(address: str | os.PathLike[str]) -> bool:
    """Whether ``address`` names a PostgreSQL server rather than a file."""
    return isinstance(address, str) and address.startswith(POSTGRES_SCHEMES)


async def open_store(address: str | os.PathLike[str] | None = None) -> SqliteStore | PostgresStore:
    """The store ``address`` names [default: ``$AGENTOS_DB``, else the user's SQLite file].

    A ``postgresql://`` address opens a ``PostgresStore`` (the ``agentos[postgres]``
    extra); anything else is an SQLite file, created if need be.
    """
    if address is None:
        address = os.environ.get("AGENTOS_DB") or SqliteStore.default_path()
    if is_postgres_address(address):
        from agentos._store.postgres.store import PostgresStore

        return await PostgresStore.open(str(address))
    return await SqliteStore.open(Path(address))
