"""The SQLite store's schema: versioned migrations in ``schema_migrations``, each run once.

1: sessions, their messages, continuation tokens. 2: session versions and
leases. 3: the live mirror of calls (``calls``, written by the host that holds
the session) and ``cancel_requests`` (left by other processes, answered by it).
4: a board session's board in ``sessions.board``, no longer a ``board`` message.
5: a session's model requests and token counts in ``sessions.usage``. 6: the name someone
gave a session in ``sessions.title`` (NULL: never named). 7: the first thing the person
said in ``sessions.first_words``, so a listing names every session without its history.
8: a mirrored call's newest log line (``calls.log``, beside its newest ``progress``) and
its ``disposition``. 9: the question a mirrored running call waits to have answered
(``calls.question``). 10: the tasks ``agentos a2a`` serves (``a2a_tasks``). 11: the host
that runs each of them (``a2a_tasks.host``). The tables are defined once for both backends
(``sql/schema.py``).
"""

from __future__ import annotations

import sqlite3

from agentos._errors import StoreError
from agentos._store.sql import schema
from agentos._store.sql.dialect import SQLITE
from agentos._store.sqlite.connection import Database
from agentos._store.sqlite.file import explain

BOARD_OUT_OF_MESSAGES = """
    UPDATE sessions SET board = (
        SELECT json_extract(m.message, '$.content[0].board') FROM messages m
        WHERE m.session_id = sessions.session_id
        AND CASE WHEN json_valid(m.message) THEN json_extract(m.message, '$.role') END = 'board'
    );
    DELETE FROM messages
    WHERE CASE WHEN json_valid(message) THEN json_extract(message, '$.role') END = 'board';
"""
"""A board, once kept as the history's one ``board`` message, moves beside its row."""

MIGRATIONS: tuple[str, ...] = (
    *(SQLITE.ddl(piece) for piece in (schema.SESSIONS, schema.LEASES, schema.MIRROR)),
    SQLITE.ddl(schema.BOARD) + BOARD_OUT_OF_MESSAGES,
    *(SQLITE.ddl(piece) for piece in schema.SINCE_BOARDS),
)
"""Schema versions 1..N, in order; a new version is appended, never edited."""

SCHEMA_VERSION = len(MIGRATIONS)
FILE = schema.Place(
    "file",
    "file",
    "SELECT name FROM sqlite_master WHERE type = 'table' "
    "AND name NOT IN ('schema_migrations') AND name NOT LIKE 'sqlite_%'",
)


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
    except sqlite3.Error as error:
        raise explain(database.path, error) from None
    await database.transaction(lambda tx: schema.migrate(tx, database, MIGRATIONS, FILE))
    database.file.note_companions()
