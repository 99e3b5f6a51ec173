"""The PostgreSQL store's schema: versioned migrations in ``schema_migrations``, each run once.

1: sessions (with their version and board), messages, continuation tokens,
leases, the live mirror of calls and cancel requests: the records of the
SQLite store's four versions, in one. 2: an index for pruning the mirror. 3: a session's usage.
4: the name someone gave a session (``sessions.title``; NULL: never named). 5: the first
thing the person said (``sessions.first_words``), so a listing names every session.
6: a mirrored call's newest log line (``calls.log``) and its ``disposition``.
Hosts starting at once migrate one at a time (an advisory lock); a current schema is
only read (a read-only user opens the store). A database
holding tables that are not agentos's, or a schema newer than this agentos
knows, is refused; nothing is overwritten. JSON is kept as text, as written.
"""

from __future__ import annotations

from agentos._errors import StoreError
from agentos._store.postgres.connection import Database
from agentos._store.postgres.tx import Db

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        config TEXT NOT NULL,
        status TEXT NOT NULL,
        parent_session_id TEXT,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        version BIGINT NOT NULL DEFAULT 0,
        board TEXT
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
        created_at DOUBLE PRECISION NOT NULL,
        expires_at DOUBLE PRECISION,
        completed_at DOUBLE PRECISION,
        result TEXT,
        error TEXT
    );
    CREATE INDEX tokens_by_session ON tokens(session_id);
    CREATE TABLE leases (
        session_id TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        pid INTEGER NOT NULL,
        hostname TEXT NOT NULL,
        renewed_at DOUBLE PRECISION NOT NULL,
        expires_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX leases_by_holder ON leases(holder);
    CREATE TABLE calls (
        call_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        provider_call_id TEXT,
        tool_name TEXT NOT NULL,
        tool_input TEXT NOT NULL,
        status TEXT NOT NULL,
        deferred BOOLEAN NOT NULL,
        progress TEXT,
        progress_count INTEGER NOT NULL,
        result TEXT,
        error_kind TEXT,
        error_message TEXT,
        cancel_reason TEXT,
        created_at DOUBLE PRECISION NOT NULL,
        started_at DOUBLE PRECISION,
        ended_at DOUBLE PRECISION,
        updated_at DOUBLE PRECISION NOT NULL,
        holder TEXT NOT NULL
    );
    CREATE INDEX calls_by_session ON calls(session_id, created_at);
    CREATE INDEX calls_by_provider ON calls(provider_call_id);
    CREATE TABLE cancel_requests (
        call_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        reason TEXT NOT NULL,
        requested_at DOUBLE PRECISION NOT NULL,
        answered_at DOUBLE PRECISION,
        answer TEXT
    );
    CREATE INDEX cancel_requests_waiting ON cancel_requests(session_id)
        WHERE answered_at IS NULL;
    """,
    """
    CREATE INDEX calls_ended ON calls(updated_at) WHERE ended_at IS NOT NULL;
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
MIGRATION_LOCK = 0x6167656E746F73  # "agentos": hosts starting together migrate in turn


async def prepare(database: Database) -> None:
    """Bring the schema up to date (once, whichever host gets there first). A schema already
    current is only read, so a user who may only read opens the store."""
    found = await _version(database)
    if found == SCHEMA_VERSION:
        return
    if found is not None and found > SCHEMA_VERSION:
        raise _newer(database, found)

    async def migrate(db: Db) -> None:
        await db.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
        await db.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations "
            "(version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)"
        )
        current = await db.fetchval("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")
        if current == 0 and await _has_foreign_tables(db):
            raise StoreError(
                f"{database.name} holds tables that are not agentos's; "
                "point agentos at another database (or schema)",
                other_file_helps=True,
            )
        if current > SCHEMA_VERSION:
            raise _newer(database, current)
        for version in range(current + 1, SCHEMA_VERSION + 1):
            await db.execute(MIGRATIONS[version - 1])
            await db.execute(
                "INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)",
                version,
                database.now(),
            )

    await database.on_connection(migrate)


async def _version(database: Database) -> int | None:
    """The schema's version, read without a lock or a CREATE (None: no agentos schema)."""

    async def read(db: Db) -> int | None:
        if await db.fetchval("SELECT to_regclass('schema_migrations')") is None:
            return None
        version: int = await db.fetchval("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")
        return version

    return await database.on_connection(read)


def _newer(database: Database, version: int) -> StoreError:
    return StoreError(
        f"the database {database.name} has schema version {version}, newer than this "
        f"agentos knows ({SCHEMA_VERSION}); upgrade agentos, or use another database"
    )


async def _has_foreign_tables(db: Db) -> bool:
    names = await db.fetch(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = current_schema() AND table_name <> 'schema_migrations'"
    )
    return bool(names)
