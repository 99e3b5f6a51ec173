"""The group-commit writer: turns of several sessions that wait at once share a transaction.

Each turn is committed in one transaction, so a crash loses at most the turn
in flight. Under load one transaction carries many sessions' turns, and no
turn waits behind N others; if the shared transaction fails, each turn is
written alone, so an error stays the turn's own.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentos._errors import StoreError
from agentos._store.sqlite.connection import Database
from agentos._store.sqlite.sessions import INSERT_MESSAGE, UPDATE_STATUS, refusal


@dataclass(slots=True)
class PendingTurn:
    """One session's turn (keep ``keep`` messages, append ``rows``, set ``status``),
    waiting to be written with whatever else is waiting."""

    session_id: str
    status: str
    keep: int
    rows: list[tuple[str, int, str]]
    version: int | None
    board: str | None = None
    """The board's JSON text, when the turn writes one."""
    done: bool = False
    """Written, or failed with ``error``."""
    error: StoreError | None = None

    def fail(self, error: StoreError) -> None:
        self.done, self.error = True, error


class GroupCommit:
    """Writes turns to one database, every turn waiting now in one transaction."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self._waiting: list[PendingTurn] = []
        """Turns to commit; whoever holds the writer next writes them all."""

    async def write(self, commit: PendingTurn) -> None:
        """Write ``commit`` with every other turn waiting now; raise its own error, if any."""
        self._waiting.append(commit)
        try:
            async with self._database.writer:
                if not commit.done:
                    batch, self._waiting = self._waiting, []
                    await self._write_turns(batch)
        finally:
            if not commit.done and commit in self._waiting:
                self._waiting.remove(commit)  # given up before anyone wrote it
        if commit.error is not None:
            raise commit.error

    async def _write_turns(self, batch: list[PendingTurn]) -> None:
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

    async def _write_together(self, batch: list[PendingTurn]) -> None:
        database = self._database
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
        for commit in batch:
            commit.done = True
