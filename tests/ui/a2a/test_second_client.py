"""``agentos a2a`` driven by a second framework's A2A client (issue 50): Google's ADK, its
``RemoteA2aAgent`` (over a2a-sdk's client, in a venv of its own), in a process of its own.
It reads the card, sends messages in one context and reads the turns' lines and answers as
ADK events; a task cancelled mid-turn ends its ADK run with ADK's own error."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from a2a.types.a2a_pb2 import CancelTaskRequest
from a2a.types.a2a_pb2 import GetTaskRequest
from a2a.types.a2a_pb2 import ListTasksRequest
from a2a.types.a2a_pb2 import TaskState

from tests.support.adk import adk_client
from tests.ui.a2a.running import a2a_server
from tests.ui.a2a.running import connected

pytestmark = pytest.mark.anyio

ANSWER = "count: 3\nshout: EXAMPLE"


async def test_adks_remote_agent_runs_turns_in_one_context(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with a2a_server(tmp_path, env) as (url, token), anyio.fail_after(120):
        assert token is not None
        async with adk_client(url, token, "hello", "once more") as adk:
            events = await adk.rest()
        first = [e for e in events if e["message"] == 0]
        again = [e for e in events if e["message"] == 1]
        for turn in (first, again):
            said = [e["said"] for e in turn if e["said"]]  # the first: the task, submitted
            assert said[0].endswith(": posted") and said[-1] == ANSWER
            assert any(line.startswith("count (") and line.endswith(" started") for line in said)
            assert turn[-1]["state"] == "TASK_STATE_COMPLETED"
            assert all(e["error"] is None for e in turn)
        assert first[-1]["context"] == again[-1]["context"]  # ADK kept the context
        assert first[-1]["task"] != again[-1]["task"]
        async with connected(url, token) as client:
            for turn in (first, again):
                task = await client.get_task(GetTaskRequest(id=turn[-1]["task"]))
                assert task.status.state == TaskState.TASK_STATE_COMPLETED
            listed = await client.list_tasks(ListTasksRequest(context_id=first[-1]["context"]))
            assert {t.id for t in listed.tasks} == {first[-1]["task"], again[-1]["task"]}


async def test_a_task_cancelled_mid_turn_ends_adks_run_canceled(
    tmp_path: Path, env: dict[str, str]
) -> None:
    mark = tmp_path / "cancelled.txt"
    env["AGENTOS_TEST_MARK"] = str(mark)
    with (
        a2a_server(tmp_path, env, module="tests.support.slow_tools") as (url, token),
        anyio.fail_after(120),
    ):
        assert token is not None
        async with adk_client(url, token, "go") as adk, connected(url, token) as client:
            while (event := await adk.next()) is not None and '{"step": 2}' not in event["said"]:
                pass
            assert event is not None, "ADK's run ended before the tool's last step"
            cancelled = await client.cancel_task(CancelTaskRequest(id=event["task"]))
            assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
            rest = await adk.rest()
        assert rest[-1]["state"] == "TASK_STATE_CANCELED"
        assert rest[-1]["said"] == "the A2A client cancelled the task"
    assert mark.read_text() == "cancelled"  # the tool itself was cancelled
