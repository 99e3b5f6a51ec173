"""Issue 50: the tasks ``agentos a2a`` serves, kept beside the sessions on each backend:
each row its owner's, read, listed and deleted by it alone; another owner's task id is
not overwritten; a row keeps the host that runs its task, and a task that has ended keeps
its end."""

from __future__ import annotations

import pytest

from agentos.stores import StoredA2aTask
from agentos.stores import a2a_tasks_of
from tests.support.backends import Backend

pytestmark = pytest.mark.anyio


def task(
    task_id: str,
    owner: str = "me",
    context: str = "c1",
    at: float = 1.0,
    *,
    host: str | None = None,
    state: str = "TASK_STATE_WORKING",
) -> StoredA2aTask:
    return StoredA2aTask(task_id, owner, context, state, f'{{"id": "{task_id}"}}', at, host)


async def test_a_task_is_its_owners_alone(backend: Backend) -> None:
    async with await backend.open() as store:
        rows = a2a_tasks_of(store)
        assert rows is not None
        assert await rows.save(task("t1"))
        assert await rows.save(task("t2", at=2.0))
        assert await rows.save(task("t3", context="c2", at=3.0))
        assert await rows.save(task("theirs", owner="them", context="c1"))
        done = StoredA2aTask("t1", "me", "c1", "TASK_STATE_COMPLETED", "{}", 4.0)
        assert await rows.save(done)  # written again: replaced
        assert not await rows.save(task("t1", owner="them"))  # another's id: left alone
        assert await rows.get("me", "t1") == done
        assert await rows.get("them", "t1") is None
        assert [t.task_id for t in await rows.of_owner("me")] == ["t1", "t3", "t2"]
        assert [t.task_id for t in await rows.of_owner("me", "c1")] == ["t1", "t2"]
        assert await rows.context_owners("c1") == {"me", "them"}
        assert await rows.context_owners("nowhere") == set()
        await rows.delete("them", "t2")  # not theirs: stays
        await rows.delete("me", "t3")
        assert [t.task_id for t in await rows.of_owner("me")] == ["t1", "t2"]


async def test_a_task_keeps_its_host_and_its_end(backend: Backend) -> None:
    """Issue 50's review: the row names the host that runs the task (the one another host
    asks whether it still runs it); once the task has ended, a late save of another state
    (the host that ran it, back after another declared it abandoned) changes nothing."""
    async with await backend.open() as store:
        rows = a2a_tasks_of(store)
        assert rows is not None
        assert await rows.save(task("t1", host="pid 1 on a"))
        assert (await rows.get("me", "t1")) == task("t1", host="pid 1 on a")
        assert await rows.save(task("t1", at=2.0, host="pid 2 on b"))  # runs elsewhere now
        assert (await rows.get("me", "t1")) == task("t1", at=2.0, host="pid 2 on b")
        assert await rows.save(task("t2"))
        assert (await rows.get("me", "t2")) == task("t2")  # no host: None
        ends = ("TASK_STATE_FAILED", "TASK_STATE_COMPLETED", "TASK_STATE_CANCELED",
                "TASK_STATE_REJECTED")  # fmt: skip
        for ended, other in zip(ends, ends[1:] + ends[:1], strict=True):
            over = task(ended, at=3.0, host="pid 3 on c", state=ended)
            assert await rows.save(over)
            assert await rows.save(task(ended, at=4.0, host="pid 1 on a"))  # kept as it ended
            late = task(ended, at=5.0, host="pid 1 on a", state="TASK_STATE_INPUT_REQUIRED")
            assert await rows.save(late)
            assert await rows.save(task(ended, at=6.0, state=other))  # nor another end
            assert (await rows.get("me", ended)) == over
            again = task(ended, at=7.0, host="pid 1 on a", state=ended)
            assert await rows.save(again)  # the same end, said again: written
            assert (await rows.get("me", ended)) == again
        assert not await rows.save(task("t2", owner="them", state=ends[0]))  # still not theirs


async def test_a_store_from_before_task_hosts_gains_them(backend: Backend) -> None:
    """A database from before the host column (SQLite 10, PostgreSQL 8) gains it on open,
    its rows kept with no host."""
    async with await backend.open() as store:
        rows = a2a_tasks_of(store)
        assert rows is not None and await rows.save(task("old", host="pid 1 on a"))
    await backend.raw(
        "ALTER TABLE a2a_tasks DROP COLUMN host; DELETE FROM schema_migrations WHERE version = "
        "(SELECT MAX(version) FROM schema_migrations)"
    )
    async with await backend.open() as store:
        rows = a2a_tasks_of(store)
        assert rows is not None
        assert await rows.get("me", "old") == task("old")
        assert await rows.save(task("new", host="pid 2 on b"))
        assert (await rows.get("me", "new")) == task("new", host="pid 2 on b")


def test_a_store_of_other_tables_has_none() -> None:
    assert a2a_tasks_of(object()) is None
    assert a2a_tasks_of(None) is None
