"""The MCP Inspector's command line (``@modelcontextprotocol/inspector --cli``), a client
nobody here wrote, drives ``agentos mcp`` over HTTP, one process a request: it lists the
tools, starts a session, and a second run follows the session up."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.support.node import node_program
from tests.ui.mcp.running import http_server


def inspector(url: str, token: str | None, *arguments: str) -> dict[str, Any]:
    """One run of the Inspector's CLI against ``url``: its JSON answer."""
    header = [] if token is None else ["--header", f"Authorization: Bearer {token}"]
    argv = [*node_program("mcp-inspector"), "--cli", url, *header, *arguments]
    ran = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert ran.returncode == 0, ran.stderr
    answer: dict[str, Any] = json.loads(ran.stdout)
    return answer


def test_the_inspector_starts_a_session_and_a_second_run_follows_it_up(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with http_server(tmp_path, env) as (url, token):
        tools = inspector(url, token, "--method", "tools/list")
        names = {tool["name"] for tool in tools["tools"]}
        assert {"start_session", "post", "get_tool_call_status"} <= names
        call = ["--method", "tools/call", "--tool-name"]
        started = inspector(url, token, *call, "start_session", "--tool-arg", "message=hello")
        session_id = started["structuredContent"]["session_id"]
        again = inspector(
            url,
            token,
            *call,
            "post",
            "--tool-arg",
            f"session_id={session_id}",
            "--tool-arg",
            "message=and again",
        )
    assert again["isError"] is False
    assert again["structuredContent"]["session_id"] == session_id
