"""Which database the command line uses: ``--db`` / ``$AGENTOS_DB``, a file or a server."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl
from urllib.parse import urlencode
from urllib.parse import urlsplit

import click

from agentos import SqliteStore
from agentos import open_store
from agentos.stores import is_postgres_address

if TYPE_CHECKING:
    from agentos import PostgresStore


@dataclass(frozen=True)
class Database:
    """A session database's address: an SQLite file's path, or a ``postgresql://`` URL."""

    address: str
    named_by: str | None = "--db"
    """Who named it (``--db``, ``AGENTOS_DB``); None: the default, whose folder is made."""

    @classmethod
    def chosen(cls, given: str | None) -> Database:
        """``--db``, else ``$AGENTOS_DB``, else the user's data folder's ``agentos.db``."""
        if given:
            return cls(given)
        if os.environ.get("AGENTOS_DB"):
            return cls(os.environ["AGENTOS_DB"], "AGENTOS_DB")
        return cls(str(SqliteStore.default_path()), None)

    @property
    def is_server(self) -> bool:
        return is_postgres_address(self.address)

    def exists(self) -> bool:
        """Whether there is anything to read: a server always is (its schema is made on open)."""
        return self.is_server or Path(self.address).exists()

    async def open(self) -> SqliteStore | PostgresStore:
        """The store; a file in a folder that does not exist is refused (a typo would
        otherwise make a new, empty database somewhere), the default's folder is made."""
        folder = Path(self.address).parent
        if self.named_by is not None and not self.is_server and not folder.exists():
            raise click.ClickException(
                f"{self.named_by} {self.address}: the folder {folder} does not exist "
                "(create it, or name a file in a folder that does)"
            )
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
