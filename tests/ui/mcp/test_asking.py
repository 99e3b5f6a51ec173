"""What a call of a session ``agentos mcp`` serves asks a person reaches the MCP client
(issue 49): a client that declared elicitation is asked on its ``post`` (or, for a post run as
a task, on its ``tasks/result`` while the task is ``input_required``), and its answer is the
call's; one that did not sees the question on the call and answers it with the ``answer``
tool. A bad answer, an error or no answer in time declines, and a cancelled call withdraws
its question. Against a real ``agentos mcp`` over HTTP, through the ``mcp`` SDK's client.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream
from mcp import ClientSession
from mcp.client.session import ClientRequestContext
from mcp.client.session import ElicitationFnT
from mcp.shared.dispatcher import ProgressFnT

from tests.support import cli
from tests.support.gate_tools import gate
from tests.ui.cli.asking_tools import FORM
from tests.ui.mcp.running import connected
from tests.ui.mcp.running import http_server
from tests.ui.mcp.running import structured
from tests.ui.mcp.test_protocol import removed_in_2026
from tests.ui.mcp.test_tasks import as_task
from tests.ui.mcp.test_tasks import get
from tests.ui.mcp.test_tasks import result
from tests.ui.mcp.test_tasks import session_of
from tests.ui.mcp.test_tasks import until

pytestmark = pytest.mark.anyio

MODULE = "tests.ui.mcp.asking_tools"
RELATED_TASK = "io.modelcontextprotocol/related-task"


def answering(
    answers: Iterator[types.ElicitResult | types.ErrorData], asked: list[types.ElicitRequestParams]
) -> ElicitationFnT:
    """A client's elicitation handler that gives ``answers`` in turn, keeping what it is asked."""

    async def elicit(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        asked.append(params)
        return next(answers)

    return elicit


def hanging(asked: anyio.Event, withdrawn: anyio.Event) -> ElicitationFnT:
    """A client's elicitation handler whose person never answers: ``asked`` is set when it is
    asked, ``withdrawn`` when the server cancels the request."""

    async def elicit(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        asked.set()
        try:
            await anyio.sleep_forever()
        finally:
            withdrawn.set()
        raise AssertionError("never answered")  # pragma: no cover

    return elicit


@asynccontextmanager
async def started_aside(
    client: ClientSession, answers: list[dict[str, Any]], progress: ProgressFnT | None = None
) -> AsyncIterator[None]:
    """``start_session`` (its call asks) running while the block runs; what it answers goes
    into ``answers`` (the block's end waits for it)."""

    async def start() -> None:
        said = await client.call_tool(
            "start_session", {"message": "where?"}, progress_callback=progress
        )
        answers.append(structured(said))

    async with anyio.create_task_group() as group:
        group.start_soon(start)
        yield


def text_of(answer: types.CallToolResult) -> str:
    return " ".join(block.text for block in answer.content if isinstance(block, types.TextContent))


async def test_a_client_that_declared_elicitation_is_asked_and_its_answer_is_the_calls(
    tmp_path: Path, env: dict[str, str]
) -> None:
    asked: list[types.ElicitRequestParams] = []
    given: list[types.ElicitResult | types.ErrorData] = [
        types.ElicitResult(action="accept", content={"city": "Lyon"}),
        types.ElicitResult(action="decline"),
        types.ElicitResult(action="accept", content={"city": "Lyon", "days": "three"}),
        types.ErrorData(code=types.INVALID_REQUEST, message="no person at this client"),
    ]
    answers = iter(given)
    with http_server(tmp_path, env, module=MODULE, within=60) as (url, token):
        async with connected(url, token, elicitation_callback=answering(answers, asked)) as client:
            started = structured(await client.call_tool("start_session", {"message": "where?"}))
            assert started["answer"] == 'where: accept: {"city": "Lyon"}'
            session = {"session_id": started["session_id"]}

            async def post() -> str:
                said = await client.call_tool("post", {**session, "message": "and now?"})
                return str(structured(said)["answer"])

            assert await post() == "where: decline: null (declined in the MCP client)"
            assert await post() == (
                "where: decline: null (the MCP client's answer does not fit the form: "
                "field 'days': an integer is expected, not text)"
            )
            assert await post() == (
                "where: decline: null (the MCP client answered with an error: "
                "no person at this client)"
            )
    assert [(p.message, p.mode, getattr(p, "requested_schema", None)) for p in asked] == [
        ("Which city?", "form", FORM)
    ] * 4


async def test_a_client_that_does_not_answer_in_time_is_declined_and_its_request_cancelled(
    tmp_path: Path, env: dict[str, str]
) -> None:
    asked, withdrawn = anyio.Event(), anyio.Event()
    with http_server(tmp_path, env, module=MODULE, options=["--ask-timeout", "0.5"], within=60) as (
        url,
        token,
    ):
        async with connected(url, token, elicitation_callback=hanging(asked, withdrawn)) as client:
            started = structured(await client.call_tool("start_session", {"message": "where?"}))
            assert started["answer"] == (
                "where: decline: null (the MCP client did not answer within 0.5 s)"
            )
            await withdrawn.wait()  # the server cancelled the request it gave up on
    assert asked.is_set()


async def test_cancelling_the_call_withdraws_its_question_from_the_client(
    tmp_path: Path, env: dict[str, str]
) -> None:
    asked, withdrawn = anyio.Event(), anyio.Event()
    answers: list[dict[str, Any]] = []
    with http_server(tmp_path, env, module=MODULE, within=60) as (url, token):
        elicit = hanging(asked, withdrawn)
        async with (
            connected(url, token, elicitation_callback=elicit) as client,
            started_aside(client, answers),
        ):
            await asked.wait()
            listed = await client.call_tool("list_running_tool_calls", {})
            (call,) = structured(listed)["tool_calls"]
            ids = {"session_id": call["session_id"], "tool_call_id": call["tool_call_id"]}
            cancelled = structured(await client.call_tool("cancel_tool_call", ids))
            assert cancelled["cancelled"] is True
            await withdrawn.wait()  # the elicitation request was cancelled
    (answer,) = answers
    assert answer["answer"] == "where: error: cancelled: cancelled by the MCP client"


async def test_a_client_without_elicitation_sees_the_question_and_answers_with_the_tool(
    tmp_path: Path, env: dict[str, str]
) -> None:
    lines: list[str] = []
    needs = anyio.Event()
    answers: list[dict[str, Any]] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        lines.append(message or "")
        if message is not None and "needs an answer" in message:
            needs.set()

    with http_server(tmp_path, env, module=MODULE, within=60) as (url, token):
        async with connected(url, token) as client:
            async with started_aside(client, answers, progress):
                await needs.wait()
                listed = await client.call_tool("list_running_tool_calls", {})
                (call,) = structured(listed)["tool_calls"]
                session_id, call_id = call["session_id"], call["tool_call_id"]
                told = f"where ({call['internal_id']}) asks: Which city?"
                assert f"{told} (it needs an answer: use the answer tool)" in lines
                ids = {"session_id": session_id, "tool_call_id": call_id}
                status = structured(await client.call_tool("get_tool_call_status", ids))
                assert status["waiting_for_person"]["message"] == "Which city?"
                assert status["waiting_for_person"]["form"] == FORM
                (read,) = (await client.read_resource(f"agentos://sessions/{session_id}")).contents
                assert isinstance(read, types.TextResourceContents)
                (running,) = json.loads(read.text)["running_calls"]
                assert running["waiting_for_person"]["message"] == "Which city?"

                async def answer(**given: Any) -> types.CallToolResult:
                    arguments = {"session_id": session_id, "call_id": call_id, **given}
                    return await client.call_tool("answer", arguments)

                misfit = await answer(action="accept", content={"days": 3})
                assert misfit.is_error
                assert text_of(misfit).endswith(
                    ": the answer does not fit the question: field 'city' is required"
                )
                unknown = await answer(action="maybe")
                assert unknown.is_error and "action" in text_of(unknown)
                declined_with_content = await answer(action="decline", content={"city": "Oslo"})
                assert declined_with_content.is_error
                assert "a decline answer carries no content" in text_of(declined_with_content)
                nobodys = await client.call_tool(
                    "answer", {"session_id": "nobodys", "call_id": call_id, "action": "cancel"}
                )
                assert nobodys.is_error and "no session with id 'nobodys'" in text_of(nobodys)
                no_call = await client.call_tool(
                    "answer", {"session_id": session_id, "call_id": "no-call", "action": "cancel"}
                )
                assert no_call.is_error and "no call 'no-call'" in text_of(no_call)
                given = structured(await answer(action="accept", content={"city": "Oslo"}))
                assert given == {"session_id": session_id, "call_id": call_id, "answered": "accept"}
            (done,) = answers
            assert done["answer"] == 'where: accept: {"city": "Oslo"}'
            again = await answer(action="cancel")
            assert again.is_error and "asks nothing now" in text_of(again)


async def test_a_task_whose_call_asks_is_input_required_and_its_client_asked_on_tasks_result(
    tmp_path: Path, env: dict[str, str]
) -> None:
    asked: list[types.ElicitRequestParams] = []
    answers = iter([types.ElicitResult(action="accept", content={"city": "Lyon"})])
    collected: list[types.CallToolResult] = []
    async with gate(env) as listener:
        with http_server(tmp_path, env, module=MODULE, within=60) as (url, token):
            elicit = answering(answers, asked)
            async with connected(url, token, elicitation_callback=elicit) as client:
                task = await as_task(client, "start_session", {"message": "where?"})
                waiting = await until(client, task.task_id, lambda t: t.status != "working")
                assert waiting.status == "input_required"
                assert waiting.status_message is not None
                assert waiting.status_message.startswith("where (")
                assert waiting.status_message.endswith(") asks: Which city?")
                assert asked == []  # the client is asked once it waits on tasks/result

                async def collect() -> None:
                    collected.append(await result(client, task.task_id))

                async with anyio.create_task_group() as group:
                    group.start_soon(collect)
                    held = await listener.accept()  # answered: the call waits at the gate
                    working = await get(client, task.task_id)
                    assert working.status == "working"
                    await held.send(b"go")
                (answer,) = collected
                assert structured(answer)["answer"] == 'where: accept: {"city": "Lyon"}'
                assert (await get(client, task.task_id)).status == "completed"
                await held.aclose()
    (params,) = asked
    assert params.message == "Which city?"
    assert params.meta is not None and params.meta.get(RELATED_TASK) == {"taskId": task.task_id}


def test_an_ask_timeout_that_is_no_positive_number_is_refused(env: dict[str, str]) -> None:
    refused = cli.agentos(env, "mcp", "--http", "0", "--ask-timeout", "0")
    refused.one_line_error(2, "--ask-timeout", "0")


async def test_a_task_of_a_client_without_elicitation_is_answered_with_the_tool(
    tmp_path: Path, env: dict[str, str]
) -> None:
    collected: list[types.CallToolResult] = []
    with http_server(tmp_path, env, module=MODULE, within=60) as (url, token):
        async with connected(url, token) as client:
            task = await as_task(client, "start_session", {"message": "where?"})
            waiting = await until(client, task.task_id, lambda t: t.status != "working")
            assert waiting.status == "input_required"

            async def collect() -> None:
                collected.append(await result(client, task.task_id))

            async with anyio.create_task_group() as group:
                group.start_soon(collect)  # it waits: nothing is sent to this client
                (call,) = structured(await client.call_tool("list_running_tool_calls", {}))[
                    "tool_calls"
                ]
                assert waiting.status_message == f"where ({call['internal_id']}) asks: Which city?"
                arguments = {
                    "session_id": call["session_id"],
                    "call_id": call["tool_call_id"],
                    "action": "decline",
                }
                structured(await client.call_tool("answer", arguments))
            (answer,) = collected
            assert (
                structured(answer)["answer"] == "where: decline: null (declined by the MCP client)"
            )


async def read_after_a_notice(
    client: ClientSession,
    notices: MemoryObjectReceiveStream[str],
    uri: str,
    wanted: Callable[[list[dict[str, Any]]], bool],
) -> list[dict[str, Any]]:
    """The resource's running calls, read after each notice of ``uri`` until ``wanted``."""
    while True:
        if await notices.receive() != uri:
            continue
        (read,) = (await client.read_resource(uri)).contents
        assert isinstance(read, types.TextResourceContents)
        running: list[dict[str, Any]] = json.loads(read.text)["running_calls"]
        if wanted(running):
            return running


async def test_a_subscriber_hears_when_a_call_of_its_session_asks_and_is_answered(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Between the call's start and its end the session itself does not change: only the
    question and its answer tell the subscriber something new is on its resource."""
    send, notices = anyio.create_memory_object_stream[str](100)

    async def on_message(message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            await send.send(message.params.uri)

    async with gate(env) as listener:
        with (
            send,
            notices,
            http_server(tmp_path, env, module="tests.ui.mcp.asking_later_tools", within=60) as (
                url,
                token,
            ),
        ):
            async with connected(url, token, message_handler=on_message) as client:
                task = await as_task(client, "start_session", {"message": "where?"})
                session_id = session_of(task)
                uri = f"agentos://sessions/{session_id}"
                first = await listener.accept()  # the call runs and has asked nothing yet
                with removed_in_2026():
                    await client.subscribe_resource(uri)
                await first.send(b"ask")
                (asking,) = await read_after_a_notice(
                    client, notices, uri, lambda calls: "waiting_for_person" in calls[0]
                )
                assert asking["waiting_for_person"]["message"] == "Which city?"
                arguments = {
                    "session_id": session_id,
                    "call_id": asking["tool_call_id"],
                    "action": "decline",
                }
                structured(await client.call_tool("answer", arguments))
                (answered,) = await read_after_a_notice(
                    client, notices, uri, lambda calls: "waiting_for_person" not in calls[0]
                )
                assert answered["status"] == "running"
                second = await listener.accept()  # it goes on to the gate again
                await second.send(b"end")
                await until(client, task.task_id, lambda t: t.status == "completed")
                await first.aclose()
                await second.aclose()
