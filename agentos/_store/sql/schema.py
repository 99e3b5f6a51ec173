"""The tables' definitions, written once, and how a backend's migrations are run.

Each backend lists its own migrations (``sqlite/schema.py``, ``postgres/schema.py``: their
histories differ), made of these pieces in its ``Dialect``'s column types. A migration
once released is never edited: a new one is appended. A database holding tables that
are not agentos's, or a schema newer than this agentos knows, is refused with a
``StoreError``; nothing is overwritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentos._errors import StoreError
from agentos._store.sql.dialect import Database
from agentos._store.sql.dialect import Tx

SESSIONS = """
    CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        config TEXT NOT NULL,
        status TEXT NOT NULL,
        parent_session_id TEXT,
        created_at {real} NOT NULL,
        updated_at {real} NOT NULL
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
        created_at {real} NOT NULL,
        expires_at {real},
        completed_at {real},
        result TEXT,
        error TEXT
    );
    CREATE INDEX tokens_by_session ON tokens(session_id);
"""
"""Sessions, their histories and continuation tokens."""
LEASES = """
    ALTER TABLE sessions ADD COLUMN version {big_integer} NOT NULL DEFAULT 0;
    CREATE TABLE leases (
        session_id TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        pid INTEGER NOT NULL,
        hostname TEXT NOT NULL,
        renewed_at {real} NOT NULL,
        expires_at {real} NOT NULL
    );
    CREATE INDEX leases_by_holder ON leases(holder);
"""
"""Session versions, and who holds each session."""
MIRROR = """
    CREATE TABLE calls (
        call_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        provider_call_id TEXT,
        tool_name TEXT NOT NULL,
        tool_input TEXT NOT NULL,
        status TEXT NOT NULL,
        deferred {flag} NOT NULL,
        progress TEXT,
        progress_count INTEGER NOT NULL,
        result TEXT,
        error_kind TEXT,
        error_message TEXT,
        cancel_reason TEXT,
        created_at {real} NOT NULL,
        started_at {real},
        ended_at {real},
        updated_at {real} NOT NULL,
        holder TEXT NOT NULL
    );
    CREATE INDEX calls_by_session ON calls(session_id, created_at);
    CREATE INDEX calls_by_provider ON calls(provider_call_id);
    CREATE TABLE cancel_requests (
        call_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        reason TEXT NOT NULL,
        requested_at {real} NOT NULL,
        answered_at {real},
        answer TEXT
    );
    CREATE INDEX cancel_requests_waiting ON cancel_requests(session_id)
        WHERE answered_at IS NULL;
"""
"""The live mirror of calls (written by the session's holder) and the cancel requests other
processes leave it."""
BOARD = "ALTER TABLE sessions ADD COLUMN board TEXT;"
"""A board session's board, beside its row."""
USAGE = "ALTER TABLE sessions ADD COLUMN usage TEXT;"
"""A session's model requests and token counts."""
TITLE = "ALTER TABLE sessions ADD COLUMN title TEXT;"
"""The name someone gave a session (NULL: never named)."""
FIRST_WORDS = "ALTER TABLE sessions ADD COLUMN first_words TEXT;"
"""The first thing the person said, so a listing names every session without its history."""
CALL_LOG = """
    ALTER TABLE calls ADD COLUMN log TEXT;
    ALTER TABLE calls ADD COLUMN disposition TEXT;
"""
"""A mirrored call's newest log line (beside its newest ``progress``) and its disposition."""
CALL_QUESTION = "ALTER TABLE calls ADD COLUMN question TEXT;"
"""The question a mirrored running call waits to have answered (NULL: it asks none)."""
A2A_TASKS = """
    CREATE TABLE a2a_tasks (
        task_id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        context_id TEXT NOT NULL,
        state TEXT NOT NULL,
        task TEXT NOT NULL,
        updated_at {real} NOT NULL
    );
    CREATE INDEX a2a_tasks_by_owner ON a2a_tasks(owner, updated_at);
"""
"""The tasks ``agentos a2a`` serves: each its owner's (who showed the token), its context (the
session its turns run in) and the A2A task itself as JSON, so any host sharing the store lists
and reads it."""
A2A_TASK_HOST = "ALTER TABLE a2a_tasks ADD COLUMN host TEXT;"
"""The host (its lease holder's name) that runs each served task (NULL: a row from before)."""
SINCE_BOARDS = (USAGE, TITLE, FIRST_WORDS, CALL_LOG, CALL_QUESTION, A2A_TASKS, A2A_TASK_HOST)
"""The migrations both backends made alike, in order, after the board moved beside its row."""


@dataclass(frozen=True, slots=True)
class Place:
    """Where a backend keeps its tables, as the schema's refusals speak of it."""

    word: str
    """What a store lives in ("file"), as an error tells the user to use another one."""
    elsewhere: str
    """Where else to point agentos when this place holds someone else's tables."""
    tables: str
    """A query naming the tables that are not agentos's bookkeeping (``schema_migrations``)."""


async def migrate(tx: Tx, database: Database, migrations: Sequence[str], place: Place) -> None:
    """Bring the schema up to ``len(migrations)`` in ``tx``: each migration not yet recorded in
    ``schema_migrations`` runs, statement by statement, and is recorded."""
    real = database.dialect.types["real"]
    await tx.run(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        f"(version INTEGER PRIMARY KEY, applied_at {real} NOT NULL)"
    )
    row = await tx.row("SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations")
    current = 0 if row is None else int(row["version"])
    if current == 0 and await tx.rows(place.tables):
        raise StoreError(
            f"{database.name} holds tables that are not agentos's; "
            f"point agentos at another {place.elsewhere}",
            other_file_helps=True,
        )
    if current > len(migrations):
        raise newer(database.name, place, current, len(migrations))
    for version in range(current + 1, len(migrations) + 1):
        for statement in migrations[version - 1].split(";"):
            if statement.strip():
                await tx.run(statement)
        await tx.run(
            "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
            version,
            database.now(),
        )


def newer(name: str, place: Place, found: int, known: int) -> StoreError:
    """The schema is newer than this agentos knows: it is left alone."""
    return StoreError(
        f"the database {name} has schema version {found}, newer than this "
        f"agentos knows ({known}); upgrade agentos, or use another {place.word}"
    )
