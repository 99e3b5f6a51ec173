"""The store's schema: versioned migrations in ``schema_migrations``, each run once.

1: sessions, their messages, continuation tokens. 2: session versions and
leases. 3: the live mirror of calls (``calls``, written by the host that holds
the session) and ``cancel_requests`` (left by other processes, answered by it).
4: a board session's board in ``sessions.board``, no longer a ``board`` message.
5: a session's model requests and token counts in ``sessions.usage``. 6: the name someone
gave a session in ``sessions.title`` (NULL: never named). 7: the first thing the person
said in ``sessions.first_words``, so a listing names every session without its history.
8: a mirrored call's newest log line (``calls.log``, beside its newest ``progress``) and
its ``disposition``.

A file that holds tables that are not agentos's, or a schema newer than this
agentos knows, is refused with a ``StoreError``; nothing is ever overwritten.
"""

from __future__ import annotations

import sqlite3

from agentos._errors import StoreError
from agentos._store.sqlite.connection import Database
from agentos._store.sqlite.file import explain

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
    """
    CREATE TABLE calls (
        call_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        provider_call_id TEXT,
        tool_name TEXT NOT NULL,
        tool_input TEXT NOT NULL,
        status TEXT NOT NULL,
        deferred INTEGER NOT NULL,
        progress TEXT,
        progress_count INTEGER NOT NULL,
        result TEXT,
        error_kind TEXT,
        error_message TEXT,
        cancel_reason TEXT,
        created_at REAL NOT NULL,
        started_at REAL,
        ended_at REAL,
        updated_at REAL NOT NULL,
        holder TEXT NOT NULL
    );
    CREATE INDEX calls_by_session ON calls(session_id, created_at);
    CREATE INDEX calls_by_provider ON calls(provider_call_id);
    CREATE TABLE cancel_requests (
        call_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        reason TEXT NOT NULL,
        requested_at REAL NOT NULL,
        answered_at REAL,
        answer TEXT
    );
    CREATE INDEX cancel_requests_waiting ON cancel_requests(session_id)
        WHERE answered_at IS NULL;
    """,
    """
    ALTER TABLE sessions ADD COLUMN board TEXT;
    UPDATE sessions SET board = (
        SELECT json_extract(m.message, '$.content[0].board') FROM messages m
        WHERE m.session_id = sessions.session_id
        AND CASE WHEN json_valid(m.message) THEN json_extract(m.message, '$.role') END = 'board'
    );
    DELETE FROM messages
    WHERE CASE WHEN json_valid(message) THEN json_extract(message, '$.role') END = 'board';
    """,
    """
    ALTER TABLE sessions ADD COLUMN usage TEXT;
    """,
    """
    ALTER TABLE sessions ADD COLUMN title TEXT;
    """,
    """
    ALTER TABLE sessions ADD COLUMN first_words TEXT;
    """,
    """
    ALTER TABLE calls ADD COLUMN log TEXT;
    ALTER TABLE calls ADD COLUMN disposition TEXT;
    """,
)
"""Schema versions 1..N, in order; a new version is appended, never edited."""

SCHEMA_VERSION = len(MIGRATIONS)


async def prepare(database: Database) -> None:
    """Set the connection up (WAL, foreign keys) and bring the schema up to date."""
    db = database.connection
    try:
        db.row_factory = sqlite3.Row
        await db.execute("PRAGMA foreign_keys = ON")
        mode = await (await db.execute("PRAGMA journal_mode = WAL")).fetchone()
        if mode is not None and str(mode[0]).lower() != "wal":
            raise StoreError(
                f"the database {database.path} cannot use write-ahead logging "
                f"(journal mode {mode[0]}); put it on a local, writable file system"
            )
        await db.execute("PRAGMA synchronous = NORMAL")
        await _migrate(database)
    except sqlite3.Error as error:
        raise explain(database.path, error) from None
    database.file.note_companions()


async def _migrate(database: Database) -> None:
    db = database.connection
    await db.execute("BEGIN IMMEDIATE")
    try:
        await db.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations "
            "(version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
        )
        row = await (await db.execute("SELECT MAX(version) FROM schema_migrations")).fetchone()
        current = int(row[0]) if row is not None and row[0] is not None else 0
        if current == 0 and await _has_foreign_tables(database):
            raise StoreError(
                f"{database.path} holds tables that are not agentos's; "
                "point agentos at another file",
                other_file_helps=True,
            )
        if current > SCHEMA_VERSION:
            raise StoreError(
                f"the database {database.path} has schema version {current}, newer than this "
                f"agentos knows ({SCHEMA_VERSION}); upgrade agentos, or use another file"
            )
        for version in range(current + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[version - 1].split(";"):
                if statement.strip():
                    await db.execute(statement)
            await db.execute(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                (version, database.now()),
            )
        await db.commit()
    except BaseException:
        await db.rollback()
        raise


async def _has_foreign_tables(database: Database) -> bool:
    cursor = await database.connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' "
        "AND name NOT IN ('schema_migrations') AND name NOT LIKE 'sqlite_%'"
    )
    return bool(await cursor.fetchall())
