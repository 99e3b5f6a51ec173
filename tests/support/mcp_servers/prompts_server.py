"""A real MCP server with prompts, written with the ``mcp`` SDK, for the tests of a server's
prompts as tools (stdio).

Prompts: ``greet`` (``name`` required, ``mood`` not: one user message); ``show`` (a user
text, an assistant text, an image, embedded resources: a text, a text blob, a text blob that
is not UTF-8; and a link to the resource ``note://greeting``); ``broken`` (the server's
error). ``PROMPTS=none`` starts with none.
Tools: ``add_prompt`` (adds a prompt called ``name`` and says the list changed) and
``drop_prompt`` (removes one and says so); ``greet_later`` (adds the resource and says the
list changed). Resources: ``note://greeting`` (none with ``RESOURCES=none``).
"""

from __future__ import annotations

import base64
import os

from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.prompts.base import AssistantMessage
from mcp.server.mcpserver.prompts.base import Message
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp.types import BlobResourceContents
from mcp.types import EmbeddedResource
from mcp.types import ImageContent
from mcp.types import ResourceLink
from mcp.types import TextResourceContents

app = MCPServer("agentos-test-prompts")
PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()


def greet(name: str, mood: str = "calm") -> str:
    """Greet someone."""
    return f"Say hello to {name}, in a {mood} voice."


def show() -> list[Message]:
    """Every kind of message a prompt can hold."""
    note = TextResourceContents(uri="note://rules", mime_type="text/plain", text="be brief")
    text = base64.b64encode(b"be kind").decode()
    blob = BlobResourceContents(uri="note://kind", mime_type="text/plain", blob=text)
    latin = base64.b64encode(b"caf\xe9").decode()
    bad = BlobResourceContents(uri="note://latin", mime_type="text/plain", blob=latin)
    link = ResourceLink(type="resource_link", uri="note://greeting", name="greeting")
    return [
        UserMessage("Look at these."),
        AssistantMessage("I will."),
        UserMessage(ImageContent(type="image", data=PIXEL, mime_type="image/png")),
        UserMessage(EmbeddedResource(type="resource", resource=note)),
        UserMessage(EmbeddedResource(type="resource", resource=blob)),
        UserMessage(EmbeddedResource(type="resource", resource=bad)),
        UserMessage(link),
    ]


def broken() -> str:
    """Always fails."""
    raise MCPError(-32603, "the broken prompt always fails")


if os.environ.get("PROMPTS") != "none":
    for made in (greet, show, broken):
        app.add_prompt(Prompt.from_function(made))


@app.tool()
async def add_prompt(name: str, ctx: Context) -> str:
    """Add a prompt called ``name`` (it says its name) and tell the client the list changed."""

    def said() -> str:
        return f"the {name} prompt"

    app.add_prompt(Prompt.from_function(said, name=name, description=f"The {name} prompt."))
    await ctx.session.send_prompt_list_changed()
    return f"added {name}"


@app.tool()
async def drop_prompt(name: str, ctx: Context) -> str:
    """Remove the prompt ``name`` and tell the client the list changed."""
    app.remove_prompt(name)
    await ctx.session.send_prompt_list_changed()
    return f"dropped {name}"


def greeting() -> str:
    """A short text."""
    return "hello from a resource"


def add_greeting() -> None:
    app.resource("note://greeting", name="greeting", mime_type="text/plain")(greeting)


if os.environ.get("RESOURCES") != "none":
    add_greeting()


@app.tool()
async def greet_later(ctx: Context) -> str:
    """Add the resource ``note://greeting`` and tell the client the list changed."""
    add_greeting()
    await ctx.session.send_resource_list_changed()
    return "added note://greeting"


if __name__ == "__main__":
    app.run()
