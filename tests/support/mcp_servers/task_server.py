"""A hand-written MCP server over streamable HTTP whose tool runs as a task (the 2025-11-25
tasks), kept in the process for whoever asks: a client that connects again (a host that
was killed and came back) finds its tasks.

Tools: ``research`` (task only: works until ``release``, then answers "research on TOPIC
done"); ``release`` (ends every task still working). ``app`` is the ASGI app.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import anyio

from tests.support.mcp_servers.jsonrpc import Refused
from tests.support.mcp_servers.jsonrpc import jsonrpc_app

OBJECT = {"type": "object"}
TOOLS = [
    {
        "name": "research",
        "description": "Research a topic (slowly, as a task).",
        "inputSchema": {**OBJECT, "properties": {"topic": {"type": "string"}}},
        "execution": {"taskSupport": "required"},
    },
    {"name": "release", "description": "End every task still working.", "inputSchema": OBJECT},
]


class Task:
    def __init__(self, topic: str) -> None:
        self.task_id = uuid.uuid4().hex
        self.topic = topic
        self.status = "working"
        self.message = f"reading about {topic}"
        self.created = time.time()
        self.ended = anyio.Event()

    def shown(self) -> dict[str, Any]:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.created))
        return {
            "taskId": self.task_id,
            "status": self.status,
            "statusMessage": self.message,
            "createdAt": stamp,
            "lastUpdatedAt": stamp,
            "ttl": 86_400_000,
            "pollInterval": 200,
        }

    def end(self, status: str) -> None:
        if self.status == "working":
            self.status, self.message = status, status
            self.ended.set()


TASKS: dict[str, Task] = {}


def text(words: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": words}], "isError": False}


async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": {
                "tools": {},
                "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
            },
            "serverInfo": {"name": "tasks", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call" and params["name"] == "research":
        task = Task(str((params.get("arguments") or {}).get("topic", "")))
        TASKS[task.task_id] = task
        return {"task": task.shown()}
    if method == "tools/call" and params["name"] == "release":
        for task in TASKS.values():
            task.end("completed")
        return text("released")
    if method == "tasks/get":
        return TASKS[params["taskId"]].shown()
    if method == "tasks/result":
        task = TASKS[params["taskId"]]
        await task.ended.wait()
        if task.status == "cancelled":
            return {**text("cancelled"), "isError": True}
        return text(f"research on {task.topic} done")
    if method == "tasks/cancel":
        TASKS[params["taskId"]].end("cancelled")
        return TASKS[params["taskId"]].shown()
    return {}


async def answered(path: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    try:
        return await answer(method, params)
    except KeyError as error:
        raise Refused(-32602, f"unknown task {error}") from None


app = jsonrpc_app(answered)
