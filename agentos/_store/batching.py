"""Group commit, for any backend: turns of several sessions that wait at once share a transaction.

Each turn is committed in one transaction, so a crash loses at most the turn
in flight. Under load one transaction carries many sessions' turns, and no
turn waits behind N others; if the shared transaction fails, each turn is
written alone, so an error stays the turn's own. The backend says how a batch
is written (``write_together``) and which lock its writes take turns on. A batch is
written shielded from cancellation: whoever writes it writes other sessions' turns too
(each backend bounds how long a write may take).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

import anyio

from agentos._errors import StoreError
from agentos._model.messages import Message
from agentos._store.protocol import TurnCommit
from agentos._store.records import message_text
from agentos._store.records import text_column


class CommitOutcomeUnknown(StoreError):
    """The answer to a ``COMMIT`` was lost: the turns may or may not be written. Writing them
    again could write them twice, so a backend settles it by reading, or reports this."""


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
    usage: str | None = None
    """The session's usage as JSON text, when the turn writes it."""
    first_words: str | None = None
    """The first thing the person said, when the turn writes it."""
    done: bool = False
    """Written, or failed with ``error``."""
    error: StoreError | None = None

    @classmethod
    def of(cls, turn: TurnCommit) -> PendingTurn:
        rows = message_rows(turn.session_id, turn.keep, turn.messages)
        board = None if turn.board is None else json.dumps(turn.board)
        usage = None if turn.usage is None else json.dumps(turn.usage)
        said = text_column(turn.first_words)  # a NUL as every backend keeps it
        return cls(turn.session_id, turn.status, turn.keep, rows, turn.version, board, usage, said)

    def fail(self, error: StoreError) -> None:
        self.done, self.error = True, error


def message_rows(
    session_id: str, first: int, messages: Sequence[Message]
) -> list[tuple[str, int, str]]:
    """The ``messages`` rows of ``messages``, numbered from ``first``."""
    return [(session_id, first + i, message_text(m)) for i, m in enumerate(messages)]


class GroupCommit:
    """Writes turns, every turn waiting now in one ``write_together`` call.

    ``write_together(batch)`` writes the batch in one transaction or raises
    ``StoreError`` and writes nothing; for a batch of one, the error says why.
    """

    def __init__(
        self,
        lock: anyio.Lock,
        write_together: Callable[[list[PendingTurn]], Awaitable[None]],
    ) -> None:
        self._lock = lock
        self._write_together = write_together
        self._waiting: list[PendingTurn] = []
        """Turns to commit; whoever holds the lock next writes them all."""

    async def write(self, commit: PendingTurn) -> None:
        """Write ``commit`` with every other turn waiting now; raise its own error, if any."""
        self._waiting.append(commit)
        try:
            async with self._lock:
                if not commit.done:
                    batch, self._waiting = self._waiting, []
                    with anyio.CancelScope(shield=True):  # it writes other sessions' turns too
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
            except CommitOutcomeUnknown as error:  # written or not: never write it again
                for commit in batch:
                    commit.fail(error)
            except StoreError as error:
                if len(batch) == 1:
                    batch[0].fail(error)
                    return
                for commit in batch:
                    try:
                        await self._write_together([commit])
                    except StoreError as own:
                        commit.fail(own)
                    else:
                        commit.done = True
            else:
                for commit in batch:
                    commit.done = True
        finally:
            self._waiting[:0] = [commit for commit in batch if not commit.done]
