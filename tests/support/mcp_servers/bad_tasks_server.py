"""A hand-written MCP server over streamable HTTP (the 2026-07-28 protocol) that declares the
``io.modelcontextprotocol/tasks`` extension and answers about its tasks badly, following the
ext-tasks v2 schema otherwise. ``app`` serves it at ``/mcp``, and at ``/plain`` the same
server declaring nothing (it then takes the ``initialize`` handshake and runs tools plainly).

Its tools all run as tasks at ``/mcp``: ``vanish`` (a task the server then does not know),
``garble`` (a task whose status is no status), ``flop`` (a task that fails, saying why).
``REQUESTS`` keeps every request's method and params, for the tests to read.
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

TASKS = "io.modelcontextprotocol/tasks"
OBJECT = {"type": "object"}
TOOLS = [{"name": name, "inputSchema": OBJECT} for name in ("vanish", "garble", "flop")]
STAMP = "2026-12-06T00:00:00Z"
REQUESTS: list[tuple[str, str, dict[str, Any]]] = []
"""(path, method, params) of every request, in order."""


class Refused(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def task(task_id: str, status: str = "working", **more: Any) -> dict[str, Any]:
    shown = {"taskId": task_id, "status": status, "createdAt": STAMP, "lastUpdatedAt": STAMP}
    return {**shown, "ttlMs": None, "pollIntervalMs": 200, **more}


def answer(path: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    declares = path == "/mcp"
    if method == "server/discover":
        extensions: dict[str, Any] = {TASKS: {}} if declares else {}
        capabilities = {"tools": {}, "extensions": extensions}
        listing = {"ttlMs": 0, "cacheScope": "private"}
        return {"supportedVersions": ["2026-07-28"], "capabilities": capabilities, **listing}
    if method == "initialize":
        info = {"name": "plain", "version": "1"}
        return {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": info}
    if method == "tools/list":
        return {"tools": TOOLS, "ttlMs": 0, "cacheScope": "private"}
    if method == "tools/call" and not declares:
        return {"content": [{"type": "text", "text": f"{params['name']} ran plainly"}]}
    if method == "tools/call":
        return {**task(f"t-{params['name']}"), "resultType": "task"}
    if method == "tasks/get":
        task_id = params["taskId"]
        if task_id == "t-garble":
            return task(task_id, "exploded")
        if task_id == "t-flop":
            return task(task_id, "failed", error={"code": -32603, "message": "the disk is full"})
        raise Refused(-32602, f"Task {task_id} not found")
    return {}


async def mcp(request: Request) -> Response:
    if request.method != "POST":
        return Response(status_code=405)
    message = await request.json()
    if "id" not in message:
        return Response(status_code=202)
    params = message.get("params") or {}
    REQUESTS.append((request.url.path, message["method"], params))
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
    try:
        reply["result"] = {
            "resultType": "complete",
            **answer(request.url.path, message["method"], params),
        }
    except Refused as refused:
        reply["error"] = {"code": refused.code, "message": refused.message}
    return JSONResponse(reply)


methods = ["GET", "POST", "DELETE"]
app = Starlette(routes=[Route("/mcp", mcp, methods=methods), Route("/plain", mcp, methods=methods)])
