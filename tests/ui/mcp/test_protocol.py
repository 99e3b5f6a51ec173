"""The protocol's utilities ``agentos mcp`` answers beyond its tools (issue 49), through the
``mcp`` SDK's client over streamable HTTP: its version, ``logging/setLevel``,
``completion/complete``, a client's sessions as resources it reads and subscribes to, and
streams that start with a priming event and can be resumed with ``Last-Event-ID``.
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from importlib.metadata import version
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import MCPError
from mcp.shared.exceptions import MCPDeprecationWarning

from tests.ui.mcp.running import ACCEPT
from tests.ui.mcp.running import INITIALIZE
from tests.ui.mcp.running import connected
from tests.ui.mcp.running import http_server
from tests.ui.mcp.running import structured

pytestmark = pytest.mark.anyio

TEMPLATE = "agentos://sessions/{session_id}"


def removed_in_2026() -> AbstractContextManager[object]:
    """The SDK's client warns of what protocol 2026-07-28 drops (logging, resource
    subscriptions), which the handshake protocols (2025-11-25) this server speaks keep."""
    return pytest.warns(MCPDeprecationWarning, match="2026-07-28")


async def test_the_server_tells_its_version_and_completes_session_ids(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with http_server(tmp_path, env, options=["--no-token"], within=60) as (url, _):
        async with connected(url, None) as client:
            info = client.initialize_result
            assert info is not None
            assert info.server_info.name == "agentos"
            assert info.server_info.version == version("agentos")  # the installed package's
            assert info.capabilities.logging is not None
            assert info.capabilities.completions is not None
            described = {tool.name: tool.description for tool in (await client.list_tools()).tools}
            assert described["post"] == (
                "Post a message to one of your sessions: the model's answer, and the calls still\n"
                "running (their progress arrives as notifications while the turn lasts)."
            )  # the docstring without its indentation
            session_id = structured(await client.call_tool("start_session", {"message": "hi"}))[
                "session_id"
            ]
            template = types.ResourceTemplateReference(uri=TEMPLATE)
            typed = await client.complete(template, {"name": "session_id", "value": session_id[:3]})
            assert typed.completion.values == [session_id]
            assert typed.completion.has_more is False
            none = await client.complete(template, {"name": "session_id", "value": "zz-none"})
            assert none.completion.values == []
            prompt = types.PromptReference(name="anything")
            assert (
                await client.complete(prompt, {"name": "a", "value": ""})
            ).completion.values == []
            with pytest.raises(MCPError, match="agentos has no prompts"):
                await client.get_prompt("anything")


async def test_a_client_that_sets_a_level_hears_its_calls_at_that_level_and_above(
    tmp_path: Path, env: dict[str, str]
) -> None:
    logged: list[types.LoggingMessageNotificationParams] = []
    told: list[str] = []
    the_line = anyio.Event()

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params)
        if "fetched page 4" in str(params.data):
            the_line.set()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        told.append(message or "")

    with http_server(
        tmp_path, env, options=["--no-token"], module="tests.support.progress_tools", within=60
    ) as (url, _):
        async with connected(url, None, logging_callback=on_log) as client:
            with removed_in_2026():
                await client.set_logging_level("info")
            async with anyio.create_task_group() as group:
                group.start_soon(
                    lambda: client.call_tool(
                        "start_session", {"message": "go"}, progress_callback=on_progress
                    )
                )
                await the_line.wait()
                group.cancel_scope.cancel()
    # the call's start and its percent came first, as progress, and as no log message
    assert any("crawl" in line and "started" in line for line in told)
    assert any('"percent": 40' in line for line in told)
    assert [(entry.level, entry.logger) for entry in logged] == [("info", "agentos")]
    assert str(logged[0].data).startswith("crawl (") and "fetched page 4" in str(logged[0].data)


async def test_a_client_reads_its_sessions_as_resources_and_hears_when_one_changes(
    tmp_path: Path, env: dict[str, str]
) -> None:
    updated: list[str] = []
    changed = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(message.params.uri)
            changed.set()

    with http_server(tmp_path, env, options=["--no-token"], within=60) as (url, _):
        async with connected(url, None, message_handler=on_message) as client:
            info = client.initialize_result
            assert info is not None and info.capabilities.resources is not None
            assert info.capabilities.resources.subscribe is True
            started = structured(await client.call_tool("start_session", {"message": "hi"}))
            uri = f"agentos://sessions/{started['session_id']}"
            listed = (await client.list_resources()).resources
            assert [(r.uri, r.mime_type) for r in listed] == [(uri, "application/json")]
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == [TEMPLATE]
            read = (await client.read_resource(uri)).contents
            assert len(read) == 1 and isinstance(read[0], types.TextResourceContents)
            assert json.loads(read[0].text) == started
            with removed_in_2026():
                await client.subscribe_resource(uri)
                await client.subscribe_resource(uri)  # once is enough: a second changes nothing
            await client.call_tool(
                "post", {"session_id": started["session_id"], "message": "again"}
            )
            await changed.wait()
            assert set(updated) == {uri}
            with removed_in_2026():
                await client.unsubscribe_resource(uri)
            for unknown in ("test://watched-resource", "agentos://sessions/nobodys"):
                with pytest.raises(MCPError, match="no resource") as raised, removed_in_2026():
                    await client.subscribe_resource(unknown)
                assert TEMPLATE in str(raised.value)
        async with connected(url, None) as stranger:
            assert (await stranger.list_resources()).resources == []
            with pytest.raises(MCPError, match="no resource"):
                await stranger.read_resource(uri)


def sse_events(text: str) -> list[dict[str, str]]:
    """The events of an SSE body: each one's fields (``id``, ``retry``, ``data``)."""
    events = []
    for block in text.replace("\r\n", "\n").strip().split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
        events.append(fields)
    return events


async def test_a_stream_starts_with_a_priming_event_and_resumes_after_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """A client of protocol 2025-11-25 gets an event id and a retry interval before
    anything else; one that lost the stream after it gets the rest with ``Last-Event-ID``."""
    with http_server(tmp_path, env, options=["--no-token"], within=60) as (url, _):
        async with httpx2.AsyncClient(timeout=30) as http:
            hello = await http.post(url, headers=ACCEPT, json=INITIALIZE)
            headers = {
                **ACCEPT,
                "mcp-session-id": hello.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            await http.post(
                url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
            )
            listed = await http.post(
                url, headers=headers, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
            )
            priming, answer = sse_events(listed.text)
            assert priming["data"] == "" and priming["retry"] == "1000" and priming["id"]
            assert json.loads(answer["data"])["id"] == 2
            replayed: list[dict[str, str]] = []
            resume = {**headers, "Accept": "text/event-stream", "Last-Event-ID": priming["id"]}
            async with http.stream("GET", url, headers=resume) as stream:
                assert stream.status_code == 200
                block: list[str] = []
                async for line in stream.aiter_lines():
                    if line:
                        block.append(line)
                        continue
                    replayed += sse_events("\n".join(block))
                    block = []
                    if any(event.get("id") == answer["id"] for event in replayed):
                        break
            resent = next(event for event in replayed if event.get("id") == answer["id"])
            assert json.loads(resent["data"]) == json.loads(answer["data"])
            unknown = await http.get(url, headers={**resume, "Last-Event-ID": "forgotten-1"})
            assert (unknown.status_code, unknown.text) == (200, "")  # an id it forgot: nothing
