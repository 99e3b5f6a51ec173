"""``agentos a2a``: agentos as an A2A agent (issue 50), a real process driven by the A2A
SDK's own client. A message starts a turn of its context's session as a task; the task
follows the turn (working, input-required, completed, canceled), streams what the turn's
calls do, and is kept in the session database, its token holder's alone."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import pytest
from a2a.client import A2ACardResolver
from a2a.helpers import get_artifact_text
from a2a.helpers import get_data_parts
from a2a.helpers import get_message_text
from a2a.types.a2a_pb2 import CancelTaskRequest
from a2a.types.a2a_pb2 import GetTaskRequest
from a2a.types.a2a_pb2 import ListTasksRequest
from a2a.types.a2a_pb2 import SubscribeToTaskRequest
from a2a.types.a2a_pb2 import Task
from a2a.types.a2a_pb2 import TaskState
from a2a.utils.errors import InvalidParamsError
from a2a.utils.errors import TaskNotCancelableError
from a2a.utils.errors import TaskNotFoundError

from tests.support import cli
from tests.support.gate_tools import gate
from tests.ui.a2a.running import a2a_client
from tests.ui.a2a.running import a2a_server
from tests.ui.a2a.running import connected
from tests.ui.a2a.running import everything
from tests.ui.a2a.running import message
from tests.ui.a2a.running import said
from tests.ui.a2a.running import started
from tests.ui.a2a.running import two_hosts

pytestmark = pytest.mark.anyio

COMPLETED = TaskState.TASK_STATE_COMPLETED


async def test_a_message_runs_a_turn_as_a_task_kept_for_its_client(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with a2a_server(tmp_path, env) as (url, token), anyio.fail_after(60):
        async with httpx.AsyncClient() as http, connected(url, token, streaming=False) as client:
            card = await A2ACardResolver(http, url).get_agent_card()
            assert card.name == "worker" and card.capabilities.streaming
            assert card.security_schemes["agentos"].http_auth_security_scheme.scheme == "Bearer"
            (first,) = await everything(client.send_message(message("hello")))
            task = first.task
            assert task.status.state == COMPLETED
            answer = "count: 3\nshout: EXAMPLE"
            assert get_message_text(task.status.message) == answer
            assert [get_artifact_text(a) for a in task.artifacts] == [answer]
            (again,) = await everything(
                client.send_message(message("once more", context_id=task.context_id))
            )
            assert again.task.context_id == task.context_id and again.task.id != task.id
            fetched = await client.get_task(GetTaskRequest(id=task.id))
            assert fetched.status.state == COMPLETED and fetched.artifacts == task.artifacts
            listed = await client.list_tasks(ListTasksRequest(context_id=task.context_id))
            assert {t.id for t in listed.tasks} == {task.id, again.task.id}
            with pytest.raises(InvalidParamsError, match="no context"):
                await everything(client.send_message(message("hi", context_id="elsewhere")))


async def test_a_stream_tells_the_turns_calls_as_they_run(
    tmp_path: Path, env: dict[str, str]
) -> None:
    async with (
        gate(env) as listener,
        a2a_client(tmp_path, env, module="tests.support.gate_tools") as client,
    ):
        events = client.send_message(message("who is free?"))
        first = await anext(events)
        assert first.task.status.state == TaskState.TASK_STATE_SUBMITTED
        lines: list[str] = []
        async with await listener.accept() as held:
            async for event in events:
                lines.append(said(event))
                if "progressed" in lines[-1]:
                    assert event.status_update.status.state == TaskState.TASK_STATE_WORKING
                    break
            await held.send(b"go")  # the gate opens: the call ends, the model answers
            rest = await everything(events)
        assert lines[0].endswith(": posted")
        assert lines[1].startswith("held (") and lines[1].endswith(" queued")
        assert lines[-1].endswith('progressed: {"person": "Jane", "percent": 50}')
        assert rest[-1].status_update.status.state == COMPLETED
        assert said(rest[-1]) == "held: Jane is free"
        assert any(" completed" in said(event) for event in rest)


async def test_cancelling_a_task_stops_its_turns_calls(tmp_path: Path, env: dict[str, str]) -> None:
    mark = tmp_path / "cancelled.txt"
    env["AGENTOS_TEST_MARK"] = str(mark)
    async with a2a_client(tmp_path, env, module="tests.support.slow_tools") as client:
        events = client.send_message(message("go"))
        task_id = await started(events, '{"step": 2}')
        cancelled = await client.cancel_task(CancelTaskRequest(id=task_id))
        assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
        (*_, last) = await everything(events)  # the stream ends with the task
        assert last.status_update.status.state == TaskState.TASK_STATE_CANCELED
        fetched = await client.get_task(GetTaskRequest(id=task_id))
        assert fetched.status.state == TaskState.TASK_STATE_CANCELED
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=task_id))
    assert mark.read_text() == "cancelled"  # the tool itself was cancelled


async def test_a_question_makes_the_task_ask_its_client_and_a_message_answers_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    async with a2a_client(
        tmp_path, env, streaming=False, module="tests.ui.cli.asking_tools"
    ) as client:
        (first,) = await everything(client.send_message(message("weather?")))
        task = first.task
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        asked = task.status.message
        assert get_message_text(asked).startswith("Which city?")
        (question,) = get_data_parts(asked.parts)
        assert question["question"]["form"]["required"] == ["city"]
        wrong = message(data={"days": 99}, task_id=task.id, context_id=task.context_id)
        (refused,) = await everything(client.send_message(wrong))
        assert refused.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert "does not fit" in get_message_text(refused.task.status.message)
        answer = message("Paris", task_id=task.id, context_id=task.context_id)
        (done,) = await everything(client.send_message(answer))
        assert done.task.status.state == COMPLETED
        assert get_message_text(done.task.status.message) == 'where: accept: {"city": "Paris"}'


async def test_a_question_unanswered_for_the_ask_timeout_is_declined_and_the_task_ends(
    tmp_path: Path, env: dict[str, str]
) -> None:
    options = ["--ask-timeout", "0.001"]
    module = "tests.ui.cli.asking_tools"
    with a2a_server(tmp_path, env, options=options, module=module) as (url, token):
        async with connected(url, token) as client:
            with anyio.fail_after(60):
                (*_, asked) = await everything(client.send_message(message("weather?")))
                assert asked.status_update.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
                task_id = asked.status_update.task_id
                while True:  # followed here until it ends, or read from the store once it has
                    (*_, last) = await everything(
                        client.subscribe(SubscribeToTaskRequest(id=task_id))
                    )
                    if last.HasField("task"):
                        task = last.task
                    else:
                        task = await client.get_task(GetTaskRequest(id=task_id))
                    if task.status.state != TaskState.TASK_STATE_INPUT_REQUIRED:
                        break
            assert task.status.state == COMPLETED
            assert get_message_text(task.status.message) == (
                "where: decline: null (the A2A client did not answer within 0.001 s)"
            )


async def test_a_sub_agents_question_is_asked_by_the_task_that_runs_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    helper = """
[policy.rules]
helper = "run_sync"

[agents.helper]
agent = { name = "helper", model = "test", tools = ["tests.ui.cli.asking_tools"] }
description = "Finds out where to look."
"""
    async with a2a_client(tmp_path, env, streaming=False, agent=helper) as client:
        (first,) = await everything(client.send_message(message("weather?")))
        task = first.task
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        (question,) = get_data_parts(task.status.message.parts)
        assert question["tool_name"] == "where"
        answer = message("decline", task_id=task.id, context_id=task.context_id)
        (done,) = await everything(client.send_message(answer))
        assert done.task.status.state == COMPLETED
        assert "decline" in get_message_text(done.task.status.message)


async def test_a_stored_task_keeps_the_newest_of_a_long_turns_lines(
    tmp_path: Path, env: dict[str, str]
) -> None:
    async with a2a_client(tmp_path, env, module="tests.ui.a2a.chatty_tools") as client:
        (*_, last) = await everything(client.send_message(message("go")))
        assert said(last) == "chatty: 300 steps"
        task = await client.get_task(GetTaskRequest(id=last.status_update.task_id))
        assert task.status.state == COMPLETED
        first, *agents = task.history
        assert get_message_text(first) == "go"  # the client's message is kept
        assert len(agents) == 100
        assert "completed" in get_message_text(agents[-1])  # the newest are kept


async def test_a_client_needs_the_token_and_sees_only_its_own_tasks(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with (
        a2a_server(tmp_path, env, options=["--token", "mine"]) as (url, token),
        anyio.fail_after(60),
    ):
        async with httpx.AsyncClient() as http:
            card = await http.get(url + ".well-known/agent-card.json")  # the card is public
            assert card.status_code == 200 and card.json()["name"] == "worker"
            request = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}
            refused = await http.post(url, json=request)
            assert refused.status_code == 401
            assert "resource_metadata" in refused.headers["www-authenticate"]
            wrong = await http.post(url, json=request, headers={"Authorization": "Bearer no"})
            assert wrong.status_code == 401
            mine = {"Authorization": "Bearer mine"}
            port = url.split(":")[2].rstrip("/")
            rebound = await http.post(
                url, json=request, headers={**mine, "Host": f"evil.example:{port}"}
            )
            assert rebound.status_code == 421
            foreign = await http.post(
                url, json=request, headers={**mine, "Origin": "http://evil.example"}
            )
            assert foreign.status_code == 403
            huge = await http.post(url, content=b"x" * (2 * 1024 * 1024), headers=mine)
            assert huge.status_code == 413

            async def chunks() -> AsyncIterator[bytes]:  # no Content-Length to refuse it by
                for _ in range(40):
                    yield b"x" * 65536

            chunked = await http.post(url, content=chunks(), headers=mine)
            assert chunked.status_code == 413, chunked.text
        async with connected(url, token) as client:
            (*_, last) = await everything(client.send_message(message("hello")))
            task_id = last.status_update.task_id
            context_id = last.status_update.context_id
    # another token on the same database (another host sharing the store) sees none of it
    async with a2a_client(tmp_path, env, options=["--token", "theirs"]) as theirs:
        with pytest.raises(TaskNotFoundError):
            await theirs.get_task(GetTaskRequest(id=task_id))
        assert list((await theirs.list_tasks(ListTasksRequest())).tasks) == []
        with pytest.raises(InvalidParamsError, match="no context"):
            await everything(theirs.send_message(message("hi", context_id=context_id)))
        with pytest.raises(TaskNotFoundError):
            await theirs.cancel_task(CancelTaskRequest(id=task_id))


async def test_a_task_outlives_the_process_that_ran_it(tmp_path: Path, env: dict[str, str]) -> None:
    async with a2a_client(tmp_path, env, streaming=False, options=["--token", "mine"]) as client:
        (first,) = await everything(client.send_message(message("hello")))
    task: Task = first.task
    async with a2a_client(tmp_path, env, options=["--token", "mine"]) as client:
        fetched = await client.get_task(GetTaskRequest(id=task.id))
        assert fetched.status.state == COMPLETED and fetched.artifacts == task.artifacts
        (final,) = await everything(client.subscribe(SubscribeToTaskRequest(id=task.id)))
        assert final.task.status.state == COMPLETED
        (*_, later) = await everything(  # the context's session comes back from the store
            client.send_message(message("and now?", context_id=task.context_id))
        )
        assert later.status_update.status.state == COMPLETED
        listed = await client.list_tasks(ListTasksRequest(context_id=task.context_id))
        assert [t.id for t in listed.tasks] == [later.status_update.task_id, task.id]


async def test_a_message_naming_only_a_stored_task_makes_no_session_of_its_own(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """After a restart the SDK gives a message that names a task but no context a new
    context id; the task's own context is the one its turn would run in, so no session is
    made for the new id (the SDK then refuses the message: its ids disagree)."""
    mine = ["--token", "mine"]
    asking = "tests.ui.cli.asking_tools"
    async with a2a_client(tmp_path, env, streaming=False, options=mine, module=asking) as client:
        (first,) = await everything(client.send_message(message("weather?")))
        assert first.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    async with a2a_client(tmp_path, env, streaming=False, options=mine, module=asking) as client:
        with pytest.raises(InvalidParamsError):
            await everything(client.send_message(message("Paris", task_id=first.task.id)))
    sessions = cli.agentos(env, "sessions").lines
    assert [row["session_id"] for row in sessions] == [first.task.context_id]


async def test_another_host_on_the_store_follows_a_task_this_one_runs(
    tmp_path: Path, env: dict[str, str]
) -> None:
    async with two_hosts(tmp_path, env) as (listener, runner, follower):
        events = runner.send_message(message("who is free?"))
        task_id = (await anext(events)).task.id
        async with await listener.accept() as held:
            async for event in events:
                if "progressed" in said(event):
                    break
            followed = follower.subscribe(SubscribeToTaskRequest(id=task_id))
            snapshot = await anext(followed)
            assert snapshot.task.status.state == TaskState.TASK_STATE_WORKING
            assert "progressed" in get_message_text(snapshot.task.status.message)
            with pytest.raises(TaskNotCancelableError, match="runs on another host"):
                await follower.cancel_task(CancelTaskRequest(id=task_id))
            await held.send(b"go")
            rest = await everything(followed)
            await everything(events)
        assert rest[-1].status_update.status.state == COMPLETED
        (answer,) = [e.artifact_update for e in rest if e.HasField("artifact_update")]
        assert get_artifact_text(answer.artifact) == "held: Jane is free"


async def test_a_task_its_stopped_host_left_unfinished_reads_failed(
    tmp_path: Path, env: dict[str, str]
) -> None:
    env["AGENTOS_TEST_MARK"] = str(tmp_path / "cancelled.txt")
    mine = ["--token", "mine"]
    stderr: list[str] = []
    with (
        a2a_server(
            tmp_path, env, options=mine, module="tests.support.slow_tools", said_after=stderr
        ) as (url, token),
        anyio.fail_after(60),
    ):
        async with connected(url, token) as client:
            events = client.send_message(message("go"))
            task_id = await started(events, '{"step": 2}')
    assert [line for line in stderr if line.strip()] == ["error: terminated (SIGTERM)"]
    async with a2a_client(tmp_path, env, options=mine) as client:
        (listed,) = (await client.list_tasks(ListTasksRequest())).tasks
        assert listed.status.state == TaskState.TASK_STATE_FAILED
        fetched = await client.get_task(GetTaskRequest(id=task_id))
        assert fetched.status.state == TaskState.TASK_STATE_FAILED
        assert get_message_text(fetched.status.message) == (
            "the host that ran its turn stopped before the turn ended"
        )
        (final,) = await everything(client.subscribe(SubscribeToTaskRequest(id=task_id)))
        assert final.task.status.state == TaskState.TASK_STATE_FAILED
