"""``agentos mcp`` runs a ``post`` (or ``start_session``) as an MCP task, the 2025-11-25
protocol's (issue 49): the call is answered with the task at once, the turn goes on in the
host, and ``tasks/get``, ``tasks/result``, ``tasks/cancel`` and ``tasks/list`` follow, collect
and stop it, from any connection of the same owner. Against a real ``agentos mcp`` over HTTP,
through the ``mcp`` SDK's client (whose ``tools/call`` refuses a task, so that one request goes
out raw) and through agentos's own MCP client.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp import MCPError

from agentos import CallStatus
from agentos import McpServer
from agentos import ProgressKind
from agentos import Runtime
from tests.support import cli
from tests.support.gate_tools import gate
from tests.ui.mcp.running import ACCEPT
from tests.ui.mcp.running import INITIALIZE
from tests.ui.mcp.running import connected
from tests.ui.mcp.running import http_server
from tests.ui.mcp.running import structured

pytestmark = pytest.mark.anyio

POLL = 0.05
"""Seconds between two looks at a task whose status the test waits for."""
SYNC = '[policy]\ndefault = "run_sync"\n'
"""The agent's calls hold its turn, so its task works until they end (an overdue call
does not cut the wait short)."""


async def as_task(
    client: ClientSession, tool: str, arguments: dict[str, Any], task: dict[str, Any] | None = None
) -> types.Task:
    """Call ``tool`` as a task: the task the server answers with at once."""
    params = {"name": tool, "arguments": arguments, "task": {} if task is None else task}
    answer = await client._dispatcher.send_raw_request("tools/call", params, {})
    return types.CreateTaskResult.model_validate(answer).task


async def get(client: ClientSession, task_id: str) -> types.GetTaskResult:
    request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
    return await client.send_request(request, types.GetTaskResult)


async def result(client: ClientSession, task_id: str) -> types.CallToolResult:
    params = types.GetTaskPayloadRequestParams(task_id=task_id)
    return await client.send_request(
        types.GetTaskPayloadRequest(params=params), types.CallToolResult
    )


async def cancel(client: ClientSession, task_id: str) -> types.CancelTaskResult:
    request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id))
    return await client.send_request(request, types.CancelTaskResult)


async def listed(client: ClientSession) -> list[types.Task]:
    return (await client.send_request(types.ListTasksRequest(), types.ListTasksResult)).tasks


async def until(
    client: ClientSession, task_id: str, wanted: Callable[[types.GetTaskResult], bool]
) -> types.GetTaskResult:
    """Read the task's status, as a client polls, until it is what is ``wanted``."""
    while not wanted(task := await get(client, task_id)):  # noqa: ASYNC110 - tasks are polled
        await anyio.sleep(POLL)
    return task


def session_of(task: types.Task) -> str:
    """The session a task's turn runs in, from its first status message."""
    assert task.status_message is not None and task.status_message.endswith(": posted")
    return task.status_message.split()[1].rstrip(":")


async def test_a_task_answers_at_once_and_another_connection_collects_its_answer(
    tmp_path: Path, env: dict[str, str]
) -> None:
    async with gate(env) as listener:
        with http_server(tmp_path, env, module="tests.support.gate_tools", within=60) as (
            url,
            token,
        ):
            async with connected(url, token) as first:
                info = first.initialize_result
                assert info is not None and info.capabilities.tasks is not None
                offered = info.capabilities.tasks
                assert offered.list is not None and offered.cancel is not None
                assert offered.requests is not None and offered.requests.tools is not None
                assert offered.requests.tools.call is not None
                executions = {
                    tool.name: tool.execution and tool.execution.task_support
                    for tool in (await first.list_tools()).tools
                }
                assert executions == {
                    "start_session": "optional",
                    "post": "optional",
                    "get_tool_call_status": None,
                    "list_running_tool_calls": None,
                    "cancel_tool_call": None,
                    "answer": None,
                }
                task = await as_task(first, "start_session", {"message": "who is free?"})
                assert task.status == "working" and task.poll_interval
                session_id = session_of(task)
                held = await listener.accept()  # the turn's call runs: the task still works
                working = await until(first, task.task_id, lambda t: "held" in str(t))
                assert working.status == "working"
                assert working.status_message is not None
                assert working.status_message.startswith("held (")
            async with connected(url, token) as second:  # the first client has gone
                assert [t.task_id for t in await listed(second)] == [task.task_id]
                await held.send(b"go")  # the gate opens: the call ends, the model answers
                answer = await result(second, task.task_id)
                assert structured(answer)["session_id"] == session_id
                assert structured(answer)["answer"] == "held: Jane is free"
                assert answer.meta == {
                    "io.modelcontextprotocol/related-task": {"taskId": task.task_id}
                }
                done = await get(second, task.task_id)
                assert done.status == "completed"
                assert done.status_message == f"session {session_id}: idle"
                with pytest.raises(MCPError, match="already completed"):
                    await cancel(second, task.task_id)
            await held.aclose()


async def test_cancelling_a_task_stops_the_calls_its_turn_started(
    tmp_path: Path, env: dict[str, str]
) -> None:
    mark = tmp_path / "cancelled.txt"
    env["AGENTOS_TEST_MARK"] = str(mark)
    with http_server(tmp_path, env, module="tests.support.slow_tools", within=60) as (url, token):
        async with connected(url, token) as client:
            task = await as_task(client, "start_session", {"message": "go"})
            session_id = session_of(task)
            await until(client, task.task_id, lambda t: "progressed" in str(t.status_message))
            (call_id,) = await running(client)
            cancelled = await cancel(client, task.task_id)
            assert cancelled.status == "cancelled"
            assert (await get(client, task.task_id)).status == "cancelled"
            answer = await result(client, task.task_id)
            assert answer.is_error and "cancelled" in str(answer.content)
            assert (await ended(client, session_id, call_id))["status"] == "cancelled"
            with pytest.raises(MCPError, match="already cancelled"):
                await cancel(client, task.task_id)
            # the task says what stopped: its calls; the session goes on and its model answers
            assert cancelled.status_message == (
                "cancelled by the MCP client: the calls its turn started are cancelled; the "
                "session goes on (its model hears so, answers, and may start other calls)"
            )
            state = await session_state(client, session_id)
            while state["status"] != "idle":
                await anyio.sleep(POLL)
                state = await session_state(client, session_id)
            said = "slow_steps: error: cancelled: the MCP client cancelled its task"
            assert state["answer"] == said
    assert mark.read_text() == "cancelled"  # the tool itself was cancelled


async def session_state(client: ClientSession, session_id: str) -> dict[str, Any]:
    """The session as its resource reads."""
    read = await client.read_resource(f"agentos://sessions/{session_id}")
    (content,) = read.contents
    assert isinstance(content, types.TextResourceContents)
    state: dict[str, Any] = json.loads(content.text)
    return state


async def test_cancelling_a_task_stops_only_the_calls_its_own_turn_started(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Two tasks post to one session: cancelling the second stops its turn's call, while the
    first's call, still reporting after the second post, goes on and completes."""
    async with gate(env) as listener:
        with http_server(tmp_path, env, module="tests.ui.mcp.stepped_tools", within=60) as (
            url,
            token,
        ):
            async with connected(url, token) as client:
                first = await as_task(client, "start_session", {"message": "go"})
                session_id = session_of(first)
                first_gate = await listener.accept()
                (first_call,) = await running(client)
                post = {"session_id": session_id, "message": "more"}
                second = await as_task(client, "post", post)
                second_gate = await listener.accept()  # the second turn's call runs
                (second_call,) = [c for c in await running(client) if c != first_call]
                await first_gate.send(b"s")  # the first call reports after the second post
                await until(client, second.task_id, lambda t: '"step": 1' in str(t))
                assert (await cancel(client, second.task_id)).status == "cancelled"
                assert (await ended(client, session_id, second_call))["status"] == "cancelled"
                await first_gate.send(b"g")
                assert (await ended(client, session_id, first_call))["status"] == "completed"
                answer = structured(await result(client, first.task_id))
                assert answer["session_id"] == session_id
                assert (await get(client, first.task_id)).status == "completed"
            await first_gate.aclose()
            await second_gate.aclose()


async def test_a_task_refused_at_the_cap_starts_no_session(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """A client holds at most ``--max-tasks`` tasks still working: a further
    ``start_session`` as a task is refused before any session is made."""
    async with gate(env) as listener:
        options = ["--max-tasks", "1"]
        with http_server(
            tmp_path, env, options=options, module="tests.support.gate_tools", within=60
        ) as (url, token):
            async with connected(url, token) as client:
                task = await as_task(client, "start_session", {"message": "who is free?"})
                held = await listener.accept()  # its call runs: the task still works
                with pytest.raises(MCPError, match="you hold 1 tasks still working") as full:
                    await as_task(client, "start_session", {"message": "and now?"})
                assert full.value.error.code == types.INVALID_REQUEST
                sessions = (await client.list_resources()).resources
                assert [str(r.uri) for r in sessions] == [f"agentos://sessions/{session_of(task)}"]
                await held.send(b"go")
                await result(client, task.task_id)
                another = await as_task(client, "start_session", {"message": "again"})
                assert another.status == "working"  # the first has ended: room again
            await held.aclose()
    refused = cli.agentos(env, "mcp", "--http", "0", "--max-tasks", "0")
    assert refused.code == 2 and "--max-tasks" in refused.err


async def running(client: ClientSession) -> list[str]:
    """The ids of the calls of the client's sessions that still run."""
    calls = structured(await client.call_tool("list_running_tool_calls", {}))["tool_calls"]
    return [call["tool_call_id"] for call in calls]


async def ended(client: ClientSession, session_id: str, call_id: str) -> dict[str, Any]:
    """The call's status once it has ended."""
    ids = {"session_id": session_id, "tool_call_id": call_id}
    wait = {"wait_for_completion": True, "timeout_seconds": 30}
    return structured(await client.call_tool("get_tool_call_status", {**ids, **wait}))


async def test_stopping_the_server_leaves_a_tasks_calls_to_the_host(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """``agentos mcp`` stopped while a task works cancels none of its calls as if the client
    had: they are the host's, which stops too, so the stored call reads as any call a stopped
    process left (orphaned, its session may be resumed), not cancelled by the client."""
    env["AGENTOS_TEST_MARK"] = str(tmp_path / "cancelled.txt")
    with http_server(tmp_path, env, module="tests.support.slow_tools", within=60) as (url, token):
        async with connected(url, token) as client:
            task = await as_task(client, "start_session", {"message": "go"})
            await until(client, task.task_id, lambda t: "progressed" in str(t.status_message))
    (call,) = cli.agentos(env, "calls", session_of(task), "--json").lines
    assert (call["status"], call["cancel_reason"]) == ("orphaned", None), call


async def test_a_task_is_its_owners_and_is_forgotten_after_its_ttl(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with http_server(tmp_path, env, options=["--no-token"], within=60) as (url, _):
        # without a token, each connection is an owner of its own
        async with connected(url, None) as mine, connected(url, None) as theirs:
            task = await as_task(mine, "start_session", {"message": "hi"}, {"ttl": 60_000})
            assert task.ttl == 60_000
            for asked in (get, result, cancel):
                with pytest.raises(MCPError, match="unknown task") as refused:
                    await asked(theirs, task.task_id)
                assert refused.value.error.code == types.INVALID_PARAMS
            assert await listed(theirs) == []
            answer = structured(await result(mine, task.task_id))
            assert answer["answer"] == "count: 3\nshout: EXAMPLE"
            session_id = answer["session_id"]
            with pytest.raises(MCPError, match="unknown task 'nope'") as unknown:
                await get(mine, "nope")
            assert unknown.value.error.code == types.INVALID_PARAMS
            # a post as a task that is refused is answered as the plain post would be
            refused_post = await mine._dispatcher.send_raw_request(
                "tools/call",
                {"name": "post", "arguments": {"session_id": "nope", "message": "hi"}, "task": {}},
                {},
            )
            assert refused_post["isError"] and "no session" in str(refused_post["content"])
            with pytest.raises(MCPError, match="does not run as a task") as not_a_task:
                await as_task(mine, "list_running_tool_calls", {})
            assert not_a_task.value.error.code == types.METHOD_NOT_FOUND
            # the TTL: none asked gets an hour, more than a day gets a day
            post = {"session_id": session_id, "message": "again"}
            assert (await as_task(mine, "post", post)).ttl == 3600 * 1000
            assert (await as_task(mine, "post", post, {"ttl": 10**12})).ttl == 24 * 3600 * 1000
            brief = await as_task(mine, "post", post, {"ttl": 0})
            with pytest.raises(MCPError, match="unknown task"):  # once done, it is forgotten
                await until(mine, brief.task_id, lambda t: False)
            # a plain post, no task asked, lasts until the model has answered, as before
            plain = structured(await mine.call_tool("post", post))
            assert plain["session_id"] == session_id and plain["status"] == "idle"


async def test_a_turn_longer_than_its_tasks_ttl_keeps_its_answer_a_ttl_after_it_ends(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """A finished task is kept its TTL after it ends too: a turn that outlasts the TTL it
    asked is not forgotten at the first look after it ends."""
    ttl = timedelta(seconds=2)
    async with gate(env) as listener:
        with http_server(
            tmp_path, env, module="tests.support.gate_tools", agent=SYNC, within=60
        ) as (url, token):
            async with connected(url, token) as client:
                task = await as_task(
                    client,
                    "start_session",
                    {"message": "who is free?"},
                    {"ttl": ttl // timedelta(milliseconds=1)},
                )
                held = await listener.accept()
                created = datetime.fromisoformat(task.created_at)
                # the turn lasts past the TTL: the time itself is what is waited for
                past = created + ttl + timedelta(milliseconds=200) - datetime.now(UTC)
                await anyio.sleep(max(past.total_seconds(), 0))
                assert (await get(client, task.task_id)).status == "working"
                await held.send(b"go")
                answer = structured(await result(client, task.task_id))
                assert answer["answer"] == "held: Jane is free"
                assert (await get(client, task.task_id)).status == "completed"
                assert [t.task_id for t in await listed(client)] == [task.task_id]
            await held.aclose()


async def test_a_client_of_an_older_protocol_is_offered_no_tasks_and_its_task_is_ignored(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Tasks are protocol 2025-11-25's: at 2025-06-18 none are offered, and a ``task`` a
    client sends anyway is ignored, the call answered as a plain one."""
    with http_server(tmp_path, env, options=["--no-token"], within=60) as (url, _):
        async with httpx2.AsyncClient(timeout=30) as http:
            client = {"name": "test", "version": "0"}
            params = {"protocolVersion": OLDER, "capabilities": {}, "clientInfo": client}
            older = {**INITIALIZE, "params": params}
            hello = await http.post(url, headers=ACCEPT, json=older)
            answer = answered(hello.text)
            assert answer["protocolVersion"] == OLDER and "tasks" not in answer["capabilities"]
            headers = {
                **ACCEPT,
                "mcp-session-id": hello.headers["mcp-session-id"],
                "mcp-protocol-version": OLDER,
            }
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await http.post(url, headers=headers, json=initialized)
            tools_list = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
            tools = answered((await http.post(url, headers=headers, json=tools_list)).text)
            assert all("execution" not in tool for tool in tools["tools"])
            arguments = {"message": "hi"}
            asked = {"name": "start_session", "arguments": arguments, "task": {"ttl": 1000}}
            call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": asked}
            plain = answered((await http.post(url, headers=headers, json=call)).text)
            assert plain["structuredContent"]["answer"] == "count: 3\nshout: EXAMPLE"
            # nor does it answer tasks/*: they are methods this protocol does not have
            for number, method in enumerate(("get", "result", "cancel", "list"), start=4):
                request: dict[str, Any] = {"jsonrpc": "2.0", "id": number}
                request |= {"method": f"tasks/{method}", "params": {"taskId": "whatever"}}
                refused = await http.post(url, headers=headers, json=request)
                error = failed(refused.text)
                assert error["code"] == types.METHOD_NOT_FOUND, (method, error)


OLDER = "2025-06-18"


def answered(stream: str) -> dict[str, Any]:
    """The result of the JSON-RPC answer a response stream ends with."""
    (last,) = [line for line in stream.splitlines() if line.startswith("data: {")][-1:]
    result: dict[str, Any] = json.loads(last.removeprefix("data: "))["result"]
    return result


def failed(stream: str) -> dict[str, Any]:
    """The error of the JSON-RPC answer a response stream (or JSON body) ends with."""
    lines = [line.removeprefix("data: ") for line in stream.splitlines() if "{" in line]
    error: dict[str, Any] = json.loads(lines[-1])["error"]
    return error


async def test_agentos_as_a_client_runs_a_post_on_agentos_mcp_as_a_task(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with http_server(tmp_path, env, within=60) as (url, token):
        bearer = {"Authorization": f"Bearer {token}"}
        inner = McpServer.http("inner", url, headers=bearer, prefix="inner_")
        async with Runtime(toolsets=[inner]) as runtime:
            call_id = runtime.submit("inner_start_session", {"message": "hello"})
            done = await runtime.wait(call_id, 30)
    assert done.status is CallStatus.COMPLETED, done
    assert "count: 3" in str(done.result)
    followed = [e.payload for e in done.progress if e.kind is ProgressKind.PARTIAL]
    assert followed and all(isinstance(p, dict) and p.get("task_id") for p in followed)
    first = followed[0]
    assert isinstance(first, dict) and first["status"] == "working"
    assert str(first["text"]).startswith("session ")  # the task's status message
