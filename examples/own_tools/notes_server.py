"""An MCP server with one slow tool that reports progress (the mcp SDK, stdio)."""

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context

app = MCPServer("notes")


@app.tool()
async def summarize(topic: str, ctx: Context) -> str:
    """Summarize the notes on a topic (slowly)."""
    for step in range(1, 4):
        await ctx.report_progress(step, 3, f"reading part {step} of 3")
        await anyio.sleep(0.1)
    return f"three notes on {topic}"


if __name__ == "__main__":
    app.run()
