"""A hand-written MCP server over streamable HTTP (the 2026-07-28 protocol) that declares the
``io.modelcontextprotocol/tasks`` extension and answers about its tasks badly, following the
ext-tasks v2 schema otherwise. ``app`` serves it at ``/mcp``, and at ``/plain`` the same
server declaring nothing (it then takes the ``initialize`` handshake and runs tools plainly).

Its tools all run as tasks at ``/mcp``: ``vanish`` (a task the server then does not know),
``garble`` (a task whose status is no status), ``flop`` (a task that fails, saying why),
``reask`` (a task that asks under the key ``q``, asks it once more after the answer, as
the server takes it, then asks something else under the same key).
``REQUESTS`` keeps every request's method and params, for the tests to read.
"""

from __future__ import annotations

from typing import Any

from tests.support.mcp_servers.jsonrpc import Refused
from tests.support.mcp_servers.jsonrpc import jsonrpc_app

TASKS = "io.modelcontextprotocol/tasks"
OBJECT = {"type": "object"}
TOOLS = [{"name": name, "inputSchema": OBJECT} for name in ("vanish", "garble", "flop", "reask")]
STAMP = "2026-12-06T00:00:00Z"
REQUESTS: list[tuple[str, str, dict[str, Any]]] = []
"""(path, method, params) of every request, in order."""


def task(task_id: str, status: str = "working", **more: Any) -> dict[str, Any]:
    shown = {"taskId": task_id, "status": status, "createdAt": STAMP, "lastUpdatedAt": STAMP}
    return {**shown, "ttlMs": None, "pollIntervalMs": 200, **more}


def elicit(message: str) -> dict[str, Any]:
    form = {"type": "object", "properties": {}}
    return {"method": "elicitation/create", "params": {"message": message, "requestedSchema": form}}


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
        if task_id == "t-reask":
            since = [method for _, method, _ in REQUESTS]
            since = since[since.index("tasks/update") :] if "tasks/update" in since else []
            asks = {"q": elicit("Which day?" if since.count("tasks/get") > 1 else "Which city?")}
            return task(task_id, "input_required", inputRequests=asks)
        if task_id == "t-flop":
            return task(task_id, "failed", error={"code": -32603, "message": "the disk is full"})
        raise Refused(-32602, f"Task {task_id} not found")
    return {}


async def answered(path: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    REQUESTS.append((path, method, params))
    return {"resultType": "complete", **answer(path, method, params)}


app = jsonrpc_app(answered, ["/mcp", "/plain"])
