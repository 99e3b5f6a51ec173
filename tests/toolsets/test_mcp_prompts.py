"""A server's prompts are two tools the model can call, ``<server>_list_prompts`` and
``<server>_get_prompt``, offered only while the server lists some; a request that cannot be
answered fails saying which prompt and why. Against a real server written with the ``mcp``
SDK, and a hand-written one whose prompt list is broken."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from agentos import CallSnapshot
from agentos import CallStatus
from agentos import McpServer
from agentos import Runtime
from tests.support.asgi import free_port
from tests.support.asgi import served
from tests.support.mcp_servers import SERVERS
from tests.toolsets.conftest import WAIT
from tests.toolsets.conftest import outcome

pytestmark = pytest.mark.anyio

PROMPTS = ("files_list_prompts", "files_get_prompt")


@asynccontextmanager
async def serving(
    script: str = "prompts_server.py", tools: list[str] | None = None, **env: str
) -> AsyncIterator[Runtime]:
    """A runtime with the server ``script`` as ``files``, its allow-list ``tools``."""
    server = McpServer.stdio("files", sys.executable, [str(SERVERS / script)], env=env, tools=tools)
    with anyio.fail_after(WAIT * 2):
        async with Runtime(toolsets=[server]) as runtime:
            yield runtime


async def get(runtime: Runtime, prompt: str, /, **arguments: Any) -> CallSnapshot:
    """The call of ``files_get_prompt`` for ``prompt``, once it ended."""
    args: dict[str, Any] = {"name": prompt}
    if arguments:
        args["arguments"] = arguments
    return await outcome(runtime, runtime.submit("files_get_prompt", args))


def failure(snapshot: CallSnapshot) -> str:
    assert snapshot.status is CallStatus.FAILED and snapshot.error is not None, snapshot
    return snapshot.error.message


async def test_the_model_lists_the_prompts_and_gets_one_filled_in() -> None:
    async with serving() as runtime:
        assert set(PROMPTS) <= set(runtime.tools)
        listed = await outcome(runtime, runtime.submit("files_list_prompts", {}))
        cheerful = await get(runtime, "greet", name="Ada", mood="cheerful")
        plain = await get(runtime, "greet", name="Ada")
    assert listed.result == {
        "prompts": [
            {
                "name": "greet",
                "description": "Greet someone.",
                "arguments": [
                    {"name": "name", "required": True},
                    {"name": "mood", "required": False},
                ],
            },
            {"name": "show", "description": "Every kind of message a prompt can hold."},
            {"name": "broken", "description": "Always fails."},
        ]
    }
    assert cheerful.result == "(Greet someone.)\n\n[user] Say hello to Ada, in a cheerful voice."
    assert plain.result == "(Greet someone.)\n\n[user] Say hello to Ada, in a calm voice."


async def test_a_prompts_images_and_resources_come_as_blocks_after_their_roles() -> None:
    async with serving() as runtime:
        shown = await get(runtime, "show")
    assert shown.status is CallStatus.COMPLETED and isinstance(shown.result, dict), shown
    assert shown.result["type"] == "tool_content"
    blocks = shown.result["content"]
    assert isinstance(blocks, list)
    texts = [block["text"] for block in blocks if isinstance(block, dict) and "text" in block]
    assert texts == [
        "(Every kind of message a prompt can hold.)",
        "[user] Look at these.",
        "[assistant] I will.",
        "[user]",
        "[user]",
        "[user]",
        "[user] [resource note://latin (text/plain) not shown]",
        "[user] [resource link: greeting <note://greeting>; files_read_resource reads it]",
    ]
    image, document = blocks[4], blocks[6]
    assert isinstance(image, dict) and image["type"] == "image"
    assert isinstance(document, dict) and document["type"] == "document"
    assert document["source"] == {"type": "text", "media_type": "text/plain", "data": "be brief"}
    assert document["title"] == "note://rules"
    blob = blocks[8]
    assert isinstance(blob, dict) and blob["type"] == "document"
    assert blob["source"] == {"type": "text", "media_type": "text/plain", "data": "be kind"}
    assert blob["title"] == "note://kind"


async def test_a_link_in_a_prompt_names_the_reading_tool_only_when_the_agent_has_it() -> None:
    async with serving(tools=["files_get_prompt"]) as runtime:
        assert set(runtime.tools) == {"files_get_prompt"}
        shown = await get(runtime, "show")
    assert isinstance(shown.result, dict) and isinstance(shown.result["content"], list)
    assert shown.result["content"][-1] == {
        "type": "text",
        "text": "[user] [resource link: greeting <note://greeting>]",
    }


async def test_a_request_that_cannot_be_answered_fails_naming_the_prompt() -> None:
    async with serving() as runtime:
        unknown = await get(runtime, "nope")
        missing = await get(runtime, "greet", mood="calm")
        extra = await get(runtime, "greet", name="Ada", tone="dry")
        refused = await get(runtime, "broken")
        untyped = await outcome(
            runtime,
            runtime.submit("files_get_prompt", {"name": "greet", "arguments": {"name": 7}}),
        )
        nameless = await outcome(runtime, runtime.submit("files_get_prompt", {}))
    assert failure(unknown) == (
        "MCP server 'files' has no prompt 'nope' (it has: 'greet', 'show', 'broken')"
    )
    assert failure(missing) == "prompt 'greet' of MCP server 'files' needs the argument 'name'"
    assert failure(extra) == (
        "prompt 'greet' of MCP server 'files' takes no argument 'tone' (it takes: 'name', 'mood')"
    )
    assert failure(refused) == (
        "prompt 'broken' of MCP server 'files': the broken prompt always fails"
    )
    assert "arguments.name: 7 is not of type 'string'" in failure(untyped)
    assert "'name' is a required property" in failure(nameless)


async def test_a_server_with_no_prompts_offers_no_prompt_tools() -> None:
    async with serving("hostile_server.py") as runtime:  # it does not say it has prompts
        assert "echo" in runtime.tools
        assert not [name for name in runtime.tools if "prompt" in name]
    async with serving(PROMPTS="none") as runtime:  # it says so, and lists none
        assert "add_prompt" in runtime.tools
        assert not [name for name in runtime.tools if name in PROMPTS]


async def test_prompts_listed_later_bring_the_tools_and_the_last_one_gone_takes_them() -> None:
    async with serving(PROMPTS="none") as runtime:
        version = runtime.tools_version
        await outcome(runtime, runtime.submit("add_prompt", {"name": "late"}))
        with anyio.fail_after(WAIT):
            while not set(PROMPTS) <= set(runtime.tools):
                version = await runtime.tools_changed(version)
        late = await get(runtime, "late")
        await outcome(runtime, runtime.submit("drop_prompt", {"name": "late"}))
        with anyio.fail_after(WAIT):
            while set(PROMPTS) & set(runtime.tools):
                version = await runtime.tools_changed(version)
    assert late.result == "(The late prompt.)\n\n[user] the late prompt"


async def test_a_server_whose_prompts_cannot_be_listed_starts_with_its_tools() -> None:
    server = McpServer.stdio(
        "bad", sys.executable, [str(SERVERS / "hostile_server.py")], env={"PROMPTS": "broken"}
    )
    with anyio.fail_after(WAIT * 2):
        async with Runtime(toolsets=[server]) as runtime:
            assert "echo" in runtime.tools
            assert not [name for name in runtime.tools if "prompt" in name]
    said = [problem for problem in server.problems if problem.startswith("prompts left out")]
    assert said and said[0].startswith("prompts left out: prompts/list failed: ")


async def test_resources_listed_later_bring_their_tools_too() -> None:
    async with serving(RESOURCES="none") as runtime:
        assert "files_read_resource" not in runtime.tools
        version = runtime.tools_version
        await outcome(runtime, runtime.submit("greet_later", {}))
        with anyio.fail_after(WAIT):
            while "files_read_resource" not in runtime.tools:
                version = await runtime.tools_changed(version)
        shown = await get(runtime, "show")
    assert isinstance(shown.result, dict) and isinstance(shown.result["content"], list)
    said = "[user] [resource link: greeting <note://greeting>; files_read_resource reads it]"
    assert shown.result["content"][-1] == {"type": "text", "text": said}


async def test_a_prompt_call_that_finds_an_http_server_gone_has_it_reached_again() -> None:
    from tests.support.mcp_servers.prompts_server import app

    port = free_port()
    server = McpServer.http("files", f"http://127.0.0.1:{port}/mcp", start_timeout=10)
    async with served(app.streamable_http_app(), port) as stop:
        with anyio.fail_after(WAIT * 2):
            async with Runtime(toolsets=[server]) as runtime:
                first = await get(runtime, "greet", name="Ada")
                await stop()
                down = await get(runtime, "greet", name="Bo")
                async with served(app.streamable_http_app(), port):
                    again = await get(runtime, "greet", name="Cy")
    assert first.status is CallStatus.COMPLETED, first
    assert failure(down).startswith("MCP server 'files' was lost: ")
    assert again.result == "(Greet someone.)\n\n[user] Say hello to Cy, in a calm voice."
