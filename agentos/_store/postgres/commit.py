"""How a batch of turns is written to PostgreSQL (``batching.GroupCommit``): one statement per
table for the whole batch (arrays ``unnest``-ed), and a ``COMMIT`` whose answer was lost
settled by reading what the database holds."""

from __future__ import annotations

from agentos._errors import StoreError
from agentos._store.batching import CommitOutcomeUnknown
from agentos._store.batching import PendingTurn
from agentos._store.postgres.connection import Database
from agentos._store.sql.dialect import Tx
from agentos._store.sql.sessions import refusal

INSERT_MESSAGES = (
    "INSERT INTO messages (session_id, seq, message) "
    "SELECT * FROM unnest($1::text[], $2::int[], $3::text[])"
)
UPDATE_STATUSES = (
    "UPDATE sessions AS s SET status = u.status, updated_at = $4, version = s.version + 1 "
    "FROM unnest($1::text[], $2::text[], $3::bigint[]) AS u(session_id, status, expected) "
    "WHERE s.session_id = u.session_id AND (u.expected IS NULL OR s.version = u.expected)"
)
"""Writes that name the version they expect (None: any), each bumping it."""
DELETE_AFTER = (
    "DELETE FROM messages AS m USING unnest($1::text[], $2::int[]) AS k(id, keep) "
    "WHERE m.session_id = k.id AND m.seq >= k.keep"
)


class TurnWriter:
    """Writes a batch of turns in one transaction (``write_together``)."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def write_together(self, batch: list[PendingTurn]) -> None:
        """Every turn of ``batch`` in one transaction."""
        database = self._database
        stamp = database.now()
        """The batch's ``updated_at``: what tells, after a lost answer, whether it was written."""

        async def write(tx: Tx) -> None:
            changed = await tx.run(
                UPDATE_STATUSES,
                [c.session_id for c in batch],
                [c.status for c in batch],
                [c.version for c in batch],
                stamp,
            )
            if changed != len(batch):
                if len(batch) > 1:  # each alone next, to say which and why
                    raise StoreError(f"a turn in a group commit to {database.name} was refused")
                raise await refusal(tx, database.name, batch[0].session_id, batch[0].version)
            await tx.run(DELETE_AFTER, [c.session_id for c in batch], [c.keep for c in batch])
            rows = [row for commit in batch for row in commit.rows]
            if rows:
                ids, seqs, texts = zip(*rows, strict=True)
                await tx.run(INSERT_MESSAGES, list(ids), list(seqs), list(texts))
            await _set_texts(tx, "board", {c.session_id: c.board for c in batch if c.board})
            await _set_texts(tx, "usage", {c.session_id: c.usage for c in batch if c.usage})
            said = {c.session_id: c.first_words for c in batch if c.first_words}
            await _set_texts(tx, "first_words", said)

        try:
            await database.transaction(write)
        except CommitOutcomeUnknown:
            if not await self._written(batch, stamp):
                raise StoreError(
                    f"a commit to {database.name} was cut off and not applied; it is tried again"
                ) from None

    async def _written(self, batch: list[PendingTurn], stamp: float) -> bool:
        """Whether a batch whose ``COMMIT`` went unanswered was applied (it is atomic: all of
        it or none): its first session is one version on and bears the batch's stamp (a
        lease taken meanwhile bumps the version, not the stamp). ``CommitOutcomeUnknown``
        still if the database cannot tell yet."""
        first = batch[0]
        try:
            row = await self._database.one(
                "SELECT version, updated_at FROM sessions WHERE session_id = $1", first.session_id
            )
        except StoreError as error:
            raise CommitOutcomeUnknown(f"{error}; so is whether a commit was applied") from None
        if row is None or row["updated_at"] != stamp:
            if row is not None and first.version not in (None, row["version"]):
                raise await self._moved_on(batch)  # another host took the session meanwhile
            return False
        return first.version is None or row["version"] == first.version + 1

    async def _moved_on(self, batch: list[PendingTurn]) -> StoreError:
        """Why a batch cut off unapplied cannot be written again: its first session's version
        moved on (taken over). Each alone, if it had several, so each error stays its own."""
        if len(batch) > 1:
            return StoreError(f"a turn in a group commit to {self._database.name} was refused")
        first = batch[0]

        async def why(tx: Tx) -> StoreError:
            return await refusal(tx, self._database.name, first.session_id, first.version)

        return await self._database.transaction(why)


async def _set_texts(tx: Tx, column: str, values: dict[str, str]) -> None:
    """Set a text column of these sessions (``board``, ``usage``, ``first_words``), in one
    statement."""
    if values:
        await tx.run(
            f"UPDATE sessions AS s SET {column} = v.value FROM unnest($1::text[], $2::text[]) "
            "AS v(id, value) WHERE s.session_id = v.id",
            list(values),
            list(values.values()),
        )
