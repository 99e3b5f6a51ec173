"""The embedded store: one SQLite file in WAL mode, reached through aiosqlite.

Each turn is committed in one transaction, so a crash loses at most the turn
in flight; turns of several sessions that wait to be written at the same
time share a transaction (group commit).
Migrations are versioned in ``schema_migrations`` and run once. A file that
is corrupt, locked by another writer, of a newer schema or not writable gets
a ``StoreError`` naming the file and what to do; nothing is ever overwritten.

A session is owned by one host at a time: its lease (holder, expiry) is a
row in ``leases``, and every write names the session version it expects, so
a host that lost the session cannot replace what the new owner wrote. A
file or folder the store creates is private to the user (0600, 0700); a
file deleted or replaced under a running store is noticed before the next
write, which fails rather than going to the old, unlinked file.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import aiosqlite
import anyio
import platformdirs

from agentos._errors import SessionConflictError, SessionInUseError, StoreError
from agentos._provider import Message
from agentos._store import Completion, StoredSession, StoredToken
from components import Json

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        config TEXT NOT NULL,
        status TEXT NOT NULL,
        parent_session_id TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE TABLE messages (
        session_id TEXT NOT NULL REFERENCES sessions(session_id),
        seq INTEGER NOT NULL,
        message TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    CREATE TABLE tokens (
        token TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        provider_call_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        tool_input TEXT NOT NULL,
        created_at REAL NOT NULL,
        expires_at REAL,
        completed_at REAL,
        result TEXT,
        error TEXT
    );
    CREATE INDEX tokens_by_session ON tokens(session_id);
    """,
    """
    ALTER TABLE sessions ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE leases (
        session_id TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        pid INTEGER NOT NULL,
        hostname TEXT NOT NULL,
        renewed_at REAL NOT NULL,
        expires_at REAL NOT NULL
    );
    CREATE INDEX leases_by_holder ON leases(holder);
    """,
)
"""Schema versions 1..N, in order; a new version is appended, never edited."""

SCHEMA_VERSION = len(MIGRATIONS)
BUSY_TIMEOUT_SECONDS = 2.0


def default_path() -> Path:
    """``$AGENTOS_DB``, else ``agentos.db`` in the user's data directory."""
    override = os.environ.get("AGENTOS_DB")
    if override:
        return Path(override)
    return Path(platformdirs.user_data_dir("agentos")) / "agentos.db"


class SqliteStore:
    """A ``SessionStore`` in one SQLite file. Use ``await SqliteStore.open(path)``."""

    def __init__(self, path: Path, connection: aiosqlite.Connection, clock: Callable[[], float]):
        self.path = path
        self._db = connection
        self._now = clock
        self._writer = anyio.Lock()
        """One transaction at a time: sessions and token completions share the connection."""
        self._waiting: list[_TurnCommit] = []
        """Turns to commit; whoever holds the writer next writes them all."""
        self._identity = _identity(path)
        """The file opened (device, inode): a write checks the path still names it."""
        self._companions: dict[Path, tuple[int, int] | None] = {}
        """Its -wal and -shm files, as opened."""
        self._gone = False
        """The path names another file now (or none): nothing more is written."""

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
            _create_private(path)
        except OSError as error:
            raise StoreError(
                f"cannot create the database {path}: {error.strerror}; "
                "choose a writable location (--db or AGENTOS_DB)"
            ) from None
        try:
            connection = await aiosqlite.connect(path, timeout=busy_timeout)
        except sqlite3.Error as error:
            raise _explain(path, error) from None
        try:
            store = cls(path, connection, clock)
        except OSError as error:
            await connection.close()
            raise StoreError(f"cannot open the database {path}: {error.strerror}") from None
        try:
            await store._prepare()
        except BaseException:
            await connection.close()
            raise
        return store

    async def _prepare(self) -> None:
        db = self._db
        try:
            db.row_factory = sqlite3.Row
            await db.execute("PRAGMA foreign_keys = ON")
            mode = await (await db.execute("PRAGMA journal_mode = WAL")).fetchone()
            if mode is not None and str(mode[0]).lower() != "wal":
                raise StoreError(
                    f"the database {self.path} cannot use write-ahead logging "
                    f"(journal mode {mode[0]}); put it on a local, writable file system"
                )
            await db.execute("PRAGMA synchronous = NORMAL")
            await self._migrate()
        except sqlite3.Error as error:
            raise _explain(self.path, error) from None
        for suffix in ("-wal", "-shm"):
            companion = Path(f"{self.path}{suffix}")
            self._companions[companion] = _identity(companion, missing_ok=True)

    async def _migrate(self) -> None:
        db = self._db
        await db.execute("BEGIN IMMEDIATE")
        try:
            await db.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
            )
            row = await (await db.execute("SELECT MAX(version) FROM schema_migrations")).fetchone()
            current = int(row[0]) if row is not None and row[0] is not None else 0
            if current == 0 and await self._has_foreign_tables():
                raise StoreError(
                    f"{self.path} holds tables that are not agentos's; "
                    "point agentos at another file (--db or AGENTOS_DB)"
                )
            if current > SCHEMA_VERSION:
                raise StoreError(
                    f"the database {self.path} has schema version {current}, newer than this "
                    f"agentos knows ({SCHEMA_VERSION}); upgrade agentos, or use another file"
                )
            for version in range(current + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[version - 1].split(";"):
                    if statement.strip():
                        await db.execute(statement)
                await db.execute(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                    (version, self._now()),
                )
            await db.commit()
        except BaseException:
            await db.rollback()
            raise

    async def _has_foreign_tables(self) -> bool:
        cursor = await self._db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND name NOT IN ('schema_migrations') AND name NOT LIKE 'sqlite_%'"
        )
        return bool(await cursor.fetchall())

    async def close(self) -> None:
        with contextlib.suppress(StoreError):
            self._check_file()
        await self._db.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ sessions

    async def create_session(self, session: StoredSession) -> None:
        async with self._transaction() as db:
            await db.execute(
                "INSERT INTO sessions (session_id, config, status, parent_session_id, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    session.session_id,
                    json.dumps(session.config),
                    session.status,
                    session.parent_session_id,
                    session.created_at,
                    session.updated_at,
                ),
            )
            await _insert_messages(db, session.session_id, 0, session.history)

    async def commit_turn(
        self,
        session_id: str,
        *,
        status: str,
        keep: int,
        messages: Sequence[Message],
        version: int | None = None,
    ) -> None:
        """Commit together with every other turn waiting now: under load one
        transaction carries many sessions' turns, and none waits behind N others."""
        rows = [(session_id, keep + i, json.dumps(m)) for i, m in enumerate(messages)]
        commit = _TurnCommit(session_id, status, keep, rows, version)
        self._waiting.append(commit)
        try:
            async with self._writer:
                if not commit.done:
                    batch, self._waiting = self._waiting, []
                    await self._write_turns(batch)
        finally:
            if not commit.done and commit in self._waiting:
                self._waiting.remove(commit)  # given up before anyone wrote it
        if commit.error is not None:
            raise commit.error

    async def _write_turns(self, batch: list[_TurnCommit]) -> None:
        """All in one transaction; if that fails, each alone, so an error stays its own."""
        try:
            try:
                await self._write_together(batch)
            except StoreError as error:
                if len(batch) == 1:
                    batch[0].fail(error)
                    return
                for commit in batch:
                    try:
                        await self._write_together([commit])
                    except StoreError as own:
                        commit.fail(own)
        finally:
            self._waiting[:0] = [commit for commit in batch if not commit.done]

    async def _write_together(self, batch: list[_TurnCommit]) -> None:
        async with _Transaction(self, take_writer=False) as db:
            now = self._now()
            cursor = await db.executemany(
                _UPDATE_STATUS,
                [(c.status, now, c.session_id, c.version, c.version) for c in batch],
            )
            if cursor.rowcount != len(batch):
                if len(batch) > 1:  # each alone next, to say which and why
                    raise StoreError(f"a turn in a group commit to {self.path} was refused")
                raise await self._refusal(db, batch[0].session_id, batch[0].version)
            await db.executemany(
                "DELETE FROM messages WHERE session_id = ? AND seq >= ?",
                [(commit.session_id, commit.keep) for commit in batch],
            )
            await db.executemany(
                "INSERT INTO messages (session_id, seq, message) VALUES (?, ?, ?)",
                [row for commit in batch for row in commit.rows],
            )
        for commit in batch:
            commit.done = True

    async def set_status(self, session_id: str, status: str, *, version: int | None = None) -> None:
        async with self._transaction() as db:
            cursor = await db.execute(
                _UPDATE_STATUS, (status, self._now(), session_id, version, version)
            )
            if cursor.rowcount != 1:
                raise await self._refusal(db, session_id, version)

    async def _refusal(
        self, db: aiosqlite.Connection, session_id: str, version: int | None
    ) -> StoreError:
        """Why a write to ``session_id`` expecting ``version`` changed no row."""
        row = await (
            await db.execute("SELECT version FROM sessions WHERE session_id = ?", (session_id,))
        ).fetchone()
        if row is None:
            return StoreError(f"no session {session_id!r} in {self.path}")
        lease = await self._lease(db, session_id)
        now = "" if lease is None else f"; {lease['holder']} holds it now"
        return SessionConflictError(
            f"session {session_id!r} was written or taken over by another host since this one "
            f"loaded it (version {row['version']}, expected {version}{now}); this host stops "
            "writing it, so nothing the other wrote is lost"
        )

    async def load_session(self, session_id: str) -> StoredSession | None:
        row = await self._one("SELECT * FROM sessions WHERE session_id = ?", (session_id,))
        if row is None:
            return None
        rows = await self._all(
            "SELECT message FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
        )
        history = tuple(json.loads(r["message"]) for r in rows)
        return _session(row, history)

    async def list_sessions(self) -> list[StoredSession]:
        rows = await self._all("SELECT * FROM sessions ORDER BY created_at, session_id", ())
        return [_session(row, ()) for row in rows]

    # -------------------------------------------------------------------- leases

    async def acquire_lease(
        self, session_id: str, holder: str, *, ttl: float, steal: bool = False
    ) -> int | None:
        now = self._now()
        async with self._transaction() as db:
            row = await (
                await db.execute("SELECT version FROM sessions WHERE session_id = ?", (session_id,))
            ).fetchone()
            if row is None:
                return None
            lease = await self._lease(db, session_id)
            if lease is not None and lease["holder"] != holder and not steal and _live(lease, now):
                raise SessionInUseError(session_id, lease["holder"], lease["expires_at"] - now)
            await db.execute(
                "INSERT OR REPLACE INTO leases (session_id, holder, pid, hostname, renewed_at, "
                "expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, holder, os.getpid(), socket.gethostname(), now, now + ttl),
            )
            version = int(row["version"]) + 1
            await db.execute(
                "UPDATE sessions SET version = ? WHERE session_id = ?", (version, session_id)
            )
        return version

    async def renew_leases(
        self, holder: str, session_ids: Sequence[str], *, ttl: float
    ) -> dict[str, str | None]:
        now = self._now()
        async with self._transaction() as db:
            await db.execute(
                "UPDATE leases SET renewed_at = ?, expires_at = ? WHERE holder = ?",
                (now, now + ttl, holder),
            )
            rows = await (
                await db.execute("SELECT session_id FROM leases WHERE holder = ?", (holder,))
            ).fetchall()
            held = {row["session_id"] for row in rows}
            lost: dict[str, str | None] = {}
            for session_id in session_ids:
                if session_id not in held:
                    lease = await self._lease(db, session_id)
                    lost[session_id] = None if lease is None else lease["holder"]
        return lost

    async def release_lease(self, session_id: str, holder: str) -> None:
        async with self._transaction() as db:
            await db.execute(
                "DELETE FROM leases WHERE session_id = ? AND holder = ?", (session_id, holder)
            )

    async def release_leases(self, holder: str) -> None:
        async with self._transaction() as db:
            await db.execute("DELETE FROM leases WHERE holder = ?", (holder,))

    async def _lease(self, db: aiosqlite.Connection, session_id: str) -> sqlite3.Row | None:
        cursor = await db.execute("SELECT * FROM leases WHERE session_id = ?", (session_id,))
        row: sqlite3.Row | None = await cursor.fetchone()
        return row

    # -------------------------------------------------------------------- tokens

    async def add_token(self, token: StoredToken) -> None:
        async with self._transaction() as db:
            await db.execute(
                "INSERT INTO tokens (token, session_id, call_id, provider_call_id, tool_name, "
                "tool_input, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    token.token,
                    token.session_id,
                    token.call_id,
                    token.provider_call_id,
                    token.tool_name,
                    json.dumps(token.tool_input),
                    token.created_at,
                    token.expires_at,
                ),
            )

    async def complete_token(
        self, token: str, result: Json = None, *, error: str | None = None
    ) -> Completion:
        now = self._now()
        async with self._transaction() as db:
            row = await (
                await db.execute(
                    "SELECT completed_at, expires_at FROM tokens WHERE token = ?", (token,)
                )
            ).fetchone()
            if row is None or (row["expires_at"] is not None and row["expires_at"] <= now):
                return Completion.UNKNOWN
            if row["completed_at"] is not None:
                return Completion.ALREADY_COMPLETED
            await db.execute(
                "UPDATE tokens SET completed_at = ?, result = ?, error = ? WHERE token = ?",
                (now, json.dumps(result), error, token),
            )
        return Completion.APPLIED

    async def get_token(self, token: str) -> StoredToken | None:
        row = await self._one("SELECT * FROM tokens WHERE token = ?", (token,))
        return None if row is None else _token(row)

    async def tokens_of(self, session_id: str) -> list[StoredToken]:
        rows = await self._all(
            "SELECT * FROM tokens WHERE session_id = ? ORDER BY created_at", (session_id,)
        )
        return [_token(row) for row in rows]

    async def delete_expired_tokens(self) -> int:
        async with self._transaction() as db:
            cursor = await db.execute(
                "DELETE FROM tokens WHERE expires_at IS NOT NULL AND expires_at <= ?",
                (self._now(),),
            )
            return int(cursor.rowcount)

    # ------------------------------------------------------------------ plumbing

    def _transaction(self) -> _Transaction:
        return _Transaction(self)

    def _check_file(self) -> None:
        """Raise if the path no longer names the file opened (deleted, or replaced).

        The first time, our -wal and -shm files are taken from beside the path:
        SQLite leaves them when the file has moved, and whoever opens the file
        there next would read our pages as theirs.
        """
        if not self._gone and _identity(self.path, missing_ok=True) != self._identity:
            self._gone = True
            for companion, identity in self._companions.items():
                if identity is not None and _identity(companion, missing_ok=True) == identity:
                    with contextlib.suppress(OSError):
                        companion.unlink()
        if self._gone:
            raise StoreError(
                f"the database {self.path} was deleted or replaced while this process had it "
                "open; nothing more is written (restart agentos to use the file there now)"
            )

    async def _one(self, sql: str, parameters: tuple[Any, ...]) -> sqlite3.Row | None:
        try:
            row: sqlite3.Row | None = await (await self._db.execute(sql, parameters)).fetchone()
        except sqlite3.Error as error:
            raise _explain(self.path, error) from None
        return row

    async def _all(self, sql: str, parameters: tuple[Any, ...]) -> list[sqlite3.Row]:
        try:
            rows = await (await self._db.execute(sql, parameters)).fetchall()
        except sqlite3.Error as error:
            raise _explain(self.path, error) from None
        return list(rows)


@dataclass(slots=True)
class _TurnCommit:
    """One session's turn, waiting to be written with whatever else is waiting."""

    session_id: str
    status: str
    keep: int
    rows: list[tuple[str, int, str]]
    version: int | None
    done: bool = False
    """Written, or failed with ``error``."""
    error: StoreError | None = None

    def fail(self, error: StoreError) -> None:
        self.done, self.error = True, error


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any error, errors explained."""

    def __init__(self, store: SqliteStore, *, take_writer: bool = True) -> None:
        self._store = store
        self._take_writer = take_writer
        """False when the caller already holds the writer lock."""

    async def __aenter__(self) -> aiosqlite.Connection:
        if self._take_writer:
            await self._store._writer.acquire()
        try:
            self._store._check_file()
            await self._store._db.execute("BEGIN IMMEDIATE")
        except BaseException as error:
            if not isinstance(error, sqlite3.Error | StoreError):
                await _rollback(self._store._db)  # cancelled: the BEGIN may still have run
            self._release()
            if isinstance(error, sqlite3.Error):
                raise _explain(self._store.path, error) from None
            raise
        return self._store._db

    def _release(self) -> None:
        if self._take_writer:
            self._store._writer.release()

    async def __aexit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        db = self._store._db
        try:
            if exc_type is not None:
                await _rollback(db)
                if issubclass(exc_type, sqlite3.Error):
                    error = rest[0]
                    assert isinstance(error, sqlite3.Error)
                    raise _explain(self._store.path, error) from None
                return
            try:
                await db.commit()
            except sqlite3.Error as error:
                await _rollback(db)
                raise _explain(self._store.path, error) from None
        finally:
            self._release()


_UPDATE_STATUS = (
    "UPDATE sessions SET status = ?, updated_at = ?, version = version + 1 "
    "WHERE session_id = ? AND (? IS NULL OR version = ?)"
)
"""A write that names the version it expects (None: any) and bumps it."""


def _live(lease: sqlite3.Row, now: float) -> bool:
    """Whether a lease still holds: not expired, and its process not known to be dead.

    A process is known dead only on this machine (same host name): there,
    a pid that no longer exists frees its leases at once.
    """
    if lease["expires_at"] <= now:
        return False
    if lease["hostname"] != socket.gethostname() or lease["pid"] == os.getpid():
        return True
    try:
        os.kill(lease["pid"], 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, as someone else's
        return True
    return True


def _create_private(path: Path) -> None:
    """Create the missing folders (0700) and the file (0600); what exists is left as it is.

    SQLite gives the ``-wal`` and ``-shm`` files the database file's mode.
    """
    missing = []
    folder = path.parent
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
            folder.chmod(0o700)  # whatever the umask
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    try:
        os.fchmod(descriptor, 0o600)
    finally:
        os.close(descriptor)


def _identity(path: Path, *, missing_ok: bool = False) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        if missing_ok:
            return None
        raise
    return stat.st_dev, stat.st_ino


async def _rollback(db: aiosqlite.Connection) -> None:
    """Shielded: a cancelled transaction must not stay open on the shared connection."""
    with anyio.CancelScope(shield=True), contextlib.suppress(sqlite3.Error):
        await db.rollback()  # nothing to undo is fine


async def _insert_messages(
    db: aiosqlite.Connection, session_id: str, first: int, messages: Sequence[Message]
) -> None:
    await db.executemany(
        "INSERT INTO messages (session_id, seq, message) VALUES (?, ?, ?)",
        [(session_id, first + i, json.dumps(m)) for i, m in enumerate(messages)],
    )


def _session(row: sqlite3.Row, history: tuple[Message, ...]) -> StoredSession:
    return StoredSession(
        session_id=row["session_id"],
        config=json.loads(row["config"]),
        status=row["status"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        parent_session_id=row["parent_session_id"],
        history=history,
        version=row["version"],
    )


def _token(row: sqlite3.Row) -> StoredToken:
    return StoredToken(
        token=row["token"],
        session_id=row["session_id"],
        call_id=row["call_id"],
        provider_call_id=row["provider_call_id"],
        tool_name=row["tool_name"],
        tool_input=json.loads(row["tool_input"]),
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        completed_at=row["completed_at"],
        result=None if row["result"] is None else json.loads(row["result"]),
        error=row["error"],
    )


def _explain(path: Path, error: sqlite3.Error) -> StoreError:
    """A one-line, actionable description of what SQLite said about ``path``."""
    text = str(error)
    lowered = text.lower()
    if "locked" in lowered or "busy" in lowered:
        return StoreError(
            f"the database {path} is locked by another writer; stop the other agentos "
            "process, or use another file (--db or AGENTOS_DB)"
        )
    if "readonly" in lowered or "read-only" in lowered or "unable to open" in lowered:
        return StoreError(
            f"cannot write the database {path} ({text}); choose a writable location "
            "(--db or AGENTOS_DB)"
        )
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        return StoreError(
            f"the database {path} is corrupt or not an SQLite file ({text}); it was left "
            "as it is: move it aside or restore a backup"
        )
    return StoreError(f"the database {path} failed: {text}")
