"""``agentos mcp`` runs a ``post`` (or ``start_session``) as a task of the newer generation,
the ``io.modelcontextprotocol/tasks`` extension (SEP-2663, on the 2026-07-28 protocol), for a
client that declares it (issue 49): ``tools/call`` answers with the task, ``tasks/get`` reads
its status, its result, and what its calls ask (``inputRequests``), ``tasks/update`` answers
that, ``tasks/cancel`` ends it and cancels its turn's calls. A client of the handshake
protocols still gets the 2025-11-25 tasks. Against a real ``agentos mcp`` over HTTP,
through agentos's own MCP client (an agent whose MCP server is ``agentos mcp``) and through
the ``mcp`` SDK's client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from typing import Literal

import anyio
import httpx2
import mcp_types as types
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream
from mcp import Client
from mcp import ClientSession
from mcp import MCPError
from mcp.client.extension import ResultClaim
from mcp.client.streamable_http import streamable_http_client

from agentos import Answer
from agentos import AnswerAction
from agentos import Asked
from agentos import CallEvent
from agentos import CallStatus
from agentos import JsonObject
from agentos import McpServer
from agentos import Runtime
from tests.toolsets.test_mcp_tasks_ext import statuses
from tests.ui.cli.asking_tools import FORM
from tests.ui.mcp.running import connected
from tests.ui.mcp.running import http_server
from tests.ui.mcp.running import structured
from tests.ui.mcp.test_tasks import as_task
from tests.ui.mcp.test_tasks import listed

pytestmark = pytest.mark.anyio

TASKS = "io.modelcontextprotocol/tasks"
MODERN = "2026-07-28"
POLL = 0.05
"""Seconds between two looks at a task whose status the test waits for."""
DEFAULT_TTL_MS = 3600 * 1000
"""The TTL of a task whose client asked none (the extension's never ask)."""
ASKING = "tests.ui.mcp.asking_tools"
SYNC = '[policy]\ndefault = "run_sync"\n'
"""The inner agent's calls hold its turn, so its task works until they end."""


def bearer(token: str | None) -> dict[str, str]:
    return {} if token is None else {"Authorization": f"Bearer {token}"}


@asynccontextmanager
async def inner_served(
    url: str, token: str | None, answer: Answer | None = None
) -> AsyncIterator[tuple[Runtime, MemoryObjectReceiveStream[CallEvent], list[Asked]]]:
    """A runtime whose MCP server ``inner`` is ``agentos mcp`` at ``url``; each question
    its person is asked is kept and gets ``answer``."""
    asked: list[Asked] = []

    async def ask(question: Asked) -> Answer | None:
        asked.append(question)
        return answer

    inner = McpServer.http("inner", url, headers=bearer(token), prefix="inner_")
    async with Runtime(toolsets=[inner]) as runtime, runtime.subscribe("default") as events:
        runtime.ask_person = ask
        yield runtime, events, asked


async def until_said(
    runtime: Runtime, events: MemoryObjectReceiveStream[CallEvent], call_id: str, words: str
) -> JsonObject:
    """The first status of the call's task whose status message has ``words``."""
    while True:
        for entry in statuses(runtime.status(call_id)):
            if words in str(entry.get("text")):
                return entry
        await events.receive()


async def test_agentos_runs_a_post_on_agentos_mcp_as_a_task_of_the_extension(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with http_server(tmp_path, env, within=60) as (url, token):
        async with inner_served(url, token) as (runtime, _, _):
            call_id = runtime.submit("inner_start_session", {"message": "hello"})
            done = await runtime.wait(call_id, 30)
        async with connected(url, token) as older:  # the same owner, at 2025-11-25
            (task,) = await listed(older)
    assert done.status is CallStatus.COMPLETED, done
    assert "count: 3" in str(done.result)
    followed = statuses(done)
    task_id = followed[0]["task_id"]
    assert all(entry["task_id"] == task_id for entry in followed)
    assert followed[0]["status"] == "working"
    assert str(followed[0]["text"]).startswith("session ")  # the task's status message
    assert followed[-1]["status"] == "completed"
    # the extension's: no TTL asked (the older tasks' client asks a day), the server's default
    assert (task.task_id, task.status, task.ttl) == (task_id, "completed", DEFAULT_TTL_MS)


async def test_cancelling_the_call_cancels_the_task_and_the_calls_of_its_turn(
    tmp_path: Path, env: dict[str, str]
) -> None:
    mark = tmp_path / "cancelled.txt"
    env["AGENTOS_TEST_MARK"] = str(mark)
    with http_server(tmp_path, env, module="tests.support.slow_tools", agent=SYNC, within=60) as (
        url,
        token,
    ):
        async with inner_served(url, token) as (runtime, events, _):
            call_id = runtime.submit("inner_start_session", {"message": "go"})
            running = await until_said(runtime, events, call_id, "progressed")
            async with connected(url, token) as older:
                (inner_call,) = structured(await older.call_tool("list_running_tool_calls", {}))[
                    "tool_calls"
                ]
                assert runtime.cancel(call_id, reason="no longer needed")
                cancelled = await runtime.wait(call_id, 30)
                (task,) = await listed(older)
                ids = {
                    "session_id": inner_call["session_id"],
                    "tool_call_id": inner_call["tool_call_id"],
                    "wait_for_completion": True,
                    "timeout_seconds": 30,
                }
                status = structured(await older.call_tool("get_tool_call_status", ids))
    assert cancelled.status is CallStatus.CANCELLED
    assert (task.task_id, task.status) == (running["task_id"], "cancelled")
    assert status["status"] == "cancelled"
    assert mark.read_text() == "cancelled"  # the tool itself was cancelled


async def test_a_question_of_the_inner_session_reaches_the_outer_person(
    tmp_path: Path, env: dict[str, str]
) -> None:
    accepted = Answer(AnswerAction.ACCEPT, {"city": "Oslo"})
    with http_server(tmp_path, env, module=ASKING, within=60) as (url, token):
        async with inner_served(url, token, accepted) as (runtime, _, asked):
            done = await runtime.wait(runtime.submit("inner_start_session", {"message": "?"}), 30)
    assert done.status is CallStatus.COMPLETED, done
    assert isinstance(done.result, dict)
    assert done.result["answer"] == 'where: accept: {"city": "Oslo"}'
    (question,) = asked
    assert question.question.message == "Which city?"
    assert question.question.form == FORM
    assert question.question.source == "MCP server inner"
    followed = [entry["status"] for entry in statuses(done)]
    assert "input_required" in followed and followed[-1] == "completed"


# ---------------------------------------------------------------- the SDK's client


class TaskParams(types.RequestParams):
    task_id: str
    input_responses: dict[str, Any] | None = None


class TaskRequest(types.Request[TaskParams, str]):
    name_param = "taskId"


class CreatedTask(types.Result):
    task_id: str
    status: str
    status_message: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    result_type: Literal["task"]


class DetailedTask(types.Result):
    task_id: str
    status: str
    status_message: str | None = None
    result: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


async def not_resolved(created: CreatedTask, context: Any) -> Any:
    raise AssertionError("the test follows its tasks itself")  # pragma: no cover


@asynccontextmanager
async def modern(
    url: str, token: str | None, *, declared: bool = True
) -> AsyncIterator[ClientSession]:
    """The SDK's client at 2026-07-28 (``server/discover``), declaring elicitation and, if
    ``declared``, the extension."""

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        raise AssertionError("a 2026-07-28 server sends no requests")  # pragma: no cover

    claim = ResultClaim(
        result_type="task",
        model=CreatedTask,
        resolve=not_resolved,
        protocol_versions=frozenset({MODERN}),
    )
    options: dict[str, Any] = (
        {"extensions": {TASKS: {}}, "result_claims": {TASKS: [claim]}} if declared else {}
    )
    async with (
        httpx2.AsyncClient(headers=bearer(token), timeout=httpx2.Timeout(30.0, read=None)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, elicitation_callback=elicit, **options) as client,
    ):
        found = types.DiscoverResult.model_validate(await client.send_discover(MODERN))
        assert found.capabilities.extensions == {TASKS: {}}
        client.adopt(found)
        yield client


async def ask(
    client: ClientSession, method: str, task_id: str, answers: dict[str, Any] | None = None
) -> types.Result:
    """``method`` about the task ``task_id``: its answer (``tasks/get``'s, a ``DetailedTask``)."""
    params = TaskParams(task_id=task_id, input_responses=answers)
    request = TaskRequest(method=method, params=params)
    return await client.send_request(
        request, DetailedTask if method == "tasks/get" else types.EmptyResult
    )


async def get(client: ClientSession, task_id: str) -> DetailedTask:
    task = await ask(client, "tasks/get", task_id)
    assert isinstance(task, DetailedTask)
    return task


async def until(client: ClientSession, task_id: str, status: str) -> DetailedTask:
    while (task := await get(client, task_id)).status != status:  # noqa: ASYNC110
        await anyio.sleep(POLL)
    return task


async def test_the_sdks_client_follows_a_task_answers_its_question_and_reads_its_result(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with http_server(tmp_path, env, module=ASKING, within=60) as (url, token):
        async with modern(url, token) as client:
            created = await client.call_tool(
                "start_session", {"message": "where?"}, allow_claimed=True
            )
            assert isinstance(created, CreatedTask)
            assert created.status == "working" and created.ttl_ms == DEFAULT_TTL_MS
            assert created.poll_interval_ms == 1000
            task_id = created.task_id
            waiting = await until(client, task_id, "input_required")
            assert str(waiting.status_message).endswith(") asks: Which city?")
            assert waiting.input_requests is not None
            ((key, request),) = waiting.input_requests.items()
            assert request["method"] == "elicitation/create"
            assert request["params"]["message"] == "Which city?"
            assert request["params"]["requestedSchema"] == FORM
            with pytest.raises(MCPError, match=f"input response '{key}' is no elicitation") as bad:
                await ask(client, "tasks/update", task_id, {key: {"action": "maybe"}})
            assert bad.value.error.code == types.INVALID_PARAMS
            answer = {key: {"action": "accept", "content": {"city": "Lyon"}}}
            await ask(client, "tasks/update", task_id, answer)
            done = await until(client, task_id, "completed")
            assert done.result is not None and not done.result.get("isError")
            assert done.result["structuredContent"]["answer"] == 'where: accept: {"city": "Lyon"}'
            # an answer to a question no longer asked, a cancel of an ended task: nothing
            await ask(client, "tasks/update", task_id, answer)
            await ask(client, "tasks/cancel", task_id)
            assert (await get(client, task_id)).status == "completed"
            with pytest.raises(MCPError, match="unknown task 'nope'"):
                await ask(client, "tasks/get", "nope")
        async with connected(url, token) as older:  # the handshake protocol: the older tasks
            info = older.initialize_result
            assert info is not None and info.capabilities.tasks is not None
            task = await as_task(older, "start_session", {"message": "hi"})
            assert task.ttl == DEFAULT_TTL_MS


async def test_without_a_token_each_client_is_its_own_owner_at_the_handshake_protocol(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Without a token a client is its connection, which a 2026-07-28 request has not: that
    protocol is refused, naming the handshake protocols, so a client that probes for it (the
    SDK's, by default) speaks 2025-11-25, an owner of its own that sees no other's sessions."""
    with http_server(tmp_path, env, options=["--no-token"], within=60) as (url, _):
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as probing,
        ):
            with pytest.raises(MCPError) as discovered:
                await probing.send_discover(MODERN)
        refused = discovered.value.error.model_dump()
        assert refused["code"] == types.UNSUPPORTED_PROTOCOL_VERSION, refused
        assert "tells clients apart by their connection" in refused["message"]
        assert refused["data"] == {
            "supported": ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"],
            "requested": MODERN,
        }
        async with Client(url) as one, Client(url) as other:
            assert one.protocol_version == other.protocol_version == "2025-11-25"
            started = structured(await one.call_tool("start_session", {"message": "hi"}))
            (mine,) = (await one.list_resources()).resources
            assert str(mine.uri) == f"agentos://sessions/{started['session_id']}"
            assert (await other.list_resources()).resources == []
            task = await as_task(one.session, "start_session", {"message": "hi"})
            assert await listed(other.session) == []
            assert [t.task_id for t in await listed(one.session)] == [task.task_id]


async def test_a_client_without_the_extension_gets_no_task(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with http_server(tmp_path, env, within=60) as (url, token):
        async with modern(url, token, declared=False) as plain:
            answer = await plain.call_tool("start_session", {"message": "hi"})
            assert isinstance(answer, types.CallToolResult)
            assert structured(answer)["answer"] == "count: 3\nshout: EXAMPLE"
            with pytest.raises(MCPError) as undeclared:
                await ask(plain, "tasks/get", "whatever")
            assert undeclared.value.error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY
