"""agentos as the client of a server whose tools run as tasks of the newer generation, the
``io.modelcontextprotocol/tasks`` extension (SEP-2663, on the 2026-07-28 protocol): fastmcp
with fastmcp-tasks, over HTTP. A task is an agentos call like any other: its status is the
call's progress, its result the call's, a cancel of the call cancels it, and what it asks
reaches the person."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream

from agentos import AgentConfig
from agentos import Answer
from agentos import AnswerAction
from agentos import Asked
from agentos import CallEvent
from agentos import CallSnapshot
from agentos import CallStatus
from agentos import JsonObject
from agentos import McpServer
from agentos import McpServerConfig
from agentos import ProgressKind
from agentos import Runtime
from agentos import ScriptedProvider
from agentos.testing import last_user_text
from agentos.testing import text
from tests.support.asgi import free_port
from tests.support.asgi import served
from tests.support.fastmcp import fastmcp_tasks_python
from tests.support.fastmcp import tasks_server
from tests.support.mcp_servers import SERVERS
from tests.support.mcp_servers.bad_tasks_server import REQUESTS
from tests.support.mcp_servers.bad_tasks_server import app as bad_app
from tests.support.task_host import killed_when_ready
from tests.toolsets.conftest import WAIT
from tests.toolsets.conftest import answering
from tests.toolsets.conftest import hosting
from tests.toolsets.conftest import outcome
from tests.toolsets.conftest import resumed_after_a_kill
from tests.toolsets.conftest import serving

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with tasks_server() as served:
        yield served


@asynccontextmanager
async def tasks_served(
    url: str, answer: Answer | None = None
) -> AsyncIterator[tuple[Runtime, MemoryObjectReceiveStream[CallEvent], list[Asked]]]:
    """A runtime with the tasks server; each question is kept and gets ``answer`` (None:
    held for ``Runtime.answer``)."""
    asked: list[Asked] = []
    server = McpServer.http("tasks", url, start_timeout=WAIT)
    async with serving(server, ask=answering(answer, asked)) as (runtime, events):
        yield runtime, events, asked


async def shown(
    runtime: Runtime,
    events: MemoryObjectReceiveStream[CallEvent],
    call_id: str,
    status: str = "working",
    saying: str | None = None,
) -> CallSnapshot:
    """The call once its progress shows its task in ``status`` (``saying``, if given)."""
    while True:
        snapshot = runtime.status(call_id)
        for entry in statuses(snapshot):
            if entry["status"] == status and (saying is None or entry.get("text") == saying):
                return snapshot
        assert not snapshot.status.is_final, snapshot
        await events.receive()


def statuses(snapshot: CallSnapshot) -> list[JsonObject]:
    return [
        e.payload
        for e in snapshot.progress
        if e.kind is ProgressKind.PARTIAL and isinstance(e.payload, dict)
    ]


async def test_a_task_runs_as_a_call_its_status_the_progress_its_result_the_result(
    url: str,
) -> None:
    async with tasks_served(url) as (runtime, events, _):
        call = runtime.submit("crunch", {"topic": "graphs"})
        running = await shown(runtime, events, call, saying="crunching graphs")
        assert running.status is CallStatus.RUNNING
        released = await outcome(runtime, runtime.submit("release", {"topic": "graphs"}))
        done = await outcome(runtime, call)
    assert released.result == {"result": "released graphs, started 1 time(s)"}
    assert done.status is CallStatus.COMPLETED, done
    assert done.result == {"result": "crunched graphs"}
    followed = statuses(done)
    task_id = followed[0]["task_id"]
    assert isinstance(task_id, str) and task_id
    assert {"task_id": task_id, "status": "working", "text": "crunching graphs"} in followed
    assert followed[-1] == {"task_id": task_id, "status": "completed"}


async def test_cancelling_the_call_cancels_its_task_on_the_server(url: str) -> None:
    async with tasks_served(url) as (runtime, events, _):
        call = runtime.submit("hold", {})
        await shown(runtime, events, call, saying="holding")  # running, not only queued
        assert runtime.cancel(call, reason="no longer needed")
        cancelled = await outcome(runtime, call)
        seen = await outcome(runtime, runtime.submit("was_cancelled", {}))
    assert cancelled.status is CallStatus.CANCELLED
    assert seen.result == {"result": "the task was cancelled"}


async def test_what_a_task_asks_reaches_the_person_and_the_answer_the_server(url: str) -> None:
    accepted = Answer(AnswerAction.ACCEPT, {"name": "Ada"})
    async with tasks_served(url, accepted) as (runtime, _, asked):
        done = await outcome(runtime, runtime.submit("ask_name", {}))
    assert done.status is CallStatus.COMPLETED, done
    assert done.result == "accept Ada"
    (question,) = asked
    assert question.question.message == "What is your name?"
    assert question.question.source == "MCP server tasks"
    form = question.question.form
    assert form is not None and isinstance(form["properties"], dict)
    assert "name" in form["properties"]
    followed = [entry["status"] for entry in statuses(done)]
    assert "input_required" in followed and followed[-1] == "completed"


async def test_a_plain_calls_input_round_reaches_the_person_and_the_call_is_sent_again(
    url: str,
) -> None:
    accepted = Answer(AnswerAction.ACCEPT, {"name": "Lin"})
    async with tasks_served(url, accepted) as (runtime, _, asked):
        done = await outcome(runtime, runtime.submit("ask_name_now", {}))
    assert done.result == "accept Lin" and statuses(done) == []
    assert [question.question.message for question in asked] == ["What is your name?"]


async def test_a_declined_question_reaches_the_server_too(url: str) -> None:
    async with tasks_served(url, Answer(AnswerAction.DECLINE)) as (runtime, _, asked):
        done = await outcome(runtime, runtime.submit("ask_name", {}))
    assert done.result == "decline" and len(asked) == 1


async def test_a_question_waits_for_the_person_while_the_task_waits_for_the_answer(
    url: str,
) -> None:
    async with tasks_served(url) as (runtime, events, _):
        call = runtime.submit("ask_name", {})
        waiting = await shown(runtime, events, call, "input_required")
        assert waiting.status is CallStatus.RUNNING
        while runtime.status(call).question is None:
            await events.receive()
        assert runtime.answer(call, Answer(AnswerAction.ACCEPT, {"name": "Grace"}))
        done = await outcome(runtime, call)
    assert done.result == "accept Grace"


async def test_a_tasks_sampling_is_answered_by_the_sessions_model(url: str) -> None:
    provider = ScriptedProvider((lambda r: True, lambda r: text(f"short: {last_user_text(r)}")))
    agent = AgentConfig(
        name="summarizer", model="claude-test", mcp_servers={"tasks": McpServerConfig(url=url)}
    )
    async with hosting(agent, provider) as host:
        session = await host.create_session(agent)
        call = host.runtime.submit("summarize", {"text": "a saga"}, session_id=session.session_id)
        done = await outcome(host.runtime, call)
        requests = session.statistics().requests
    assert done.status is CallStatus.COMPLETED, done
    assert done.result == "claude-test said: short: Summarize: a saga"
    assert requests == 1


async def test_a_task_whose_tool_fails_fails_the_call_with_the_servers_words(url: str) -> None:
    async with tasks_served(url) as (runtime, _, _):
        done = await outcome(runtime, runtime.submit("fail", {}))
    assert done.status is CallStatus.FAILED and done.error is not None
    assert done.error.message == "no luck"
    assert statuses(done)[-1]["status"] == "completed"  # the task ended; its tool failed


async def test_a_tool_the_server_does_not_run_as_a_task_answers_at_once(url: str) -> None:
    async with tasks_served(url) as (runtime, _, _):
        done = await outcome(runtime, runtime.submit("double", {"number": 21}))
    assert done.status is CallStatus.COMPLETED and done.result == {"result": 42}
    assert statuses(done) == []


@asynccontextmanager
async def badly(path: str = "/mcp") -> AsyncIterator[Runtime]:
    """A runtime with the hand-written server that answers about its tasks badly."""
    REQUESTS.clear()
    port = free_port()
    server = McpServer.http("bad", f"http://127.0.0.1:{port}{path}", start_timeout=WAIT)
    with anyio.fail_after(WAIT * 2):
        async with served(bad_app, port), Runtime(toolsets=[server]) as runtime:
            yield runtime


def methods(path: str = "/mcp") -> list[str]:
    return [method for where, method, _ in REQUESTS if where == path]


async def test_a_task_the_server_does_not_know_ends_the_call_saying_so() -> None:
    async with badly() as runtime:
        done = await outcome(runtime, runtime.submit("vanish", {}))
    assert done.status is CallStatus.FAILED and done.error is not None
    assert done.error.message == (
        "MCP server 'bad': tasks/get of task t-vanish: Task t-vanish not found"
    )


async def test_a_malformed_status_ends_the_call_and_cancels_the_task() -> None:
    async with badly() as runtime:
        done = await outcome(runtime, runtime.submit("garble", {}))
    assert done.status is CallStatus.FAILED and done.error is not None
    assert done.error.message.startswith(
        "MCP server 'bad': the server's status of task t-garble is malformed: status: "
    )
    assert methods()[-1] == "tasks/cancel"
    assert REQUESTS[-1][2]["taskId"] == "t-garble"


async def test_a_failed_task_fails_the_call_with_the_servers_error() -> None:
    async with badly() as runtime:
        done = await outcome(runtime, runtime.submit("flop", {}))
    assert done.status is CallStatus.FAILED and done.error is not None
    assert done.error.message == "MCP server 'bad': task t-flop failed: the disk is full"
    assert "tasks/cancel" not in methods()  # it had ended


async def test_an_input_key_asking_something_else_ends_the_call_and_cancels_the_task() -> None:
    asked: list[str] = []

    async def person(question: Asked) -> Answer:
        asked.append(question.question.message)
        return Answer(AnswerAction.ACCEPT, {})

    async with badly() as runtime:
        runtime.ask_person = person
        done = await outcome(runtime, runtime.submit("reask", {}))
    assert done.status is CallStatus.FAILED and done.error is not None
    assert done.error.message == (
        "MCP server 'bad': task t-reask reused its input key 'q' for another request"
    )
    assert asked == ["Which city?"]  # asked once, though the server repeats it
    assert methods().count("tasks/update") == 1 and methods()[-1] == "tasks/cancel"


async def test_the_task_requests_carry_the_extension_and_the_task_id_header() -> None:
    async with badly() as runtime:
        await outcome(runtime, runtime.submit("flop", {}))
    (call,) = [params for _, method, params in REQUESTS if method == "tools/call"]
    (get,) = [params for _, method, params in REQUESTS if method == "tasks/get"]
    for params in (call, get):
        offered = params["_meta"]["io.modelcontextprotocol/clientCapabilities"]
        assert offered["extensions"] == {"io.modelcontextprotocol/tasks": {}}
    assert methods()[0] == "server/discover" and "initialize" not in methods()


async def test_a_server_that_declares_nothing_gets_the_handshake_and_plain_calls() -> None:
    async with badly("/plain") as runtime:
        done = await outcome(runtime, runtime.submit("vanish", {}))
    assert done.status is CallStatus.COMPLETED and done.result == "vanish ran plainly"
    assert methods("/plain")[:2] == ["server/discover", "initialize"]
    assert not [m for m in methods("/plain") if m.startswith("tasks/")]
    (call,) = [params for _, method, params in REQUESTS if method == "tools/call"]
    assert "io.modelcontextprotocol/clientCapabilities" not in call.get("_meta", {})


async def test_a_task_outlives_a_killed_host_and_its_result_reaches_the_session(
    url: str, tmp_path: Path
) -> None:
    path = tmp_path / "tasks.db"
    session_id = await killed_when_ready(path, url, "crunch")
    release: JsonObject = {"topic": "ecs"}
    done, released, history = await resumed_after_a_kill(path, url, session_id, "crunch", release)
    assert released.result == {"result": "released ecs, started 1 time(s)"}  # not again
    assert done.status is CallStatus.COMPLETED and done.result == {"result": "crunched ecs"}
    assert len({entry["task_id"] for entry in statuses(done)}) == 1
    assert "crunched ecs" in history


async def test_over_stdio_the_server_is_spoken_to_in_the_older_protocol() -> None:
    script = str(SERVERS / "fastmcp_tasks_server.py")
    server = McpServer.stdio("tasks", fastmcp_tasks_python(), [script], start_timeout=WAIT)
    with anyio.fail_after(WAIT * 2):
        async with Runtime(toolsets=[server]) as runtime:
            plain = await outcome(runtime, runtime.submit("double", {"number": 4}))
            task_only = await outcome(runtime, runtime.submit("crunch", {"topic": "stdio"}))
    assert plain.result == {"result": 8}
    assert task_only.status is CallStatus.FAILED and task_only.error is not None
    assert "requires the tasks extension" in task_only.error.message
