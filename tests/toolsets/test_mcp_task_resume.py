"""A call that runs as an MCP task outlives its host: the host is SIGKILLed, another resumes
the session, and the call goes on with the same task (not reported lost) until its result
reaches the session. Against a hand-written HTTP server that keeps its tasks."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agentos import CallStatus
from agentos import McpServer
from agentos import ProgressKind
from agentos import Runtime
from tests.support.asgi import free_port
from tests.support.asgi import served
from tests.support.mcp_servers.task_server import TASKS
from tests.support.mcp_servers.task_server import app
from tests.support.task_host import killed_when_ready
from tests.toolsets.conftest import WAIT
from tests.toolsets.conftest import outcome
from tests.toolsets.conftest import resumed_after_a_kill

pytestmark = pytest.mark.anyio


async def test_a_task_outlives_a_killed_host_and_its_result_reaches_the_session(
    tmp_path: Path,
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    path = tmp_path / "tasks.db"
    async with served(app, port):
        session_id = await killed_when_ready(path, url)
        (task,) = TASKS.values()
        assert task.status == "working"  # the host died; the server's task goes on
        done, released, history = await resumed_after_a_kill(path, url, session_id, "research", {})
    assert released.status is CallStatus.COMPLETED
    assert done.status is CallStatus.COMPLETED
    assert done.result == "research on ecs done"
    followed = [e.payload for e in done.progress if e.kind is ProgressKind.PARTIAL]
    assert {"task_id": task.task_id, "status": "working", "text": "reading about ecs"} in followed
    assert len(TASKS) == 1  # followed, not started again
    assert "research on ecs done" in history


async def test_a_call_whose_task_server_goes_away_fails_as_lost() -> None:
    port = free_port()
    server = McpServer.http("tasks", f"http://127.0.0.1:{port}/mcp", start_timeout=WAIT)
    with anyio.fail_after(WAIT * 2):
        async with served(app, port) as stop, Runtime(toolsets=[server]) as runtime:
            async with runtime.subscribe("default") as events:
                call = runtime.submit("research", {"topic": "gone"})
                while not runtime.status(call).progress[1:]:  # the task's first status
                    await events.receive()
            await stop()
            done = await outcome(runtime, call)
    assert done.status is CallStatus.FAILED and done.error is not None
    assert done.error.message.startswith("MCP server 'tasks' was lost")
