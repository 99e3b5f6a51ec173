"""A remote A2A agent as a tool whose calls are its tasks, against an agent written with
``a2a-sdk`` and served on loopback: its status messages are the call's progress, its
artifacts the result, its questions the person's (or the model's), a cancel of the call
cancels its task, and an agent that is gone, speaks garbage or never ends fails the call
saying which agent."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.middleware.base import RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import HTMLResponse

from agentos import A2aAgent
from agentos import AgentConfig
from agentos import Answer
from agentos import AnswerAction
from agentos import Asked
from agentos import CallEvent
from agentos import CallOptions
from agentos import CallSnapshot
from agentos import CallStatus
from agentos import ErrorKind
from agentos import Host
from agentos import JsonObject
from agentos import ProgressKind
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import SqliteStore
from agentos import ToolsetError
from agentos import agent_tools
from agentos.testing import last_user_text
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.turns import A2aAgentConfig
from agentos.turns import Caller
from agentos.turns import SystemToolbox
from tests.support.a2a_agents.babbler import TASK
from tests.support.a2a_agents.babbler import Babble
from tests.support.a2a_agents.babbler import app as babbler
from tests.support.a2a_agents.librarian import FORM
from tests.support.a2a_agents.librarian import Librarian
from tests.support.a2a_agents.librarian import Requests
from tests.support.a2a_agents.librarian import app
from tests.support.asgi import free_port
from tests.support.asgi import served
from tests.support.task_host import killed_when_ready
from tests.toolsets.conftest import WAIT
from tests.toolsets.conftest import answering
from tests.toolsets.conftest import outcome
from tests.toolsets.conftest import serving
from tests.ui.a2a.running import a2a_server

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def delegating(
    librarian: Librarian,
    *,
    answer: Answer | None = None,
    streaming: bool = True,
    rest: bool = False,
    requests: Requests | None = None,
    **settings: Any,
) -> AsyncIterator[tuple[Runtime, MemoryObjectReceiveStream[CallEvent], list[Asked]]]:
    """A runtime whose tool ``librarian`` is the librarian served on loopback; each
    question is kept and gets ``answer`` (None: held for ``Runtime.answer``)."""
    port = free_port()
    asked: list[Asked] = []
    remote = A2aAgent.http("librarian", f"http://127.0.0.1:{port}", start_timeout=WAIT, **settings)
    async with (
        served(app(port, librarian, requests, streaming=streaming, rest=rest), port),
        serving(remote, ask=answering(answer, asked)) as (runtime, events),
    ):
        yield runtime, events, asked


def statuses(snapshot: CallSnapshot) -> list[JsonObject]:
    return [
        e.payload
        for e in snapshot.progress
        if e.kind is ProgressKind.PARTIAL and isinstance(e.payload, dict)
    ]


async def test_a_task_streams_its_status_messages_as_progress_and_its_artifacts_as_result() -> None:
    librarian = Librarian()
    async with delegating(librarian) as (runtime, _, _):
        done = await outcome(runtime, runtime.submit("librarian", {"message": "research ecs"}))
    assert done.status is CallStatus.COMPLETED, done
    result = done.result
    assert isinstance(result, dict)
    assert result["text"] == "notes on ecs"
    assert result["data"] == [{"topic": "ecs", "pages": 3}]
    assert result["files"] == [
        {"media_type": "application/pdf", "name": "scan.pdf", "bytes": 8},
        {"media_type": "text/html", "url": "https://books.example/ecs"},
    ]
    task_id = result["task_id"]
    said = [(entry["status"], entry.get("text")) for entry in statuses(done)]
    assert said == [
        ("submitted", None),
        ("working", "research ecs"),
        ("working", "reading about ecs"),
        ("working", "writing about ecs"),
        ("completed", None),
    ]
    assert all(entry["task_id"] == task_id for entry in statuses(done))
    assert librarian.heard == ["research ecs"]
    described = runtime.tools["librarian"].description
    assert described.startswith("Librarian: Finds and summarises books.\nSkills:\n")
    assert "- research: Reads about a topic and writes notes. (e.g. research ecs)" in described


async def shown(
    runtime: Runtime, events: MemoryObjectReceiveStream[CallEvent], call_id: str, saying: str
) -> CallSnapshot:
    """The call once its progress shows the agent saying ``saying``."""
    while True:
        snapshot = runtime.status(call_id)
        if any(entry.get("text") == saying for entry in statuses(snapshot)):
            return snapshot
        assert not snapshot.status.is_final, snapshot
        await events.receive()


@pytest.mark.parametrize("streaming", [True, False], ids=["streamed", "polled"])
async def test_the_agents_question_reaches_the_person_and_the_answer_the_same_task(
    streaming: bool,
) -> None:
    librarian = Librarian()
    accepted = Answer(AnswerAction.ACCEPT, {"answer": "Ada"})
    settings: dict[str, Any] = {"streaming": streaming, "poll_interval": 0.05}
    async with delegating(librarian, answer=accepted, **settings) as (runtime, _, asked):
        done = await outcome(runtime, runtime.submit("librarian", {"message": "greet"}))
    assert done.status is CallStatus.COMPLETED, done
    assert isinstance(done.result, dict) and done.result["text"] == "hello Ada"
    (question,) = asked
    assert question.question.message == "What is your name?"
    assert question.question.source == "A2A agent librarian"
    assert question.question.form is not None
    assert librarian.heard == ["greet", "Ada"]
    followed = [entry["status"] for entry in statuses(done)]
    assert "input_required" in followed and followed[-1] == "completed"
    assert len({entry["task_id"] for entry in statuses(done)}) == 1  # one task throughout


async def test_a_question_with_a_schema_is_a_form_and_its_answer_goes_back_as_data() -> None:
    librarian = Librarian()
    accepted = Answer(AnswerAction.ACCEPT, {"name": "Grace", "year": 1952})
    async with delegating(librarian, answer=accepted) as (runtime, _, asked):
        done = await outcome(runtime, runtime.submit("librarian", {"message": "enrol"}))
    assert done.status is CallStatus.COMPLETED, done
    assert isinstance(done.result, dict) and done.result["text"] == "enrolled Grace"
    (question,) = asked
    assert question.question.message == "Who enrols?"
    form = question.question.form
    assert form is not None and form["required"] == ["name"]
    assert librarian.heard == ["enrol", {"name": "Grace", "year": 1952}]


async def test_a_declined_question_cancels_the_task_and_fails_the_call_saying_so() -> None:
    librarian = Librarian()
    declined = Answer(AnswerAction.DECLINE)
    async with delegating(librarian, answer=declined) as (runtime, _, _):
        done = await outcome(runtime, runtime.submit("librarian", {"message": "greet"}))
    assert done.status is CallStatus.FAILED and done.error is not None
    assert done.error.message == (
        "A2A agent 'librarian': the person did not answer its question (decline)"
    )
    (task_id,) = {entry["task_id"] for entry in statuses(done)}
    assert librarian.cancelled == [task_id]
    assert librarian.heard == ["greet"]


@pytest.mark.parametrize("streaming", [True, False], ids=["streamed", "polled"])
async def test_with_input_for_the_model_the_call_returns_the_question_and_a_follow_up_answers(
    streaming: bool,
) -> None:
    librarian = Librarian()
    settings: dict[str, Any] = {"streaming": streaming, "poll_interval": 0.05}
    async with delegating(librarian, input="model", **settings) as (runtime, _, asked):
        first = await outcome(runtime, runtime.submit("librarian", {"message": "greet"}))
        assert first.status is CallStatus.COMPLETED, first
        question = first.result
        assert isinstance(question, dict)
        assert question["input_required"] == "What is your name?"
        follow_up = {
            "message": "Alan",
            "task_id": question["task_id"],
            "context_id": question["context_id"],
        }
        done = await outcome(runtime, runtime.submit("librarian", follow_up))
    assert asked == []
    assert isinstance(done.result, dict) and done.result["text"] == "hello Alan"
    assert done.result["task_id"] == question["task_id"]
    assert librarian.heard == ["greet", "Alan"]


async def test_a_follow_up_naming_only_the_task_is_sent_in_the_tasks_context() -> None:
    """An agent may keep its tasks where a message without a context is given a new one:
    the follow-up carries the context the task is in, read with the task."""
    librarian = Librarian()
    requests = Requests()
    async with delegating(librarian, input="model", requests=requests) as (runtime, _, _):
        first = await outcome(runtime, runtime.submit("librarian", {"message": "greet"}))
        question = first.result
        assert isinstance(question, dict)
        follow_up = {"message": "Alan", "task_id": question["task_id"]}
        done = await outcome(runtime, runtime.submit("librarian", follow_up))
    assert isinstance(done.result, dict) and done.result["text"] == "hello Alan"
    contexts = []
    for request in requests.seen:
        params = request.get("params")
        if "Message" in str(request.get("method")) and isinstance(params, dict):
            sent = params["message"]
            assert isinstance(sent, dict)
            contexts.append(sent.get("contextId"))
    assert contexts == [None, question["context_id"]]


async def test_with_input_for_the_model_a_form_comes_with_its_schema_and_data_answers_it() -> None:
    librarian = Librarian()
    async with delegating(librarian, input="model") as (runtime, _, _):
        first = await outcome(runtime, runtime.submit("librarian", {"message": "enrol"}))
        question = first.result
        assert isinstance(question, dict)
        assert question["input_required"] == "Who enrols?"
        assert question["answer_schema"] == FORM
        follow_up = {
            "message": "Grace enrols",
            "data": {"name": "Grace"},
            "task_id": question["task_id"],
            "context_id": question["context_id"],
        }
        done = await outcome(runtime, runtime.submit("librarian", follow_up))
    assert isinstance(done.result, dict) and done.result["text"] == "enrolled Grace"
    assert librarian.heard == ["enrol", {"name": "Grace"}]


async def test_cancelling_the_call_cancels_its_task_at_the_agent_saying_why() -> None:
    librarian = Librarian()
    requests = Requests()
    async with delegating(librarian, requests=requests) as (runtime, events, _):
        call = runtime.submit("librarian", {"message": "hold"})
        running = await shown(runtime, events, call, "holding")
        assert runtime.cancel(call, reason="no longer needed")
        cancelled = await outcome(runtime, call)
    assert cancelled.status is CallStatus.CANCELLED
    task_id = statuses(running)[0]["task_id"]
    assert librarian.cancelled == [task_id]
    (cancel,) = [r["params"] for r in requests.seen if r.get("method") == "CancelTask"]
    assert cancel == {"id": task_id, "metadata": {"reason": "no longer needed"}}


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ("fail", "the task failed ({task}): the library is closed"),
        ("reject", "the agent rejected the task ({task}): I do not lend that"),
        (
            "auth",
            "the agent asks for an authentication agentos cannot give ({task}): "
            "show your library card",
        ),
    ],
)
async def test_a_task_that_fails_is_rejected_or_wants_authentication_fails_the_call(
    message: str, error: str
) -> None:
    async with delegating(Librarian()) as (runtime, _, _):
        done = await outcome(runtime, runtime.submit("librarian", {"message": message}))
    assert done.status is CallStatus.FAILED and done.error is not None
    task = f"task {statuses(done)[0]['task_id']}"
    assert done.error.message == "A2A agent 'librarian': " + error.format(task=task)


@pytest.mark.parametrize("streaming", [True, False], ids=["streamed", "polled"])
async def test_an_agent_on_http_json_is_called_as_one_on_json_rpc(streaming: bool) -> None:
    librarian = Librarian()
    accepted = Answer(AnswerAction.ACCEPT, {"answer": "Ada"})
    settings: dict[str, Any] = {"streaming": streaming, "rest": True, "poll_interval": 0.05}
    async with delegating(librarian, answer=accepted, **settings) as (runtime, _, _):
        research = await outcome(runtime, runtime.submit("librarian", {"message": "research ecs"}))
        greeted = await outcome(runtime, runtime.submit("librarian", {"message": "greet"}))
    assert isinstance(research.result, dict) and research.result["text"] == "notes on ecs"
    assert isinstance(greeted.result, dict) and greeted.result["text"] == "hello Ada"
    assert statuses(research)[-1]["status"] == "completed"  # a poll sees what is, not all


async def test_an_answer_without_a_task_is_the_result() -> None:
    async with delegating(Librarian()) as (runtime, _, _):
        done = await outcome(runtime, runtime.submit("librarian", {"message": "quote"}))
    assert done.status is CallStatus.COMPLETED, done
    assert isinstance(done.result, dict)
    assert done.result["text"] == "So many books, so little time."
    assert "task_id" not in done.result and done.result["context_id"]


async def test_an_agent_that_does_not_stream_is_polled() -> None:
    librarian = Librarian()
    async with delegating(librarian, streaming=False, poll_interval=0.05) as (runtime, events, _):
        call = runtime.submit("librarian", {"message": "hold"})
        await shown(runtime, events, call, "holding")
        librarian.released.set()
        done = await outcome(runtime, call)
    assert done.status is CallStatus.COMPLETED, done
    assert isinstance(done.result, dict) and done.result["text"] == "released"
    assert [entry["status"] for entry in statuses(done)][-1] == "completed"


async def test_an_agent_that_cannot_be_reached_fails_the_start_naming_it() -> None:
    port = free_port()
    remote = A2aAgent.http("librarian", f"http://127.0.0.1:{port}", start_timeout=WAIT)
    with pytest.raises(ToolsetError) as raised:
        async with Runtime(toolsets=[remote]):
            pass
    message = str(raised.value)
    assert message.startswith("a2a_agents.librarian: ")
    assert f"http://127.0.0.1:{port}/.well-known/agent-card.json" in message
    assert "connection attempts failed" in message


async def test_an_agent_that_goes_away_mid_task_fails_the_call_naming_it() -> None:
    librarian = Librarian()
    port = free_port()
    remote = A2aAgent.http("librarian", f"http://127.0.0.1:{port}", start_timeout=WAIT)
    async with served(app(port, librarian), port) as stop, serving(remote) as (runtime, events):
        call = runtime.submit("librarian", {"message": "hold"})
        await shown(runtime, events, call, "holding")
        await stop()
        done = await outcome(runtime, call)
        again = await outcome(runtime, runtime.submit("librarian", {"message": "research"}))
    assert done.status is CallStatus.FAILED and done.error is not None
    task_id = statuses(done)[0]["task_id"]
    assert done.error.message.startswith(f"A2A agent 'librarian' (task {task_id}): ")
    assert again.status is CallStatus.FAILED and again.error is not None
    assert again.error.message.startswith("A2A agent 'librarian': ")
    assert "connect" in again.error.message.lower()
    assert "connection" in done.error.message


@pytest.mark.parametrize("streaming", [True, False], ids=["streamed", "polled"])
@pytest.mark.parametrize("babble", ["html", "nonsense"])
async def test_an_agent_that_answers_garbage_fails_the_call_naming_it(
    babble: Babble, streaming: bool
) -> None:
    port = free_port()
    remote = A2aAgent.http("babbler", f"http://127.0.0.1:{port}", start_timeout=WAIT)
    async with (
        served(babbler(port, babble, streaming=streaming), port),
        serving(remote) as (runtime, _),
    ):
        done = await outcome(runtime, runtime.submit("babbler", {"message": "hello"}))
        after = await outcome(runtime, runtime.submit("babbler", {"message": "again"}))
    assert done.status is CallStatus.FAILED and done.error is not None
    assert done.error.message.startswith("A2A agent 'babbler': "), done.error
    assert "submitted" not in done.error.message  # never a task it did not give
    assert after.status is CallStatus.FAILED  # the toolset is still there, and says so again


@pytest.mark.parametrize("babble", ["torn", "cut"])
async def test_a_call_whose_stream_breaks_cancels_its_task_before_it_fails(
    babble: Babble,
) -> None:
    """The agent is there but its task's stream broke (garbage on it, or it ended and the
    task reads as garbage): nobody would follow the task, so it is cancelled."""
    port = free_port()
    heard: list[JsonObject] = []
    remote = A2aAgent.http("babbler", f"http://127.0.0.1:{port}", start_timeout=WAIT)
    async with (
        served(babbler(port, babble, heard=heard), port),
        serving(remote) as (runtime, _),
    ):
        done = await outcome(runtime, runtime.submit("babbler", {"message": "hello"}))
    assert done.status is CallStatus.FAILED and done.error is not None
    assert done.error.message.startswith(f"A2A agent 'babbler' (task {TASK}): "), done.error
    (cancel,) = [asked for asked in heard if asked["method"] == "CancelTask"]
    params = cancel["params"]
    assert isinstance(params, dict) and params["id"] == TASK
    assert params["metadata"] == {
        "reason": f"the call that followed the task failed: {done.error.message}"
    }


async def test_a_follow_up_that_fails_leaves_the_task_for_the_model_to_answer_again() -> None:
    """With ``input = "model"`` a task waiting for an answer is the model's: a follow-up
    whose answer is met with garbage fails without cancelling it, and the next answers it."""
    librarian = Librarian()
    port = free_port()
    garbled: list[str] = []

    class GarbleAnAnswer(BaseHTTPMiddleware):
        async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Any:
            body = await request.body()
            if b"Message" in body and b'"taskId"' in body and not garbled:
                garbled.append(body.decode())
                return HTMLResponse("<html><body>It works!</body></html>")
            return await call_next(request)

    agent = app(port, librarian)
    agent.add_middleware(GarbleAnAnswer)
    remote = A2aAgent.http("librarian", f"http://127.0.0.1:{port}", input="model")
    async with served(agent, port), serving(remote) as (runtime, _):
        first = await outcome(runtime, runtime.submit("librarian", {"message": "greet"}))
        question = first.result
        assert isinstance(question, dict)
        follow_up = {"message": "Alan", "task_id": question["task_id"]}
        failed = await outcome(runtime, runtime.submit("librarian", follow_up))
        done = await outcome(runtime, runtime.submit("librarian", follow_up))
    assert failed.status is CallStatus.FAILED and garbled, failed
    assert librarian.cancelled == []
    assert isinstance(done.result, dict) and done.result["text"] == "hello Alan"


async def test_an_agent_whose_card_is_garbage_fails_the_start_naming_it() -> None:
    port = free_port()
    remote = A2aAgent.http("babbler", f"http://127.0.0.1:{port}", start_timeout=WAIT)
    async with served(babbler(port, "card"), port):
        with pytest.raises(ToolsetError) as raised:
            async with Runtime(toolsets=[remote]):
                pass
    assert str(raised.value).startswith("a2a_agents.babbler: Failed to parse JSON for agent card")


async def test_an_agent_that_never_answers_a_message_fails_the_call_naming_it() -> None:
    port = free_port()
    remote = A2aAgent.http("babbler", f"http://127.0.0.1:{port}", answer_timeout=0.2)
    async with served(babbler(port, "stall"), port), serving(remote) as (runtime, _):
        done = await outcome(runtime, runtime.submit("babbler", {"message": "hello"}))
    assert done.status is CallStatus.FAILED and done.error is not None
    assert done.error.message == "A2A agent 'babbler': no answer to the message within 0.2 s"


async def test_a_silent_stream_is_checked_with_get_task_and_followed_again() -> None:
    librarian = Librarian()
    requests = Requests()
    async with delegating(librarian, requests=requests, answer_timeout=0.05) as (
        runtime,
        events,
        _,
    ):
        call = runtime.submit("librarian", {"message": "hold"})
        await shown(runtime, events, call, "holding")
        await requests.until("SubscribeToTask", 2)  # silent: checked, then subscribed again
        librarian.released.set()
        done = await outcome(runtime, call)
    assert done.status is CallStatus.COMPLETED, done
    assert isinstance(done.result, dict) and done.result["text"] == "released"
    methods = requests.methods()
    assert methods.index("GetTask") < methods.index("SubscribeToTask")


async def test_an_agent_that_never_answers_is_a_timed_out_call() -> None:
    port = free_port()
    remote = A2aAgent.http("babbler", f"http://127.0.0.1:{port}", start_timeout=WAIT)
    async with served(babbler(port, "stall"), port), serving(remote) as (runtime, _):
        call = runtime.submit("babbler", {"message": "hello"}, options=CallOptions(timeout=0.2))
        done = await outcome(runtime, call)
    assert done.status is CallStatus.FAILED and done.error is not None
    assert done.error.kind is ErrorKind.TIMED_OUT, done.error


async def test_get_tool_call_status_shows_what_the_agent_says_it_is_doing() -> None:
    librarian = Librarian()
    async with delegating(librarian) as (runtime, events, _):
        call = runtime.submit("librarian", {"message": "hold"})
        await shown(runtime, events, call, "holding")
        status = await SystemToolbox(runtime).invoke(
            "get_tool_call_status", {"tool_call_id": call}, Caller("default")
        )
        librarian.released.set()
        await outcome(runtime, call)
    said = json.loads(status.to_json())
    assert said["status"] == "running"
    assert "holding" in json.dumps(said["progress"])


async def test_a_session_delegates_to_an_agent_its_agent_file_names() -> None:
    librarian = Librarian()
    port = free_port()
    asked: list[Asked] = []
    config = AgentConfig.model_validate(
        {
            "name": "reader",
            "a2a_agents": {
                "librarian": {
                    "url": f"http://127.0.0.1:{port}/",
                    "token": "${LIBRARY_CARD}",
                    "description": "Asks the librarian.",
                }
            },
        }
    )
    provider = ScriptedProvider(
        (
            lambda r: last_user_text(r) == "greet the librarian",
            lambda r: tool_calls(("librarian", {"message": "greet"})),
        ),
        (lambda r: True, lambda r: text("done")),
    )
    found = agent_tools(config, environ={"LIBRARY_CARD": "s3cret"})
    ask = answering(Answer(AnswerAction.ACCEPT, {"answer": "Ada"}), asked)
    seen = Requests()
    with anyio.fail_after(WAIT * 2):
        async with (
            served(app(port, librarian, seen), port),
            Runtime(found.tools, toolsets=found.toolsets) as runtime,
            Host(runtime, provider, ask_person=ask) as host,
        ):
            session = await host.create_session(config)
            session.post("greet the librarian")
            await session.wait_settled()
            history = str(session.history)
            described = runtime.tools["librarian"].description
    assert "hello Ada" in history
    assert [a.question.message for a in asked] == ["What is your name?"]
    assert {request["authorization"] for request in seen.seen} == {"Bearer s3cret"}  # card, task
    assert described == "Asks the librarian."


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"url": "ftp://127.0.0.1/"}, "'ftp://127.0.0.1/' is not an http:// or https:// URL"),
        ({"url": "http://127.0.0.1/", "tool": "a b"}, "'a b': a tool's name is letters"),
        ({"url": "http://127.0.0.1/", "input": "nobody"}, "Input should be 'person' or 'model'"),
        ({"url": "http://127.0.0.1/", "token": ""}, "at least 1 character"),
        ({"url": "http://127.0.0.1/", "timeout": 3}, "Extra inputs are not permitted"),
    ],
)
def test_a_bad_a2a_agent_entry_is_refused_saying_what_is_wrong(
    entry: JsonObject, problem: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(problem)):
        AgentConfig.model_validate({"name": "reader", "a2a_agents": {"librarian": entry}})


def test_an_agent_file_cannot_give_a_server_and_an_a2a_agent_one_name() -> None:
    with pytest.raises(ValueError, match="'books': the name of both an MCP server and an A2A"):
        AgentConfig.model_validate(
            {
                "name": "reader",
                "mcp_servers": {"books": {"url": "http://127.0.0.1/mcp"}},
                "a2a_agents": {"books": {"url": "http://127.0.0.1/"}},
            }
        )
    with pytest.raises(ValueError, match="'a b': an A2A agent's name is letters"):
        AgentConfig.model_validate(
            {"name": "reader", "a2a_agents": {"a b": {"url": "http://127.0.0.1/"}}}
        )


async def test_a_token_from_an_unset_variable_fails_the_start_naming_it() -> None:
    config = A2aAgentConfig(url="http://127.0.0.1:9/", token="${NOPE}")
    remote = A2aAgent("librarian", config, environ={})
    unset = "a2a_agents.librarian.token: ${NOPE} is not set in the environment"
    with pytest.raises(ToolsetError, match=re.escape(unset)):
        async with Runtime(toolsets=[remote]):
            pass


async def test_a_task_outlives_a_killed_host_and_its_result_reaches_the_session(
    tmp_path: Path,
) -> None:
    librarian = Librarian()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    path = tmp_path / "tasks.db"
    provider = ScriptedProvider((lambda r: True, lambda r: text("thanks")))
    with anyio.fail_after(WAIT * 3):
        async with served(app(port, librarian), port):
            session_id = await killed_when_ready(path, url, "librarian", {"message": "hold"})
            assert librarian.holding.is_set() and not librarian.cancelled
            async with (
                await SqliteStore.open(path) as store,
                Runtime(toolsets=[A2aAgent.http("librarian", url)]) as runtime,
                Host(runtime, provider, store=store) as host,
                runtime.subscribe(session_id) as events,
            ):
                session = await host.resume(session_id, steal=True)
                (again,) = runtime.list_calls(session_id)
                await shown(runtime, events, again.call_id, "holding")  # followed again
                librarian.released.set()
                done = await outcome(runtime, again.call_id)
                await session.wait_settled()
                history = str(session.history)
    assert done.status is CallStatus.COMPLETED, done
    assert isinstance(done.result, dict) and done.result["text"] == "released"
    assert librarian.heard == ["hold"]  # followed, not sent again
    assert "lost" not in history and "released" in history


async def test_a_task_handed_to_a_call_is_let_go_however_the_call_ends() -> None:
    """``resume_task`` hands a call its task; the call takes it as it starts, whether it
    then completes, fails (the agent knows no such task) or is cancelled; a call that
    ends without starting keeps it only until the runtime closes."""
    librarian = Librarian()
    port = free_port()
    remote = A2aAgent.http("librarian", f"http://127.0.0.1:{port}", start_timeout=WAIT)
    anything = {"message": "not sent: the call goes on with its task"}

    def handed(task_id: str) -> str:
        call_id = runtime.submit("librarian", anything)
        remote.resume_task(call_id, task_id)
        return call_id

    async with served(app(port, librarian), port), serving(remote) as (runtime, events):
        research = await outcome(runtime, runtime.submit("librarian", {"message": "research"}))
        assert isinstance(research.result, dict)
        completed = await outcome(runtime, handed(str(research.result["task_id"])))
        unknown = await outcome(runtime, handed("no-such-task"))
        held = runtime.submit("librarian", {"message": "hold"})
        task_id = statuses(await shown(runtime, events, held, "holding"))[0]["task_id"]
        following = handed(str(task_id))
        await shown(runtime, events, following, "holding")
        runtime.cancel(following, reason="no longer needed")
        cancelled = await outcome(runtime, following)
        left = await outcome(runtime, held)  # its task cancelled under it
        never = handed("never")
        runtime.cancel(never)  # before it starts
        assert (await outcome(runtime, never)).status is CallStatus.CANCELLED
        assert remote.resuming == {never: "never"}
    assert completed.status is CallStatus.COMPLETED, completed
    assert unknown.status is CallStatus.FAILED and unknown.error is not None
    assert "Task not found" in unknown.error.message
    assert cancelled.status is CallStatus.CANCELLED and librarian.cancelled == [task_id]
    assert left.status is CallStatus.FAILED and left.error is not None
    assert "the agent cancelled the task" in left.error.message
    assert librarian.heard == ["research", "hold"]  # followed, never sent again
    assert remote.resuming == {}


async def test_a_resumed_call_whose_task_then_asks_reaches_the_person_at_once(
    tmp_path: Path,
) -> None:
    """A resumed call follows its task by subscribing, and an agent's subscription stays
    open while the task waits for input: the question is taken as it comes, not after the
    agent has been silent ``answer_timeout`` seconds (300 here)."""
    librarian = Librarian()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    path = tmp_path / "tasks.db"
    provider = ScriptedProvider((lambda r: True, lambda r: text("thanks")))
    asked: list[Asked] = []
    person = answering(Answer(AnswerAction.ACCEPT, {"answer": "Alan"}), asked)
    with anyio.fail_after(WAIT * 3):
        async with served(app(port, librarian), port):
            session_id = await killed_when_ready(path, url, "librarian", {"message": "hold ask"})
            async with (
                await SqliteStore.open(path) as store,
                Runtime(toolsets=[A2aAgent.http("librarian", url)]) as runtime,
                Host(runtime, provider, store=store, ask_person=person) as host,
                runtime.subscribe(session_id) as events,
            ):
                await host.resume(session_id, steal=True)
                (again,) = runtime.list_calls(session_id)
                await shown(runtime, events, again.call_id, "holding")
                librarian.released.set()
                done = await outcome(runtime, again.call_id)
    assert [a.question.message for a in asked] == ["What is your name?"]
    assert isinstance(done.result, dict) and done.result["text"] == "hello Alan"


@pytest.mark.parametrize(
    ("answer", "heard"),
    [
        (Answer(AnswerAction.ACCEPT, {"city": "Lyon"}), 'accept: {"city": "Lyon"}'),
        (Answer(AnswerAction.DECLINE), "decline: null (the A2A client said decline)"),
    ],
    ids=["accepted", "declined"],
)
async def test_an_agentos_agents_question_is_asked_with_its_form_and_answered_as_data(
    tmp_path: Path, env: dict[str, str], answer: Answer, heard: str
) -> None:
    """A session whose agent file names an ``agentos a2a`` agent delegates to it; that
    agent's call asks with a form, which it puts in a data part of its own shape (the
    call, and the question with its form): the person gets that form, and its values
    reach the remote call; declined, the remote call hears the decline and goes on."""
    asked: list[Asked] = []
    provider = ScriptedProvider(
        (
            lambda r: last_user_text(r) == "ask the worker",
            lambda r: tool_calls(("worker", {"message": "weather?"})),
        ),
        (lambda r: True, lambda r: text("done")),
    )
    with a2a_server(tmp_path, env, module="tests.ui.cli.asking_tools") as (url, token):
        assert token is not None
        entry = {"url": url, "token": "${WORKER_TOKEN}"}
        config = AgentConfig.model_validate({"name": "boss", "a2a_agents": {"worker": entry}})
        found = agent_tools(config, environ={"WORKER_TOKEN": token})
        with anyio.fail_after(WAIT * 2):
            async with (
                Runtime(found.tools, toolsets=found.toolsets) as runtime,
                Host(runtime, provider, ask_person=answering(answer, asked)) as host,
            ):
                session = await host.create_session(config)
                session.post("ask the worker")
                await session.wait_settled()
                (call,) = runtime.list_calls(session.session_id)
                done = await outcome(runtime, call.call_id)
    assert done.status is CallStatus.COMPLETED, done
    (question,) = asked
    assert question.question.message == "Which city?"
    assert question.question.source == "A2A agent worker"
    form = question.question.form
    assert form is not None and form["required"] == ["city"]
    assert set(form["properties"]) == {"city", "days"}  # type: ignore[arg-type]
    assert isinstance(done.result, dict)
    assert done.result["text"] == f"where: {heard}"
    action = heard.split(":")[0]
    assert f"where: {action}" in str(session.history)  # the session's model read it


async def test_with_input_for_the_model_an_agentos_agents_question_comes_with_its_form(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """The model gets the form of the question an ``agentos a2a`` call asked as the
    answer's schema; an answer that does not fit it is asked again, saying why first."""
    with a2a_server(tmp_path, env, module="tests.ui.cli.asking_tools") as (url, token):
        worker = A2aAgent.http("worker", url, token=token, start_timeout=WAIT, input="model")
        async with serving(worker) as (runtime, _):
            first = await outcome(runtime, runtime.submit("worker", {"message": "weather?"}))
            question = first.result
            assert isinstance(question, dict), first
            on_the_task = {"task_id": question["task_id"], "context_id": question["context_id"]}
            unfit = {"message": "here", "data": {"town": "Lyon"}, **on_the_task}
            again = await outcome(runtime, runtime.submit("worker", unfit))
            fit = {"message": "here", "data": {"city": "Lyon"}, **on_the_task}
            done = await outcome(runtime, runtime.submit("worker", fit))
    assert question["input_required"] == "Which city?"
    schema = question["answer_schema"]
    assert isinstance(schema, dict) and schema["required"] == ["city"]
    assert isinstance(again.result, dict)
    said = again.result["input_required"]
    assert isinstance(said, str) and said.startswith("that answer does not fit: ")
    assert said.endswith("\nWhich city?") and again.result["answer_schema"] == schema
    assert isinstance(done.result, dict)
    assert done.result["text"] == 'where: accept: {"city": "Lyon"}'
