"""The PostgreSQL store's schema: versioned migrations in ``schema_migrations``, each run once.

1: sessions (with their version and board), messages, continuation tokens,
leases, the live mirror of calls and cancel requests: the records of the
SQLite store's four versions, in one. 2: an index for pruning the mirror. 3: a session's usage.
4: the name someone gave a session (``sessions.title``; NULL: never named). 5: the first
thing the person said (``sessions.first_words``), so a listing names every session.
6: a mirrored call's newest log line (``calls.log``) and its ``disposition``. 7: the
question a mirrored running call waits to have answered (``calls.question``). 8: the tasks
``agentos a2a`` serves (``a2a_tasks``). 9: the host that runs each of them
(``a2a_tasks.host``).
Hosts starting at once migrate one at a time (an advisory lock); a current schema is
only read (a read-only user opens the store). A database
holding tables that are not agentos's, or a schema newer than this agentos
knows, is refused; nothing is overwritten. JSON is kept as text, as written. The tables
are defined once for both backends (``sql/schema.py``).
"""

from __future__ import annotations

from agentos._store.postgres.connection import Database
from agentos._store.postgres.tx import Db
from agentos._store.sql import schema
from agentos._store.sql.dialect import POSTGRES
from agentos._store.sql.dialect import Tx

MIGRATIONS: tuple[str, ...] = (
    POSTGRES.ddl(schema.SESSIONS, schema.LEASES, schema.BOARD, schema.MIRROR),
    "CREATE INDEX calls_ended ON calls(updated_at) WHERE ended_at IS NOT NULL;",
    *(POSTGRES.ddl(piece) for piece in schema.SINCE_BOARDS),
)
"""Schema versions 1..N, in order; a new version is appended, never edited."""

SCHEMA_VERSION = len(MIGRATIONS)
DATABASE = schema.Place(
    "database",
    "database (or schema)",
    "SELECT table_name FROM information_schema.tables "
    "WHERE table_schema = current_schema() AND table_name <> 'schema_migrations'",
)
MIGRATION_LOCK = 0x6167656E746F73  # "agentos": hosts starting together migrate in turn


async def prepare(database: Database) -> None:
    """Bring the schema up to date (once, whichever host gets there first). A schema already
    current is only read, so a user who may only read opens the store."""
    found = await _version(database)
    if found == SCHEMA_VERSION:
        return
    if found is not None and found > SCHEMA_VERSION:
        raise schema.newer(database.name, DATABASE, found, SCHEMA_VERSION)

    async def locked(tx: Tx) -> None:
        await tx.run("SELECT pg_advisory_xact_lock(?)", MIGRATION_LOCK)
        await schema.migrate(tx, database, MIGRATIONS, DATABASE)

    await database.transaction(locked)


async def _version(database: Database) -> int | None:
    """The schema's version, read without a lock or a CREATE (None: no agentos schema)."""

    async def read(db: Db) -> int | None:
        if await db.fetchval("SELECT to_regclass('schema_migrations')") is None:
            return None
        version: int = await db.fetchval("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")
        return version

    return await database.on_connection(read)
