"""A server's prompts as two tools the model can call, offered only when the server says it
has prompts and lists some when its tools are listed: ``<server>_list_prompts`` (names,
descriptions, arguments) and ``<server>_get_prompt`` (a prompt's messages, its arguments
filled in, as text, images and documents the model reads). Each is an agentos call like
any other."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentos._kernel.tools import Tool
from agentos._kernel.tools import ToolFailure
from agentos._model.messages import CONTENT_RESULT
from agentos._toolsets.mcp.listing import Link
from agentos._toolsets.mcp.listing import every_page
from agentos._toolsets.mcp.listing import list_tool
from agentos._toolsets.mcp.listing import present
from agentos._toolsets.mcp.listing import session_tool
from agentos._toolsets.mcp.results import content_of
from agentos._toolsets.mcp.transport import connection_lost
from agentos._toolsets.mcp.transport import leaf_error
from agentos._toolsets.mcp.transport import said
from components import Json


def prompt_tools(server: str, link: Link) -> list[Tool[Any]]:
    """The two tools of ``server``'s prompts."""

    async def get_prompt(session: Any, args: dict[str, Any]) -> Json | ToolFailure:
        name, given = str(args["name"]), dict(args.get("arguments") or {})
        whose = f"prompt {name!r} of MCP server {server!r}"
        try:
            found = await every_page(session.list_prompts, "prompts")
        except Exception as error:
            if connection_lost(leaf_error(error)):
                raise
            return ToolFailure(f"{whose}: prompts/list failed: {said(error)}")
        wrong = _misfit(server, whose, name, given, found)
        if wrong is not None:
            return ToolFailure(wrong)
        try:
            result = await session.get_prompt(name, given)
        except Exception as error:
            if connection_lost(leaf_error(error)):
                raise
            return ToolFailure(f"{whose}: {said(error)}")
        return _read(result, link.reader())

    return [
        list_tool(
            server,
            link,
            "prompts",
            _listed,
            f"List the prompts MCP server {server} offers: each one's name, description and "
            "arguments (which are required).",
        ),
        session_tool(
            server,
            link,
            get_prompt,
            name=f"{server}_get_prompt",
            description=(
                f"Get one prompt of MCP server {server} by name, its arguments filled in: "
                "the messages it consists of, each after its role."
            ),
            properties={
                "name": {"type": "string", "description": "The prompt's name."},
                "arguments": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": "The prompt's arguments by name, each a string.",
                },
            },
            required=["name"],
        ),
    ]


def _listed(prompt: Any) -> Json:
    arguments: list[Json] = [
        {"name": argument.name, "required": bool(argument.required)}
        | present([("title", argument.title), ("description", argument.description)])
        for argument in prompt.arguments or ()
    ]
    return {"name": prompt.name} | present(
        [
            ("title", prompt.title),
            ("description", prompt.description),
            ("arguments", arguments),
        ]
    )


def _misfit(
    server: str, whose: str, name: str, given: dict[str, Any], listed: Sequence[Any]
) -> str | None:
    """What is wrong with asking for the prompt ``name`` with ``given`` (None: nothing)."""
    prompt = next((p for p in listed if p.name == name), None)
    if prompt is None:
        has = ", ".join(repr(p.name) for p in listed) or "none"
        return f"MCP server {server!r} has no prompt {name!r} (it has: {has})"
    takes = [argument.name for argument in prompt.arguments or ()]
    needed = [argument.name for argument in prompt.arguments or () if argument.required]
    missing = [argument for argument in needed if argument not in given]
    if missing:
        return f"{whose} needs the argument {_names(missing)}"
    unknown = [argument for argument in given if argument not in takes]
    if unknown:
        return f"{whose} takes no argument {_names(unknown)} (it takes: {_names(takes) or 'none'})"
    return None


def _names(names: Sequence[str]) -> str:
    return ", ".join(repr(name) for name in names)


def _read(result: Any, reader: str | None) -> Json:
    """A prompt's messages as the call's result: each after its role; text alone when
    every message is text, else typed blocks (images, documents) beside the text."""
    blocks: list[dict[str, Any]] = []
    if result.description:
        blocks.append({"type": "text", "text": f"({result.description})"})
    for message in result.messages:
        block = content_of(message.content.model_dump(by_alias=True, mode="json"), reader)
        if block["type"] == "text":
            blocks.append({"type": "text", "text": f"[{message.role}] {block['text']}"})
        else:
            blocks += [{"type": "text", "text": f"[{message.role}]"}, block]
    if all(block["type"] == "text" for block in blocks):
        return "\n\n".join(str(block["text"]) for block in blocks)
    content: list[Json] = list(blocks)
    return {"type": CONTENT_RESULT, "content": content}
