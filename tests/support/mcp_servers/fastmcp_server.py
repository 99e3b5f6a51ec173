"""An MCP server written with fastmcp (4.1.6, run by ``make test``'s ``.venv/fastmcp``; stdio),
that asks its client back: ``ask_name`` (elicitation: a form with a name), ``summarize``
(sampling: the client's model summarizes ``text``)."""

from __future__ import annotations

from dataclasses import dataclass

from fastmcp import Context  # type: ignore[import-not-found]
from fastmcp import FastMCP
from mcp.types import SamplingMessage
from mcp.types import TextContent

app = FastMCP("fastmcp-asks")


@dataclass
class Person:
    name: str


@app.tool()  # type: ignore[untyped-decorator]
async def ask_name(ctx: Context) -> str:
    """Ask the person's name; say what they did."""
    answer = await ctx.elicit("What is your name?", Person)
    return f"accept {answer.data.name}" if answer.action == "accept" else str(answer.action)


@app.tool()  # type: ignore[untyped-decorator]
async def summarize(text: str, ctx: Context) -> str:
    """Ask the client's model to summarize ``text``; say what it answered."""
    words = TextContent(type="text", text=f"Summarize: {text}")
    asked = SamplingMessage(role="user", content=words)
    result = await ctx.session.create_message([asked], max_tokens=30)
    said = result.content.text if isinstance(result.content, TextContent) else result.content.type
    return f"{result.model} said: {said}"


if __name__ == "__main__":
    app.run()
