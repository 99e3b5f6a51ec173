"""agentos as the client of ``@modelcontextprotocol/server-everything``, the reference server
nobody here wrote (Node, over stdio): its elicitation, sampling, roots, resources and prompts,
and its task-only tool run as an MCP task whose status is the call's progress."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream

from agentos import AgentConfig
from agentos import Answer
from agentos import AnswerAction
from agentos import CallEvent
from agentos import CallSnapshot
from agentos import CallStatus
from agentos import Host
from agentos import McpServer
from agentos import ProgressKind
from agentos import Runtime
from agentos import ScriptedProvider
from agentos.testing import text
from tests.support.node import node_program
from tests.toolsets.conftest import WAIT
from tests.toolsets.conftest import answering
from tests.toolsets.conftest import outcome
from tests.toolsets.conftest import serving

pytestmark = pytest.mark.anyio

RESEARCH = "simulate-research-query"


@pytest.fixture
def everything() -> list[str]:
    return [*node_program("mcp-server-everything"), "stdio"]


def everything_served(
    argv: list[str], answer: Answer | None = None, **options: Any
) -> AbstractAsyncContextManager[tuple[Runtime, MemoryObjectReceiveStream[CallEvent]]]:
    """A runtime with server-everything; each question gets ``answer`` (None: held for
    ``Runtime.answer``)."""
    server = McpServer.stdio("everything", argv[0], argv[1:], **options)
    return serving(server, ask=answering(answer), within=WAIT * 3)


async def until(
    runtime: Runtime, events: MemoryObjectReceiveStream[CallEvent], call_id: str, kind: ProgressKind
) -> CallSnapshot:
    """The call once it has a progress entry of ``kind``."""
    with anyio.fail_after(WAIT):
        while True:
            snapshot = runtime.status(call_id)
            if any(entry.kind is kind for entry in snapshot.progress):
                return snapshot
            assert not snapshot.status.is_final, snapshot
            await events.receive()


def said(snapshot: CallSnapshot) -> str:
    assert snapshot.status is CallStatus.COMPLETED, snapshot
    return str(snapshot.result)


async def test_its_form_question_reaches_the_person_and_the_answer_comes_back(
    everything: list[str],
) -> None:
    answer = Answer(AnswerAction.ACCEPT, {"name": "Ada", "check": True, "email": "a@b.c"})
    async with everything_served(everything) as (runtime, events):
        call = runtime.submit("trigger-elicitation-request", {})
        asked = await until(runtime, events, call, ProgressKind.QUESTION)
        assert asked.question is not None and asked.question.form is not None
        assert "name" in asked.question.form["properties"]  # type: ignore[operator]
        assert runtime.answer(call, answer)
        done = await outcome(runtime, call)
    assert "Ada" in said(done) and "accept" in said(done)


async def test_its_sampling_is_answered_by_the_sessions_model(everything: list[str]) -> None:
    provider = ScriptedProvider((lambda r: True, lambda r: text("forty-two")))
    async with everything_served(everything) as (runtime, _), Host(runtime, provider) as host:
        session = await host.create_session(AgentConfig(name="plain"))
        call = runtime.submit(
            "trigger-sampling-request", {"prompt": "the answer?"}, session_id=session.session_id
        )
        done = await outcome(runtime, call)
        assert session.statistics().requests == 1
    assert "forty-two" in said(done)
    assert "the answer?" in str(provider.requests[0].messages)


async def test_it_sees_the_roots_the_agent_names_and_reads_resources(
    everything: list[str], tmp_path: Path
) -> None:
    async with everything_served(everything, roots=[str(tmp_path)]) as (runtime, _):
        roots = await outcome(runtime, runtime.submit("get-roots-list", {}))
        listed = await outcome(runtime, runtime.submit("everything_list_resources", {}))
        assert isinstance(listed.result, dict) and isinstance(listed.result["resources"], list)
        resources = listed.result["resources"]
        assert isinstance(resources[0], dict)
        first = resources[0]["uri"]
        read = await outcome(runtime, runtime.submit("everything_read_resource", {"uri": first}))
    assert tmp_path.name in said(roots)
    assert len(resources) > 1 and read.status is CallStatus.COMPLETED


async def test_its_prompts_are_listed_and_got_with_their_arguments_and_resources(
    everything: list[str],
) -> None:
    def get(name: str, arguments: dict[str, str]) -> str:
        return runtime.submit("everything_get_prompt", {"name": name, "arguments": arguments})

    async with everything_served(everything) as (runtime, _):
        listed = await outcome(runtime, runtime.submit("everything_list_prompts", {}))
        weather = await outcome(runtime, get("args-prompt", {"city": "Paris"}))
        text = await outcome(
            runtime, get("resource-prompt", {"resourceType": "Text", "resourceId": "1"})
        )
        blob = await outcome(
            runtime, get("resource-prompt", {"resourceType": "Blob", "resourceId": "2"})
        )
        refused = await outcome(
            runtime, get("resource-prompt", {"resourceType": "Video", "resourceId": "1"})
        )
        missing = await outcome(runtime, get("args-prompt", {"state": "Texas"}))
    assert isinstance(listed.result, dict) and isinstance(listed.result["prompts"], list)
    prompts = {str(p["name"]): p for p in listed.result["prompts"] if isinstance(p, dict)}
    assert {"simple-prompt", "args-prompt", "resource-prompt", "completable-prompt"} <= set(prompts)
    assert prompts["args-prompt"]["arguments"] == [
        {"name": "city", "required": True, "description": "Name of the city"},
        {"name": "state", "required": False},  # its SDK drops an optional one's description
    ]
    assert said(weather) == "[user] What's weather in Paris?"
    assert documents(text)[0].startswith("Resource 1: This is a plaintext resource")
    assert documents(blob)[0].startswith("Resource 2: This is a base64 blob")
    assert refused.status is CallStatus.FAILED and refused.error is not None
    assert refused.error.message.startswith("prompt 'resource-prompt' of MCP server 'everything': ")
    assert "Invalid resourceType: Video" in refused.error.message
    assert missing.error is not None
    assert missing.error.message == (
        "prompt 'args-prompt' of MCP server 'everything' needs the argument 'city'"
    )


def documents(snapshot: CallSnapshot) -> list[str]:
    """The texts of the documents a call's result carries."""
    assert isinstance(snapshot.result, dict), snapshot
    blocks = snapshot.result["content"]
    assert isinstance(blocks, list)
    return [
        str(block["source"]["data"])  # type: ignore[index,call-overload]
        for block in blocks
        if isinstance(block, dict) and block["type"] == "document"
    ]


async def test_its_task_only_tool_runs_as_a_task_whose_status_is_the_progress(
    everything: list[str],
) -> None:
    async with everything_served(everything) as (runtime, _):
        done = await outcome(runtime, runtime.submit(RESEARCH, {"topic": "ecs"}))
    assert "Research Report: ecs" in said(done)
    statuses = [e.payload for e in done.progress if e.kind is ProgressKind.PARTIAL]
    shown = [status for status in statuses if isinstance(status, dict)]
    assert shown and len(shown) == len(statuses)
    assert all(status["task_id"] for status in shown) and shown[0]["status"] == "working"
    assert len({str(status["text"]) for status in shown}) > 1  # it moved on


async def test_a_tasks_question_reaches_the_person_while_it_runs(everything: list[str]) -> None:
    chosen = Answer(AnswerAction.ACCEPT, {"interpretation": "historical"})
    async with everything_served(everything) as (runtime, events):
        call = runtime.submit(RESEARCH, {"topic": "ecs", "ambiguous": True})
        asked = await until(runtime, events, call, ProgressKind.QUESTION)
        assert asked.status is CallStatus.RUNNING and asked.question is not None
        assert "interpretations" in asked.question.message
        assert runtime.answer(call, chosen)
        done = await outcome(runtime, call)
    assert "historical" in said(done)


async def test_cancelling_a_task_call_ends_it_and_the_server_goes_on(
    everything: list[str],
) -> None:
    async with everything_served(everything) as (runtime, events):
        call = runtime.submit(RESEARCH, {"topic": "long"})
        await until(runtime, events, call, ProgressKind.PARTIAL)
        assert runtime.cancel(call, "not needed").cancelled
        assert (await outcome(runtime, call)).status is CallStatus.CANCELLED
        echo = await outcome(runtime, runtime.submit("echo", {"message": "still here"}))
    assert "still here" in said(echo)
