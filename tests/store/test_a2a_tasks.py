"""Issue 50: the tasks ``agentos a2a`` serves, kept beside the sessions on each backend:
each row its owner's, read, listed and deleted by it alone; another owner's task id is
not overwritten."""

from __future__ import annotations

import pytest

from agentos.stores import StoredA2aTask, a2a_tasks_of
from tests.support.backends import Backend

pytestmark = pytest.mark.anyio


def task(task_id: str, owner: str = "me", context: str = "c1", at: float = 1.0) -> StoredA2aTask:
    return StoredA2aTask(
        task_id, owner, context, "TASK_STATE_WORKING", f'{{"id": "{task_id}"}}', at
    )


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


def test_a_store_of_other_tables_has_none() -> None:
    assert a2a_tasks_of(object()) is None
    assert a2a_tasks_of(None) is None
