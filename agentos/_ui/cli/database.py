"""Which database the command line uses: ``--db`` / ``$AGENTOS_DB``, a file or a server."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode, urlsplit

from agentos import SqliteStore, is_postgres_address, open_store

if TYPE_CHECKING:
    from agentos import PostgresStore


@dataclass(frozen=True)
class Database:
    """A session database's address: an SQLite file's path, or a ``postgresql://`` URL."""

    address: str

    @classmethod
    def chosen(cls, given: str | None) -> Database:
        """``--db``, else ``$AGENTOS_DB``, else the user's data folder's ``agentos.db``."""
        return cls(given or os.environ.get("AGENTOS_DB") or str(SqliteStore.default_path()))

    @property
    def is_server(self) -> bool:
        return is_postgres_address(self.address)

    def exists(self) -> bool:
        """Whether there is anything to read: a server always is (its schema is made on open)."""
        return self.is_server or Path(self.address).exists()

    async def open(self) -> SqliteStore | PostgresStore:
        return await open_store(self.address)

    def __str__(self) -> str:
        """The address as messages show it: a server's without its password."""
        if not self.is_server:
            return self.address
        parts = urlsplit(self.address)
        user, at, hosts = parts.netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}{at}{hosts}"
        query = [
            (key, "***" if key == "password" else value)
            for key, value in parse_qsl(parts.query, keep_blank_values=True)
        ]
        return parts._replace(netloc=netloc, query=urlencode(query, safe="*")).geturl()
