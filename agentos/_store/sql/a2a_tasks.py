"""The tasks ``agentos a2a`` serves: rows in ``a2a_tasks``, each its owner's, read and
listed only by it, so a task outlives the host that ran it and any host sharing the store
answers for it. A task that has ended keeps its end: no later save changes its state."""

from __future__ import annotations

from dataclasses import dataclass

from agentos._store.records import Row
from agentos._store.sql.dialect import Table

ENDED = ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED")
"""A2A's terminal states: a task in one is over, whatever a late save says."""
SAVE = (
    "INSERT INTO a2a_tasks (task_id, owner, context_id, state, task, updated_at, host) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (task_id) DO UPDATE SET "
    "context_id = excluded.context_id, state = excluded.state, task = excluded.task, "
    "updated_at = excluded.updated_at, host = excluded.host "
    "WHERE a2a_tasks.owner = excluded.owner AND (a2a_tasks.state = excluded.state "
    f"OR a2a_tasks.state NOT IN ({', '.join('?' * len(ENDED))}))"
)
"""Write a task, unless its id is another owner's, or it has ended in another state."""


@dataclass(frozen=True, slots=True)
class StoredA2aTask:
    """One served task: whose it is, the context (session) it runs in, its state (A2A's
    word), the task as the protocol writes it (JSON), when it last changed, and the host
    that runs it."""

    task_id: str
    owner: str
    context_id: str
    state: str
    task: str
    updated_at: float
    host: str | None = None
    """The host that runs it (the name its session's lease gives it; None: a row written
    before hosts were kept)."""


class A2aTaskRows(Table):
    """The ``a2a_tasks`` operations over one database."""

    async def save(self, task: StoredA2aTask) -> bool:
        """Write ``task`` (replacing its row); False, writing nothing, when its id is another
        owner's. A row that has ended (``ENDED``) is kept when ``task`` is in another state:
        a host that ran on after another declared its task abandoned changes nothing."""
        changed = await self._write(
            SAVE,
            task.task_id,
            task.owner,
            task.context_id,
            task.state,
            task.task,
            task.updated_at,
            task.host,
            *ENDED,
        )
        if changed:
            return True
        row = await self._database.one(
            "SELECT owner FROM a2a_tasks WHERE task_id = ?", task.task_id
        )
        return row is not None and row["owner"] == task.owner

    async def get(self, owner: str, task_id: str) -> StoredA2aTask | None:
        row = await self._database.one(
            "SELECT * FROM a2a_tasks WHERE task_id = ? AND owner = ?", task_id, owner
        )
        return None if row is None else _task(row)

    async def of_owner(self, owner: str, context_id: str | None = None) -> list[StoredA2aTask]:
        """The owner's tasks (in one context), newest change first."""
        if context_id is None:
            rows = await self._database.all(
                "SELECT * FROM a2a_tasks WHERE owner = ? ORDER BY updated_at DESC", owner
            )
        else:
            rows = await self._database.all(
                "SELECT * FROM a2a_tasks WHERE owner = ? AND context_id = ? "
                "ORDER BY updated_at DESC",
                owner,
                context_id,
            )
        return [_task(row) for row in rows]

    async def context_owners(self, context_id: str) -> set[str]:
        """Who has tasks in the context."""
        rows = await self._database.all(
            "SELECT DISTINCT owner FROM a2a_tasks WHERE context_id = ?", context_id
        )
        return {str(row["owner"]) for row in rows}

    async def delete(self, owner: str, task_id: str) -> None:
        await self._write("DELETE FROM a2a_tasks WHERE task_id = ? AND owner = ?", task_id, owner)


def _task(row: Row) -> StoredA2aTask:
    return StoredA2aTask(
        str(row["task_id"]),
        str(row["owner"]),
        str(row["context_id"]),
        str(row["state"]),
        str(row["task"]),
        float(row["updated_at"]),
        None if row["host"] is None else str(row["host"]),
    )
