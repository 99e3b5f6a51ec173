"""agentos as an MCP server (issue 26): ``agentos mcp``, driven by the ``mcp`` SDK's own client.

Over stdio a client starts a session, hears its calls' progress while the turn lasts and
cancels it, which stops the calls that turn started. Over streamable HTTP on loopback a
client must show the token, and sees only the sessions it started.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp import StdioServerParameters
from mcp import stdio_client

from tests.support import ROOT
from tests.ui.mcp.running import agent_file
from tests.ui.mcp.running import connected
from tests.ui.mcp.running import http_server
from tests.ui.mcp.running import structured

pytestmark = pytest.mark.anyio


async def test_a_client_starts_a_session_hears_its_calls_and_cancels_them(
    tmp_path: Path, env: dict[str, str]
) -> None:
    mark = tmp_path / "cancelled.txt"
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "agentos.cli",
            "mcp",
            "--agent",
            agent_file(tmp_path, "tests.support.slow_tools"),
        ],
        env={**env, "AGENTOS_TEST_MARK": str(mark)},
        cwd=ROOT,
    )
    heard: list[str] = []
    three_steps = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append(message or "")
        if sum("progressed" in line for line in heard) == 3:
            three_steps.set()

    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {
                "start_session",
                "post",
                "get_tool_call_status",
                "list_running_tool_calls",
                "cancel_tool_call",
                "answer",
            }
            async with anyio.create_task_group() as group:
                group.start_soon(
                    lambda: client.call_tool(
                        "start_session", {"message": "go"}, progress_callback=on_progress
                    )
                )
                await three_steps.wait()
                group.cancel_scope.cancel()  # the SDK sends notifications/cancelled
            session_id = heard[0].split()[1].rstrip(":")
            assert heard[0] == f"session {session_id}: posted"
            assert any("slow_steps" in line and "started" in line for line in heard)
            call_id = next(line for line in heard if "started" in line).split("(")[1].split(")")[0]
            status = structured(
                await client.call_tool(
                    "get_tool_call_status",
                    {
                        "session_id": session_id,
                        "tool_call_id": call_id,
                        "wait_for_completion": True,
                        "timeout_seconds": 30,
                    },
                )
            )
            assert status["status"] == "cancelled"
            assert [p["payload"] for p in status["progress"] if p["kind"] == "partial"] == [
                {"step": 0},
                {"step": 1},
                {"step": 2},
            ]
            running = structured(await client.call_tool("list_running_tool_calls", {}))
            assert running["tool_calls"] == []
            unknown = await client.call_tool(
                "post", {"session_id": "someone-elses", "message": "hi"}
            )
            assert unknown.is_error and "no session" in str(unknown.content)
    assert mark.read_text() == "cancelled"  # the tool itself was cancelled


async def test_over_http_a_client_needs_the_token_and_follows_up_from_a_new_connection(
    tmp_path: Path, env: dict[str, str]
) -> None:
    chosen = {**env, "AGENTOS_MCP_TOKEN": "sesame-" + "x" * 20}
    with http_server(tmp_path, chosen, within=60) as (url, token):
        assert token == chosen["AGENTOS_MCP_TOKEN"]
        async with httpx2.AsyncClient() as http:
            initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
            bare = await http.post(url, json=initialize)
            assert bare.status_code == 401
            wrong = await http.post(url, json=initialize, headers={"Authorization": "Bearer no"})
            assert wrong.status_code == 401
            elsewhere = await http.post(
                url,
                json=initialize,
                headers={"Authorization": f"Bearer {token}", "Origin": "http://evil.example"},
            )
            assert elsewhere.status_code == 403  # another page's request, with the token
        async with connected(url, token) as first:
            started = structured(await first.call_tool("start_session", {"message": "hello"}))
            assert started["status"] == "idle" and started["running_calls"] == []
            assert started["answer"].splitlines() == ["count: 3", "shout: EXAMPLE"]
            session_id = started["session_id"]
            again = structured(
                await first.call_tool("post", {"session_id": session_id, "message": "again"})
            )
            assert again["session_id"] == session_id
            empty = await first.call_tool("post", {"session_id": session_id, "message": " "})
            assert empty.is_error and "must not be empty" in str(empty.content)
            listed = structured(await first.call_tool("list_running_tool_calls", {}))
            assert listed == {"tool_calls": []}
        async with connected(url, token) as second:  # a one-shot client, back again
            later = structured(
                await second.call_tool("post", {"session_id": session_id, "message": "later"})
            )
            assert later["session_id"] == session_id
            answer = await second.call_tool(
                "get_tool_call_status", {"session_id": session_id, "tool_call_id": "x"}
            )
            said = json.dumps([c.model_dump() for c in answer.content])
            assert answer.is_error and "no session" not in said
            unknown = await second.call_tool(
                "get_tool_call_status", {"session_id": "nope", "tool_call_id": "x"}
            )
            assert unknown.is_error and "no session" in str(unknown.content)
            nobody = await second.call_tool("start_session", {"message": "hi", "agent": "nobody"})
            assert nobody.is_error and "worker" in str(nobody.content)


async def test_over_http_the_server_is_quiet_per_client(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Forty clients come and go while nobody reads the server's stderr: it says nothing
    of them (a parent that never reads the pipe would otherwise wedge it, 400 bytes a
    client), and answers the last one as the first."""
    said: list[str] = []
    with http_server(tmp_path, env, said) as (url, token), anyio.fail_after(120):
        for _ in range(40):
            async with connected(url, token) as client:
                listed = structured(await client.call_tool("list_running_tool_calls", {}))
                assert listed == {"tool_calls": []}
    assert [line for line in said if line.strip()] == ["error: terminated (SIGTERM)"]
