"""Sessions in PostgreSQL: a row in ``sessions`` (a board session's board too), the history in
``messages``, and turns written in batches of one statement per table.

Every write names the session version it expects and bumps it, so a host
that lost the session (its lease taken over) cannot replace what the new
owner wrote: the write is refused with a ``SessionConflictError`` instead.
"""

from __future__ import annotations

import json

from agentos._errors import SessionConflictError, StoreError
from agentos._store.batching import CommitOutcomeUnknown, PendingTurn, message_rows
from agentos._store.postgres.connection import Database, Db
from agentos._store.protocol import StoredSession
from agentos._store.records import message_from, session_from, text_column

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
MENTIONING = (
    "SELECT session_id FROM sessions WHERE session_id IN ("
    "SELECT session_id FROM messages WHERE strpos(message, $1) > 0 "
    "UNION SELECT session_id FROM sessions WHERE strpos(board, $1) > 0 "
    "UNION SELECT session_id FROM tokens WHERE starts_with(call_id, $1) "
    "OR starts_with(provider_call_id, $1) "
    "UNION SELECT session_id FROM calls WHERE starts_with(call_id, $1) "
    "OR starts_with(provider_call_id, $1)) ORDER BY created_at, session_id"
)
"""Where a call whose id is (or starts with) the text may be: ``sessions_mentioning``."""


class SessionRows:
    """The ``SessionStore`` session operations over one database."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def create(self, session: StoredSession) -> None:
        async def insert(db: Db) -> None:
            await db.execute(
                "INSERT INTO sessions (session_id, config, status, parent_session_id, "
                "created_at, updated_at, board, title) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                session.session_id,
                json.dumps(session.config),
                session.status,
                session.parent_session_id,
                session.created_at,
                session.updated_at,
                None if session.board is None else json.dumps(session.board),
                text_column(session.title),
            )
            await _insert_messages(db, message_rows(session.session_id, 0, session.history))

        try:
            await self._database.transaction(insert)
        except StoreError as error:
            if "sessions_pkey" in str(error):
                raise StoreError(f"a session {session.session_id!r} exists already") from None
            raise

    async def write_together(self, batch: list[PendingTurn]) -> None:
        """Every turn of ``batch`` in one transaction."""
        database = self._database
        stamp = database.now()
        """The batch's ``updated_at``: what tells, after a lost answer, whether it was written."""

        async def write(db: Db) -> None:
            status = await db.execute(
                UPDATE_STATUSES,
                [c.session_id for c in batch],
                [c.status for c in batch],
                [c.version for c in batch],
                stamp,
            )
            if _count(status) != len(batch):
                if len(batch) > 1:  # each alone next, to say which and why
                    raise StoreError(f"a turn in a group commit to {database.name} was refused")
                raise await refusal(db, database, batch[0].session_id, batch[0].version)
            await db.execute(
                "DELETE FROM messages AS m USING unnest($1::text[], $2::int[]) AS k(id, keep) "
                "WHERE m.session_id = k.id AND m.seq >= k.keep",
                [c.session_id for c in batch],
                [c.keep for c in batch],
            )
            await _insert_messages(db, [row for commit in batch for row in commit.rows])
            await _set_texts(db, "board", {c.session_id: c.board for c in batch if c.board})
            await _set_texts(db, "usage", {c.session_id: c.usage for c in batch if c.usage})
            said = {c.session_id: c.first_words for c in batch if c.first_words}
            await _set_texts(db, "first_words", said)

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

        async def why(db: Db) -> StoreError:
            return await refusal(db, self._database, first.session_id, first.version)

        return await self._database.transaction(why)

    async def set_status(self, session_id: str, status: str, *, version: int | None) -> None:
        database = self._database

        async def write(db: Db) -> None:
            done = await db.execute(
                UPDATE_STATUSES, [session_id], [status], [version], database.now()
            )
            if _count(done) != 1:
                raise await refusal(db, database, session_id, version)

        await database.transaction(write)

    async def set_title(self, session_id: str, title: str | None) -> None:
        database = self._database

        async def write(db: Db) -> None:
            done = await db.execute(
                "UPDATE sessions SET title = $1 WHERE session_id = $2",
                text_column(title),
                session_id,
            )
            if _count(done) != 1:
                raise StoreError(f"no session {session_id!r} in {database.name}")

        await database.transaction(write)

    async def load(self, session_id: str) -> StoredSession | None:
        async def read(db: Db) -> StoredSession | None:
            row = await db.fetchrow("SELECT * FROM sessions WHERE session_id = $1", session_id)
            if row is None:
                return None
            rows = await db.fetch(
                "SELECT seq, message FROM messages WHERE session_id = $1 ORDER BY seq", session_id
            )
            where = self._database.name
            history = tuple(
                message_from(r["message"], seq=r["seq"], session_id=session_id, where=where)
                for r in rows
            )
            board = None if row["board"] is None else json.loads(row["board"])
            return session_from(row, history, board)

        return await self._database.transaction(read)

    async def mentioning(self, text: str) -> list[str]:
        rows = await self._database.all(MENTIONING, text)
        return [row["session_id"] for row in rows]

    async def list(self, prefix: str | None) -> list[StoredSession]:
        rows = await self._database.all(
            "SELECT session_id, config, status, parent_session_id, created_at, updated_at, "
            "version, usage, title, first_words FROM sessions "
            "WHERE $1::text IS NULL OR starts_with(session_id, $1) "
            "ORDER BY created_at, session_id",
            prefix,
        )
        return [session_from(row, ()) for row in rows]


async def refusal(db: Db, database: Database, session_id: str, version: int | None) -> StoreError:
    """Why a write to ``session_id`` expecting ``version`` changed no row."""
    stored = await db.fetchval("SELECT version FROM sessions WHERE session_id = $1", session_id)
    if stored is None:
        return StoreError(f"no session {session_id!r} in {database.name}")
    holder = await db.fetchval("SELECT holder FROM leases WHERE session_id = $1", session_id)
    now = "" if holder is None else f"; {holder} holds it now"
    return SessionConflictError(
        f"session {session_id!r} was written or taken over by another host since this one "
        f"loaded it (version {stored}, expected {version}{now}); this host stops "
        "writing it, so nothing the other wrote is lost"
    )


async def _insert_messages(db: Db, rows: list[tuple[str, int, str]]) -> None:
    if rows:
        ids, seqs, texts = zip(*rows, strict=True)
        await db.execute(INSERT_MESSAGES, list(ids), list(seqs), list(texts))


async def _set_texts(db: Db, column: str, values: dict[str, str]) -> None:
    """Set a text column of these sessions (``board``, ``usage``, ``first_words``), in one
    statement."""
    if values:
        await db.execute(
            f"UPDATE sessions AS s SET {column} = v.value FROM unnest($1::text[], $2::text[]) "
            "AS v(id, value) WHERE s.session_id = v.id",
            list(values),
            list(values.values()),
        )


def _count(status: str) -> int:
    """The row count of a command tag such as ``UPDATE 3``."""
    return int(status.rsplit(" ", 1)[-1])
