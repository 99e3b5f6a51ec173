"""An MCP server can talk back while its tool runs: it asks the person (elicitation), lists
the roots it may see, and sends log lines, each shown on the call that is running; agentos
says who it is and what it can answer. Against a real server written with the ``mcp`` SDK."""

from __future__ import annotations

import json
import sys
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream
from structlog.testing import capture_logs

from agentos import Answer
from agentos import AnswerAction
from agentos import CallEvent
from agentos import CallSnapshot
from agentos import CallStatus
from agentos import McpServer
from agentos import ProgressKind
from agentos import Runtime
from agentos.testing import settle
from tests.support.mcp_servers import SERVERS
from tests.toolsets.conftest import WAIT
from tests.toolsets.conftest import answering
from tests.toolsets.conftest import outcome
from tests.toolsets.conftest import serving

pytestmark = pytest.mark.anyio

TOOLS_SERVER = str(SERVERS / "tools_server.py")


def talking(
    *, ask: bool = True, **options: Any
) -> AbstractAsyncContextManager[tuple[Runtime, MemoryObjectReceiveStream[CallEvent]]]:
    """The tools server; its questions are held for ``Runtime.answer`` (``ask``: else nobody
    can be asked)."""
    server = McpServer.stdio("files", sys.executable, [TOOLS_SERVER], **options)
    return serving(server, ask=answering(None) if ask else None)


async def asked(
    runtime: Runtime, events: MemoryObjectReceiveStream[CallEvent], call_id: str
) -> CallSnapshot:
    """The call once it shows a question."""
    with anyio.fail_after(WAIT):
        while (snapshot := runtime.status(call_id)).question is None:
            assert not snapshot.status.is_final, snapshot
            await events.receive()
    return snapshot


async def test_agentos_says_who_it_is_and_what_a_server_may_ask_of_it(tmp_path: Path) -> None:
    async with talking() as (runtime, _):
        said = (await outcome(runtime, runtime.submit("client", {}))).result
    assert isinstance(said, dict)
    assert said["name"] == "agentos" and said["version"] not in ("", None)
    assert said["elicitation"] is True and said["roots"] is False
    async with talking(roots=[str(tmp_path)]) as (runtime, _):
        said = (await outcome(runtime, runtime.submit("client", {}))).result
    assert isinstance(said, dict) and said["roots"] is True


async def test_a_servers_question_shows_on_its_call_and_the_persons_answer_reaches_it() -> None:
    async with talking() as (runtime, events):
        call_id = runtime.submit("ask_city", {})
        waiting = await asked(runtime, events, call_id)
        assert waiting.status is CallStatus.RUNNING
        question = waiting.question
        assert question is not None and question.message == "Which city?"
        assert question.source == "MCP server files"
        assert question.form is not None and "city" in question.form["properties"]  # type: ignore[operator]
        echo = await outcome(runtime, runtime.submit("echo", {"text": "meanwhile"}))
        assert echo.result == {"result": "meanwhile"}  # the server and runtime go on

        assert runtime.answer(call_id, Answer(AnswerAction.ACCEPT, {"city": "Lyon"}))
        done = await outcome(runtime, call_id)
    assert done.result == {"result": "accept Lyon"} and done.question is None


async def test_a_declined_question_and_one_nobody_can_be_asked() -> None:
    async with talking() as (runtime, events):
        call_id = runtime.submit("ask_city", {})
        await asked(runtime, events, call_id)
        assert runtime.answer(call_id, Answer(AnswerAction.DECLINE))
        assert (await outcome(runtime, call_id)).result == {"result": "decline"}
    async with talking(ask=False) as (runtime, _):
        done = await outcome(runtime, runtime.submit("ask_city", {}))
    assert done.result == {"result": "decline"}
    answers = [entry.payload for entry in done.progress if entry.kind is ProgressKind.ANSWER]
    assert len(answers) == 1 and "nobody to ask" in str(answers[0])


async def test_cancelling_a_call_that_waits_on_its_question_withdraws_it() -> None:
    async with talking() as (runtime, events):
        call_id = runtime.submit("ask_city", {})
        await asked(runtime, events, call_id)
        assert runtime.cancel(call_id, "never mind").cancelled
        done = await outcome(runtime, call_id)
        assert done.status is CallStatus.CANCELLED and done.question is None
        assert not runtime.answer(call_id, Answer(AnswerAction.ACCEPT, {"city": "Lyon"}))
        again = runtime.submit("ask_city", {})  # the next question is asked as the first was
        await asked(runtime, events, again)
        assert runtime.answer(again, Answer(AnswerAction.ACCEPT, {"city": "Oslo"}))
        assert (await outcome(runtime, again)).result == {"result": "accept Oslo"}


async def test_a_question_while_several_calls_run_is_declined_saying_why() -> None:
    async with talking() as (runtime, _):
        slow = runtime.submit("slow", {"steps": 1})
        with capture_logs() as logs:
            done = await outcome(runtime, runtime.submit("ask_city", {}))
        runtime.cancel(slow)
    assert done.result == {"result": "decline"}
    declined = [log for log in logs if log["event"] == "mcp.question_declined"]
    assert declined and "2 calls of MCP server 'files' are running" in declined[0]["reason"]


@pytest.fixture
def root(tmp_path: Path) -> tuple[str, str]:
    """A directory to offer, and the URI it is offered as."""
    return str(tmp_path), tmp_path.resolve().as_uri()


async def test_the_roots_offered_are_those_the_agent_names_and_none_by_default(
    root: tuple[str, str],
) -> None:
    async with talking() as (runtime, _):
        refused = await outcome(runtime, runtime.submit("visible_roots", {}))
    assert refused.status is CallStatus.FAILED
    async with talking(roots=[root[0], "file:///srv/data"]) as (runtime, _):
        listed = await outcome(runtime, runtime.submit("visible_roots", {}))
    assert listed.result == {"result": [root[1], "file:///srv/data"]}


async def test_a_servers_log_lines_are_its_calls_log() -> None:
    async with talking() as (runtime, _):
        done = await outcome(runtime, runtime.submit("chatter", {}))
    lines = [entry.payload for entry in done.progress if entry.kind is ProgressKind.LOG]
    assert lines == ["[info lookup] looking things up", '[warning] {"left": 3}']


async def test_the_reason_given_for_a_cancel_reaches_the_server() -> None:
    server = McpServer.stdio("bad", sys.executable, [str(SERVERS / "hostile_server.py")])
    with anyio.fail_after(WAIT * 2):
        async with Runtime(toolsets=[server]) as runtime:
            hanging = runtime.submit("hang", {})
            await settle(runtime)
            assert runtime.cancel(hanging, "the person changed their mind").cancelled
            heard: list[str] = []
            while not heard:  # each look is a round trip behind the cancel's own write
                looked = await outcome(runtime, runtime.submit("cancels", {}))
                heard = json.loads(str(looked.result))
    assert heard == ["the person changed their mind"]


async def test_a_servers_resources_are_tools_the_model_can_list_and_read() -> None:
    async with talking() as (runtime, _):
        assert {"files_list_resources", "files_read_resource"} <= set(runtime.tools)
        listed = await outcome(runtime, runtime.submit("files_list_resources", {}))
        read = await outcome(
            runtime, runtime.submit("files_read_resource", {"uri": "note://greeting"})
        )
        image = await outcome(
            runtime, runtime.submit("files_read_resource", {"uri": "note://pixel"})
        )
        missing = await outcome(
            runtime, runtime.submit("files_read_resource", {"uri": "note://none"})
        )
        link = await outcome(runtime, runtime.submit("linked", {}))
    assert listed.result == {
        "resources": [
            {
                "uri": "note://greeting",
                "name": "greeting",
                "description": "A short text.",
                "mime_type": "text/plain",
            },
            {
                "uri": "note://pixel",
                "name": "pixel",
                "description": "A one-pixel image.",
                "mime_type": "image/png",
            },
        ]
    }
    (document,) = blocks(read)
    assert document["source"]["data"] == "hello from a resource"
    assert blocks(image)[0]["type"] == "image"
    assert missing.status is CallStatus.FAILED
    said = blocks(link)[1]["text"]
    assert said == "[resource link: greeting <note://greeting>; files_read_resource reads it]"


def blocks(snapshot: CallSnapshot) -> list[dict[str, Any]]:
    """The content blocks a call's result carries."""
    assert isinstance(snapshot.result, dict), snapshot
    content = snapshot.result["content"]
    assert isinstance(content, list) and all(isinstance(b, dict) for b in content)
    return content  # type: ignore[return-value]


async def test_a_server_without_resources_offers_no_resource_tools() -> None:
    server = McpServer.stdio("bad", sys.executable, [str(SERVERS / "hostile_server.py")])
    with anyio.fail_after(WAIT * 2):
        async with Runtime(toolsets=[server]) as runtime:
            assert "echo" in runtime.tools
            assert not [name for name in runtime.tools if "resource" in name]
