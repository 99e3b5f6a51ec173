"""An MCP server whose tools run as tasks of the ``io.modelcontextprotocol/tasks`` extension
(SEP-2663): fastmcp with fastmcp-tasks 4.1.4 (``make test``'s ``.venv/fastmcp-tasks``), its
task store in memory, over streamable HTTP on the listening socket whose file descriptor is
its argument (the test's, so the server is reachable before it has started).

Tools run as tasks: ``crunch`` (says "crunching TOPIC" and waits for ``release``, then
answers "crunched TOPIC"), ``hold`` (waits until cancelled; ``was_cancelled`` answers once
it is), ``ask_name`` (asks the person's name with the task's ``inputRequests``, then says
what they did), ``fail`` (fails saying "no luck"). ``double`` runs plainly.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from datetime import timedelta
from typing import Any

import mcp_types
import uvicorn
from fastmcp import Context, FastMCP  # type: ignore[import-not-found]
from fastmcp.exceptions import ToolError  # type: ignore[import-not-found]
from fastmcp.utilities.tasks import TaskConfig  # type: ignore[import-not-found]
from fastmcp_tasks import TasksExtension  # type: ignore[import-not-found]

app = FastMCP("fastmcp-tasks")
app.add_extension(TasksExtension(url="memory://"))
TASK = TaskConfig(mode="required", poll_interval=timedelta(milliseconds=200))
RELEASED = asyncio.Event()
CANCELLED = asyncio.Event()
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@app.tool(task=TASK)  # type: ignore[untyped-decorator]
async def crunch(topic: str, ctx: Context) -> str:
    """Crunch ``topic`` once released."""
    await ctx.report_progress(1, 2, f"crunching {topic}")
    await RELEASED.wait()
    return f"crunched {topic}"


@app.tool()  # type: ignore[untyped-decorator]
async def release() -> str:
    """Let every ``crunch`` finish."""
    RELEASED.set()
    return "released"


@app.tool(task=TASK)  # type: ignore[untyped-decorator]
async def hold() -> str:
    """Wait until cancelled."""
    try:
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
async def fail() -> str:
    """Fail."""
    raise ToolError("no luck")


@app.tool()  # type: ignore[untyped-decorator]
def double(number: int) -> int:
    """Twice ``number``, at once."""
    return number * 2


if __name__ == "__main__":
    listening = socket.socket(fileno=int(sys.argv[1]))
    config = uvicorn.Config(app.http_app(), log_level="warning", timeout_graceful_shutdown=1)
    asyncio.run(uvicorn.Server(config).serve(sockets=[listening]))
