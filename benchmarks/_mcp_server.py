"""The MCP server the MCP benchmark talks to (the mcp SDK, stdio): an echo, and a tool
that reports progress, then waits until it is cancelled or released, and remembers
when (``time.monotonic``, one clock for every process on Linux) it saw its cancel."""

from __future__ import annotations

import time

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context

app = MCPServer("agentos-bench")
released = anyio.Event()
cancelled_at: list[float] = []
seen = anyio.Event()


@app.tool()
async def echo(text: str) -> str:
    """Say the text back."""
    return text


@app.tool()
async def slow(steps: int, ctx: Context) -> str:
    """Report ``steps`` progress notifications, then wait for ``release`` or a cancel."""
    global seen
    try:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps)
        await released.wait()
    except anyio.get_cancelled_exc_class():
        cancelled_at.append(time.monotonic())
        seen.set()
        seen = anyio.Event()
        raise
    return f"{steps} steps"


@app.tool()
async def release() -> str:
    """Let every waiting ``slow`` call finish (and later ones at once)."""
    released.set()
    return "released"


@app.tool()
async def cancel_times(count: int) -> list[float]:
    """When the ``slow`` calls saw their cancels, once ``count`` have."""
    while len(cancelled_at) < count:
        await seen.wait()
    return cancelled_at[:count]


if __name__ == "__main__":
    app.run()
