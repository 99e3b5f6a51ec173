"""How a batch of turns is written to SQLite in one transaction (``batching.GroupCommit``)."""

from __future__ import annotations

from agentos._errors import StoreError
from agentos._store.batching import PendingTurn
from agentos._store.sqlite.connection import Database
from agentos._store.sqlite.sessions import INSERT_MESSAGE, UPDATE_STATUS, refusal


async def write_together(database: Database, batch: list[PendingTurn]) -> None:
    """Every turn of ``batch`` in one transaction (the caller holds the writer lock)."""
    async with database.transaction(take_writer=False) as db:
        now = database.now()
        cursor = await db.executemany(
            UPDATE_STATUS,
            [(c.status, now, c.session_id, c.version, c.version) for c in batch],
        )
        if cursor.rowcount != len(batch):
            if len(batch) > 1:  # each alone next, to say which and why
                raise StoreError(f"a turn in a group commit to {database.path} was refused")
            raise await refusal(db, database.path, batch[0].session_id, batch[0].version)
        await db.executemany(
            "DELETE FROM messages WHERE session_id = ? AND seq >= ?",
            [(commit.session_id, commit.keep) for commit in batch],
        )
        await db.executemany(INSERT_MESSAGE, [row for commit in batch for row in commit.rows])
        boards = [(c.board, c.session_id) for c in batch if c.board is not None]
        if boards:
            await db.executemany("UPDATE sessions SET board = ? WHERE session_id = ?", boards)
        usages = [(c.usage, c.session_id) for c in batch if c.usage is not None]
        if usages:
            await db.executemany("UPDATE sessions SET usage = ? WHERE session_id = ?", usages)
        said = [(c.first_words, c.session_id) for c in batch if c.first_words]
        if said:
            await db.executemany("UPDATE sessions SET first_words = ? WHERE session_id = ?", said)
