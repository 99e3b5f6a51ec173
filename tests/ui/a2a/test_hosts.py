"""``agentos a2a`` hosts sharing a store (issue 50's review): each task names the host that
runs it, so a task left unfinished by a host that stopped reads ``failed`` even once its
context's session runs again (on the next host, for a new task), and a message for a
session another live host runs is refused there, naming that host, not taken over. The
hosts share an SQLite file, a PostgreSQL database, or one behind PgBouncer."""

from __future__ import annotations

import re
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from a2a.client import Client
from a2a.helpers import get_message_text
from a2a.types.a2a_pb2 import CancelTaskRequest
from a2a.types.a2a_pb2 import GetTaskRequest
from a2a.types.a2a_pb2 import ListTasksRequest
from a2a.types.a2a_pb2 import SubscribeToTaskRequest
from a2a.types.a2a_pb2 import TaskState
from a2a.utils.errors import TaskNotCancelableError
from a2a.utils.errors import UnsupportedOperationError
from pydantic import BaseModel

import agentos.a2a
from agentos import AgentConfig
from agentos import Host
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import SqliteStore
from agentos import ToolContext
from agentos import tool
from agentos.stores import StoredA2aTask
from agentos.stores import a2a_tasks_of
from agentos.testing import text
from agentos.testing import tool_calls
from tests.support.asgi import free_port
from tests.support.asgi import served
from tests.ui.a2a.running import a2a_client
from tests.ui.a2a.running import connected
from tests.ui.a2a.running import everything
from tests.ui.a2a.running import message
from tests.ui.a2a.running import said
from tests.ui.a2a.running import started
from tests.ui.a2a.running import two_hosts

pytestmark = pytest.mark.anyio

FAILED = TaskState.TASK_STATE_FAILED
ABANDONED = "the host that ran its turn stopped before the turn ended"
MINE = ["--token", "mine"]
SLOW = "tests.support.slow_tools"


async def reads_abandoned(client: Client, task_id: str) -> None:
    """The task reads failed, left by the host that stopped, and cancelling it is refused as
    a finished task's (not as one another host runs)."""
    fetched = await client.get_task(GetTaskRequest(id=task_id))
    assert fetched.status.state == FAILED
    assert get_message_text(fetched.status.message) == ABANDONED
    with pytest.raises(TaskNotCancelableError) as refused:
        await client.cancel_task(CancelTaskRequest(id=task_id))
    assert "another host" not in str(refused.value)


async def test_a_task_left_unfinished_reads_failed_while_its_session_runs_a_new_one(
    tmp_path: Path, any_env: dict[str, str]
) -> None:
    env = any_env
    env["AGENTOS_TEST_MARK"] = str(tmp_path / "cancelled.txt")
    async with a2a_client(tmp_path, env, options=MINE, module=SLOW) as client:
        events = client.send_message(message("go"))
        left = await started(events, '{"step": 2}')
        context_id = (await client.get_task(GetTaskRequest(id=left))).context_id
    async with a2a_client(tmp_path, env, options=MINE, module=SLOW) as client:
        events = client.send_message(message("go", context_id=context_id))
        running = await started(events, '{"step": 2}')  # the session is live here again
        await reads_abandoned(client, left)
        (final,) = await everything(client.subscribe(SubscribeToTaskRequest(id=left)))
        assert final.task.status.state == FAILED
        listed = await client.list_tasks(ListTasksRequest(context_id=context_id))
        states = {task.id: task.status.state for task in listed.tasks}
        assert states == {running: TaskState.TASK_STATE_WORKING, left: FAILED}


async def test_a_message_for_a_session_another_live_host_runs_is_refused_naming_it(
    tmp_path: Path, any_env: dict[str, str]
) -> None:
    env = any_env
    runs_there = (
        re.escape(" runs on another host (pid ")
        + r"\d+"
        + re.escape(f" on {socket.gethostname()})")
    )
    async with two_hosts(tmp_path, env, other_streams=False) as (listener, runner, other):
        events = runner.send_message(message("who is free?"))
        task = (await anext(events)).task
        async with await listener.accept() as held:
            async for event in events:
                if "progressed" in said(event):
                    break
            new = message("and Joe?", context_id=task.context_id)
            with pytest.raises(UnsupportedOperationError, match=runs_there):
                await everything(other.send_message(new))
            on_it = message("Joe", task_id=task.id, context_id=task.context_id)
            with pytest.raises(UnsupportedOperationError, match=runs_there):
                await everything(other.send_message(on_it))
            with pytest.raises(TaskNotCancelableError, match=runs_there):
                await other.cancel_task(CancelTaskRequest(id=task.id))
            seen = await other.get_task(GetTaskRequest(id=task.id))
            assert seen.status.state == TaskState.TASK_STATE_WORKING  # was: failed
            await held.send(b"go")  # the turn was not disturbed: it ends here
            rest = await everything(events)
        assert rest[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
        assert said(rest[-1]) == "held: Jane is free"
        listed = await other.list_tasks(ListTasksRequest(context_id=task.context_id))
        assert [t.id for t in listed.tasks] == [task.id]  # no task of the refused


async def test_a_tasks_first_row_is_written_while_its_host_holds_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session is taken before the task is first written: otherwise another host
    reading the task in between finds its host holding no session, and writes it
    ``failed``, abandoned, while it runs (and, a task keeping its end, for good)."""
    answer = ScriptedProvider((lambda r: True, lambda r: text("done")))
    port = free_port()
    async with (
        await SqliteStore.open(tmp_path / "agentos.db") as store,
        Runtime() as runtime,
        Host(runtime, answer, store=store) as host,
    ):
        rows = a2a_tasks_of(store)
        assert rows is not None
        held_then: list[bool] = []
        save = rows.save

        async def watched(task: StoredA2aTask) -> bool:
            held_then.append(task.context_id in await store.live_leases())
            return await save(task)

        monkeypatch.setattr(rows, "save", watched)
        app = agentos.a2a.app(host, AgentConfig(name="worker"), token=None, port=port)
        async with served(app, port), connected(f"http://127.0.0.1:{port}/", None) as client:
            with anyio.fail_after(60):
                (*_, last) = await everything(client.send_message(message("hello")))
        assert last.status_update.status.state == TaskState.TASK_STATE_COMPLETED
        assert held_then and all(held_then)


class Nothing(BaseModel):
    pass


async def stuck(args: Nothing, ctx: ToolContext) -> str:
    """Says it started, then never ends."""
    ctx.progress({"step": "started"})
    await anyio.sleep_forever()
    raise AssertionError("unreachable")


@asynccontextmanager
async def node(db: Path, holder: str) -> AsyncIterator[Client]:
    """A host named ``holder`` on ``db``, served in process, and a client of it."""
    model = ScriptedProvider((lambda r: True, lambda r: tool_calls(("stuck", {}))))
    port = free_port()
    async with (
        await SqliteStore.open(db) as store,
        Runtime([tool(stuck, name="stuck")]) as runtime,
        Host(runtime, model, store=store, holder=holder) as host,
    ):
        app = agentos.a2a.app(host, AgentConfig(name="worker"), token=None, port=port)
        async with served(app, port), connected(f"http://127.0.0.1:{port}/", None) as client:
            yield client


async def test_a_task_left_by_a_host_restarted_under_the_same_name_reads_failed_elsewhere(
    tmp_path: Path,
) -> None:
    """A container's process is pid 1 on the same host name after a restart: the restarted
    host holding the context for a new task does not make the old task read as running."""
    db = tmp_path / "agentos.db"
    with anyio.fail_after(60):
        async with node(db, "node-a") as first:
            left = await started(first.send_message(message("go")), '"started"')
            context_id = (await first.get_task(GetTaskRequest(id=left))).context_id
        async with node(db, "node-a") as again, node(db, "node-b") as other:
            await started(again.send_message(message("go", context_id=context_id)), '"started"')
            await reads_abandoned(other, left)
