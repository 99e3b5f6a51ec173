"""How a batch of turns is written to SQLite in one transaction (``batching.GroupCommit``)."""

from __future__ import annotations

from agentos._errors import StoreError
from agentos._store.batching import PendingTurn
from agentos._store.sql.sessions import INSERT_MESSAGE
from agentos._store.sql.sessions import UPDATE_STATUS
from agentos._store.sql.sessions import refusal
from agentos._store.sqlite.connection import Database
from agentos._store.sqlite.connection import SqliteTx


async def write_together(database: Database, batch: list[PendingTurn]) -> None:
    """Every turn of ``batch`` in one transaction (the group commit holds the writer)."""
    now = database.now()

    async def write(tx: SqliteTx) -> None:
        db = tx.connection
        cursor = await db.executemany(
            UPDATE_STATUS,
            [(c.status, now, c.session_id, c.version, c.version) for c in batch],
        )
        if cursor.rowcount != len(batch):
            if len(batch) > 1:  # each alone next, to say which and why
                raise StoreError(f"a turn in a group commit to {database.path} was refused")
            raise await refusal(tx, database.name, batch[0].session_id, batch[0].version)
        await db.executemany(
            "DELETE FROM messages WHERE session_id = ? AND seq >= ?",
            [(commit.session_id, commit.keep) for commit in batch],
        )
        await db.executemany(INSERT_MESSAGE, [row for commit in batch for row in commit.rows])
        for column in ("board", "usage", "first_words"):
            values = [(getattr(c, column), c.session_id) for c in batch if getattr(c, column)]
            if values:
                await db.executemany(
                    f"UPDATE sessions SET {column} = ? WHERE session_id = ?", values
                )

    await database.writing(write, take_writer=False)
