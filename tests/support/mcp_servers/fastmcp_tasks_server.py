"""An MCP server whose tools run as tasks of the ``io.modelcontextprotocol/tasks`` extension
(SEP-2663): fastmcp with fastmcp-tasks 4.1.4 (``make test``'s ``.venv/fastmcp-tasks``), its
task store in memory, over streamable HTTP on the listening socket whose file descriptor is
its argument (the test's, so the server is reachable before it has started); over stdio
without one.

Tools run as tasks: ``crunch`` (says "crunching TOPIC" and waits for ``release`` of its
topic, then answers "crunched TOPIC"; ``release`` says how many times it was started),
``hold`` (waits until cancelled; ``was_cancelled`` answers once it is), ``ask_name`` (asks
the person's name with the task's ``inputRequests``, then says what they did),
``summarize`` (asks the client's model the same way), ``fail`` (fails saying "no luck").
``double`` and ``ask_name_now`` (``ask_name`` with the call's own input round) run plainly.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from collections import defaultdict
from datetime import timedelta
from typing import Any

import mcp_types
import uvicorn
from fastmcp import Context  # type: ignore[import-not-found]
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError  # type: ignore[import-not-found]
from fastmcp.utilities.tasks import TaskConfig  # type: ignore[import-not-found]
from fastmcp_tasks import TasksExtension  # type: ignore[import-not-found]

app = FastMCP("fastmcp-tasks")
app.add_extension(TasksExtension(url="memory://"))
TASK = TaskConfig(mode="required", poll_interval=timedelta(milliseconds=200))
RELEASED: defaultdict[str, asyncio.Event] = defaultdict(asyncio.Event)
STARTED: defaultdict[str, int] = defaultdict(int)
CANCELLED = asyncio.Event()
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@app.tool(task=TASK)  # type: ignore[untyped-decorator]
async def crunch(topic: str, ctx: Context) -> str:
    """Crunch ``topic`` once released."""
    STARTED[topic] += 1
    await ctx.report_progress(1, 2, f"crunching {topic}")
    await RELEASED[topic].wait()
    return f"crunched {topic}"


@app.tool()  # type: ignore[untyped-decorator]
async def release(topic: str) -> str:
    """Let the ``crunch`` of ``topic`` finish; say how many times it was started."""
    RELEASED[topic].set()
    return f"released {topic}, started {STARTED[topic]} time(s)"


@app.tool(task=TASK)  # type: ignore[untyped-decorator]
async def hold(ctx: Context) -> str:
    """Say "holding" and wait until cancelled."""
    try:
        await ctx.report_progress(1, 2, "holding")
        await asyncio.Event().wait()
    finally:
        CANCELLED.set()
    return "never"


@app.tool()  # type: ignore[untyped-decorator]
async def was_cancelled() -> str:
    """Answer once a ``hold`` task was cancelled."""
    await CANCELLED.wait()
    return "the task was cancelled"


@app.tool(task=TASK)  # type: ignore[untyped-decorator]
async def ask_name(ctx: Context) -> Any:
    """Ask the person's name (the guard pattern: ask, and run again with the answer)."""
    return name_or_question(ctx)


@app.tool()  # type: ignore[untyped-decorator]
async def ask_name_now(ctx: Context) -> Any:
    """Ask the person's name, not as a task (the call's own ``input_required`` round)."""
    return name_or_question(ctx)


def name_or_question(ctx: Context) -> Any:
    answers = ctx.input_responses or {}
    if "name" in answers:
        answer = answers["name"]
        name = (getattr(answer, "content", None) or {}).get("name")
        return f"{answer.action} {name}" if name else str(answer.action)
    params = mcp_types.ElicitRequestFormParams(
        message="What is your name?", requested_schema=NAME_FORM
    )
    return mcp_types.InputRequiredResult(
        input_requests={"name": mcp_types.ElicitRequest(params=params)}
    )


@app.tool(task=TASK)  # type: ignore[untyped-decorator]
async def summarize(text: str, ctx: Context) -> Any:
    """Ask the client's model to summarize ``text`` (the task's ``inputRequests``); say what
    it answered."""
    answers = ctx.input_responses or {}
    if "summary" in answers:
        answer = answers["summary"]
        said = getattr(answer.content, "text", answer.content)
        return f"{answer.model} said: {said}"
    words = mcp_types.TextContent(type="text", text=f"Summarize: {text}")
    asked = mcp_types.SamplingMessage(role="user", content=words)
    params = mcp_types.CreateMessageRequestParams(messages=[asked], max_tokens=30)
    return mcp_types.InputRequiredResult(
        input_requests={"summary": mcp_types.CreateMessageRequest(params=params)}
    )


@app.tool(task=TASK)  # type: ignore[untyped-decorator]
async def fail() -> str:
    """Fail."""
    raise ToolError("no luck")


@app.tool()  # type: ignore[untyped-decorator]
def double(number: int) -> int:
    """Twice ``number``, at once."""
    return number * 2


if __name__ == "__main__":
    if len(sys.argv) < 2:
        app.run(show_banner=False)  # stdio
    else:
        listening = socket.socket(fileno=int(sys.argv[1]))
        config = uvicorn.Config(app.http_app(), log_level="warning", timeout_graceful_shutdown=1)
        asyncio.run(uvicorn.Server(config).serve(sockets=[listening]))
