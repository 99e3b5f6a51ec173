"""A server's resources as two tools the model can call, offered only when the server says
it has resources and lists some when its tools are listed: ``<server>_list_resources`` and
``<server>_read_resource`` (a resource link in a tool's result names the second). Each is an
agentos call like any other."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agentos._kernel.context import ToolContext
from agentos._kernel.tools import Tool, ToolFailure
from agentos._model.messages import CONTENT_RESULT
from agentos._toolsets.mcp.results import content_of
from agentos._toolsets.mcp.transport import said
from components import Json

LIST_PAGES = 100
"""At most this many pages of resources/list: a server that pages forever cannot hang us."""

Connected = Callable[[], Awaitable[Any]]
"""The server's live session (None: it cannot be reached)."""


def list_name(server: str) -> str:
    return f"{server}_list_resources"


def read_name(server: str) -> str:
    return f"{server}_read_resource"


async def lists_resources(session: Any, problems: list[str]) -> bool:
    """Whether the server lists resources now (a failing list: no, said in ``problems``)."""
    try:
        return bool((await session.list_resources()).resources)
    except Exception as error:
        problems.append(f"resources left out: resources/list failed: {said(error)}")
        return False


def resource_tools(server: str, connected: Connected) -> list[Tool[Any]]:
    """The two tools of ``server``'s resources."""

    async def list_resources(args: dict[str, Any], ctx: ToolContext) -> Json | ToolFailure:
        session = await connected()
        if session is None:
            return ToolFailure(f"MCP server {server!r} is not available")
        from mcp_types import PaginatedRequestParams

        found: list[Json] = []
        cursor: str | None = None
        for _ in range(LIST_PAGES):
            params = None if cursor is None else PaginatedRequestParams(cursor=cursor)
            page = await session.list_resources(params=params)
            found += [_listed(resource) for resource in page.resources]
            cursor = page.next_cursor
            if cursor is None:
                break
        return {"resources": found}

    async def read_resource(args: dict[str, Any], ctx: ToolContext) -> Json | ToolFailure:
        session = await connected()
        if session is None:
            return ToolFailure(f"MCP server {server!r} is not available")
        result = await session.read_resource(str(args["uri"]))
        blocks: list[Json] = [
            content_of({"type": "resource", "resource": part.model_dump(by_alias=True)})
            for part in result.contents
        ]
        return {"type": CONTENT_RESULT, "content": blocks}

    return [
        Tool.from_schema(
            list_resources,
            name=list_name(server),
            input_schema={"type": "object", "properties": {}, "additionalProperties": False},
            description=f"List the resources MCP server {server} offers (uri, name, type).",
            source=server,
        ),
        Tool.from_schema(
            read_resource,
            name=read_name(server),
            input_schema={
                "type": "object",
                "properties": {"uri": {"type": "string", "description": "The resource's URI."}},
                "required": ["uri"],
                "additionalProperties": False,
            },
            description=f"Read one resource of MCP server {server} by its URI.",
            source=server,
        ),
    ]


def _listed(resource: Any) -> Json:
    shown: dict[str, Json] = {"uri": str(resource.uri), "name": resource.name}
    for key, value in (
        ("title", resource.title),
        ("description", resource.description),
        ("mime_type", resource.mime_type),
    ):
        if value:
            shown[key] = value
    return shown
