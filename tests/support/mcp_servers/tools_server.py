"""A real MCP server, written with the ``mcp`` SDK, for the tests: stdio by default, streamable
HTTP with ``--http PORT``.

Tools: ``echo``; ``slow`` (reports progress, then waits for ``release`` or its cancel, and
notes when it saw the cancel); ``cancels_seen`` (waits until that many cancels were seen);
``cancel_times`` (when they were, on ``time.monotonic``, one clock for every process on
Linux: the MCP benchmark measures how fast a cancel arrives); ``boom`` (a tool error);
``die`` (exits with code 3); ``picture`` (an image); ``grow`` (adds a tool and says the list
changed); ``shrink`` (removes one and says so); ``bad_schema`` (listed with a schema that is
not one, when ``BAD_SCHEMA=1``); and what a server asks of its client: ``ask_city``
(elicitation), ``visible_roots`` (roots/list), ``answered_at`` (when its question's answer
arrived), ``chatter`` (log notifications), ``client`` (what the client said of itself),
``summarize`` (sampling: asks the client's model). Resources: ``note://greeting`` (text) and
``note://pixel`` (an image); ``linked`` answers with a link to the first.
"""

from __future__ import annotations

import base64
import os
import sys
import time

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent
from mcp.types import ResourceLink
from mcp.types import SamplingMessage
from mcp.types import TextContent
from pydantic import BaseModel

app = MCPServer("agentos-test-tools")
if "PID_FILE" in os.environ:
    with open(os.environ["PID_FILE"], "w") as pid_file:
        pid_file.write(str(os.getpid()))
released = anyio.Event()
cancelled_at: list[float] = []
cancel_seen = anyio.Event()
PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()


@app.tool()
async def echo(text: str) -> str:
    """Say the text back."""
    return text


@app.tool()
async def slow(steps: int, ctx: Context) -> str:
    """Report ``steps`` progress notifications, then wait for ``release`` (or a cancel)."""
    global cancel_seen
    try:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step} of {steps}")
        await released.wait()
    except anyio.get_cancelled_exc_class():
        cancelled_at.append(time.monotonic())
        cancel_seen.set()
        cancel_seen = anyio.Event()
        raise
    return f"finished {steps} steps"


@app.tool()
async def release() -> str:
    """Let every waiting ``slow`` call finish."""
    released.set()
    return "released"


@app.tool()
async def cancels_seen(at_least: int) -> int:
    """How many ``slow`` calls saw their cancel, once at least ``at_least`` did."""
    with anyio.fail_after(30):
        while len(cancelled_at) < at_least:
            await cancel_seen.wait()
    return len(cancelled_at)


@app.tool()
async def cancel_times(count: int) -> list[float]:
    """When the ``slow`` calls saw their cancels, once ``count`` have."""
    while len(cancelled_at) < count:
        await cancel_seen.wait()
    return cancelled_at[:count]


@app.tool()
async def boom() -> str:
    """Fail with a message."""
    raise ToolError("the boom tool always fails")


@app.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@app.tool()
def die() -> str:
    """Exit the server at once, with code 3."""
    os._exit(3)


@app.tool()
async def picture() -> list[TextContent | ImageContent]:
    """A caption and a one-pixel image."""
    return [
        TextContent(type="text", text="a tiny picture"),
        ImageContent(type="image", data=PIXEL, mime_type="image/png"),
    ]


@app.tool()
async def trace_context(ctx: Context) -> str:
    """The W3C ``traceparent`` the client sent in the request's ``_meta`` ('' if none)."""
    meta = ctx.request_context.meta or {}
    return str(meta.get("traceparent", ""))


@app.tool()
async def grow(ctx: Context) -> str:
    """Add the tool ``grown`` and tell the client the list changed."""

    async def grown() -> str:
        """A tool that appeared later."""
        return "grown"

    app.add_tool(grown, name="grown", description="A tool that appeared later.")
    await ctx.session.send_tool_list_changed()
    return "added grown"


@app.tool()
async def grow_as(name: str, ctx: Context) -> str:
    """Add a tool called ``name`` (it answers its name) and tell the client the list changed."""

    async def added() -> str:
        return name

    app.add_tool(added, name=name, description=f"The server's own {name}.")
    await ctx.session.send_tool_list_changed()
    return f"added {name}"


@app.tool()
async def shrink(name: str, ctx: Context) -> str:
    """Remove the tool ``name`` and tell the client the list changed."""
    app.remove_tool(name)
    await ctx.session.send_tool_list_changed()
    return f"removed {name}"


class City(BaseModel):
    city: str


@app.tool()
async def ask_city(ctx: Context) -> str:
    """Ask the person which city (elicitation); say what they did."""
    answer = await ctx.elicit("Which city?", City)
    return f"accept {answer.data.city}" if answer.action == "accept" else answer.action


@app.tool()
async def answered_at(ctx: Context) -> float:
    """Ask a question; say when (``time.monotonic``) the answer arrived."""
    await ctx.elicit("Ready?", City)
    return time.monotonic()


@app.tool()
async def visible_roots(ctx: Context) -> list[str]:
    """The roots the client offers (roots/list)."""
    listed = await ctx.session.list_roots()
    return [str(root.uri) for root in listed.roots]


@app.tool()
async def chatter(ctx: Context) -> str:
    """Send two log notifications."""
    await ctx.info("looking things up", logger_name="lookup")
    await ctx.warning({"left": 3})
    return "said"


@app.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Ask the client's model to summarize ``text`` (sampling); say what it answered."""
    asked = SamplingMessage(
        role="user", content=TextContent(type="text", text=f"Summarize: {text}")
    )
    try:
        answer = await ctx.session.create_message(
            [asked], max_tokens=50, system_prompt="Be brief.", related_request_id=ctx.request_id
        )
    except Exception as error:
        return f"refused: {error}"
    content = answer.content
    said = content.text if isinstance(content, TextContent) else content.type
    return f"{answer.model} said: {said} ({answer.stop_reason})"


@app.resource("note://greeting", name="greeting", mime_type="text/plain")
def greeting() -> str:
    """A short text."""
    return "hello from a resource"


@app.resource("note://pixel", name="pixel", mime_type="image/png")
def pixel() -> bytes:
    """A one-pixel image."""
    return base64.b64decode(PIXEL)


@app.tool()
async def linked() -> list[TextContent | ResourceLink]:
    """A text and a link to the greeting."""
    link = ResourceLink(type="resource_link", uri="note://greeting", name="greeting")
    return [TextContent(type="text", text="see the greeting"), link]


@app.tool()
async def client(ctx: Context) -> dict[str, object]:
    """What the client said of itself at initialize."""
    params = ctx.session.client_params
    assert params is not None
    capabilities = params.capabilities
    return {
        "name": params.client_info.name,
        "version": params.client_info.version,
        "elicitation": capabilities.elicitation is not None,
        "roots": capabilities.roots is not None,
        "sampling": capabilities.sampling is not None,
    }


if os.environ.get("BAD_SCHEMA") == "1":

    @app.tool()
    async def bad_schema() -> str:
        """Listed with a schema that is not a JSON schema."""
        return "never"

    listed = app._tool_manager.get_tool("bad_schema")
    assert listed is not None
    listed.parameters = {"type": "object", "properties": {"x": {"type": "no-such-type"}}}


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()
