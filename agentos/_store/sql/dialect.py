"""What a table module needs of a backend: a ``Database`` to run work in, a ``Tx`` to speak
SQL through, and the few words of SQL the two backends say differently (``Dialect``).

Tables write their SQL once, with ``?`` placeholders (a backend that numbers its own
renumbers them) and ``CAST`` where a parameter's type cannot be told from its place.
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import Protocol
from typing import TypeVar

from agentos._errors import StoreError
from agentos._store.records import Row

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Dialect:
    """The words of SQL that differ between the backends."""

    position: str
    """The function giving where a text starts in another, from 1 (0: nowhere)."""
    for_update: str
    """What a select ends with to lock the rows it reads until the transaction ends."""
    skip_locked: str
    """What a sub-select ends with to pass over, and lock, rows no one else has locked."""
    types: Mapping[str, str]
    """The column types of the schema's words (``real``: a time, ``big_integer``: a
    session's version, ``flag``: a yes or no)."""

    def ddl(self, *pieces: str) -> str:
        """Schema ``pieces`` (``sql/schema.py``) in this backend's column types, as one
        migration."""
        return "\n".join(piece.format(**self.types) for piece in pieces)


SQLITE = Dialect(
    "instr", "", "", types={"real": "REAL", "big_integer": "INTEGER", "flag": "INTEGER"}
)
"""One writer at a time holds the whole file: nothing to lock row by row."""
POSTGRES = Dialect(
    "strpos",
    " FOR UPDATE",
    " FOR UPDATE SKIP LOCKED",
    types={"real": "DOUBLE PRECISION", "big_integer": "BIGINT", "flag": "BOOLEAN"},
)


def marks(count: int) -> str:
    """``?, ?, ?``: the placeholders of an ``IN`` list of ``count`` values."""
    return ", ".join("?" * count)


class Locked(StoreError):
    """A row stayed locked by another transaction past the transaction's lock wait."""


class Tx(Protocol):
    """One transaction, open: statements run in it and are undone with it."""

    async def row(self, sql: str, *parameters: Any) -> Row | None: ...

    async def rows(self, sql: str, *parameters: Any) -> Sequence[Row]: ...

    async def run(self, sql: str, *parameters: Any) -> int:
        """Run a write; how many rows it changed."""
        ...

    async def run_many(self, sql: str, rows: Sequence[tuple[Any, ...]]) -> None:
        """Run a write once per row of parameters."""
        ...

    async def announce(self, session_id: str) -> None:
        """Tell other processes, once this commits, that ``session_id`` has news (a backend
        without news does nothing)."""
        ...

    async def bound_lock_wait(self, *, steal: bool) -> None:
        """Bound how long this transaction waits on rows others locked (``Locked`` after
        that; a steal waits longer); a backend that locks the whole database does nothing."""
        ...


class Database(Protocol):
    """A backend's connection: its name in errors, its clock, its dialect, where work runs."""

    dialect: Dialect

    @property
    def name(self) -> str:
        """The file or server, as errors name it (never a password)."""
        ...

    def now(self) -> float:
        """What rows are stamped with."""
        ...

    async def lease_now(self) -> float:
        """The time leases are judged by (every host's alike, where hosts share a server)."""
        ...

    async def transaction(self, work: Callable[[Tx], Awaitable[T]]) -> T:
        """``work`` in one write transaction, committed if it returns."""
        ...

    async def read(self, work: Callable[[Tx], Awaitable[T]]) -> T:
        """``work``, that only reads, as the backend reads best (it writes nothing)."""
        ...

    async def one(self, sql: str, *parameters: Any) -> Row | None:
        """The first row a query alone reads (None: none)."""
        ...

    async def all(self, sql: str, *parameters: Any) -> Sequence[Row]:
        """Every row a query alone reads."""
        ...


class Table:
    """One table's operations over one database."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def _write(self, sql: str, *parameters: Any) -> int:
        """One statement in a transaction of its own; how many rows it changed."""
        return await self._database.transaction(lambda tx: tx.run(sql, *parameters))
