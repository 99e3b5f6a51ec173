"""A server's resources as two tools the model can call, offered only when the server says
it has resources and lists some when its tools are listed: ``<server>_list_resources`` and
``<server>_read_resource`` (a resource link in a tool's result names the second). Each is an
agentos call like any other."""

from __future__ import annotations

from typing import Any

from agentos._kernel.tools import Tool
from agentos._kernel.tools import ToolFailure
from agentos._model.messages import CONTENT_RESULT
from agentos._toolsets.mcp.listing import Link
from agentos._toolsets.mcp.listing import list_tool
from agentos._toolsets.mcp.listing import present
from agentos._toolsets.mcp.listing import session_tool
from agentos._toolsets.mcp.results import content_of
from components import Json


def read_name(server: str) -> str:
    return f"{server}_read_resource"


def resource_tools(server: str, link: Link) -> list[Tool[Any]]:
    """The two tools of ``server``'s resources."""

    async def read_resource(session: Any, args: dict[str, Any]) -> Json | ToolFailure:
        result = await session.read_resource(str(args["uri"]))
        blocks: list[Json] = [
            content_of({"type": "resource", "resource": part.model_dump(by_alias=True)})
            for part in result.contents
        ]
        return {"type": CONTENT_RESULT, "content": blocks}

    return [
        list_tool(
            server,
            link,
            "resources",
            _listed,
            f"List the resources MCP server {server} offers (uri, name, type).",
        ),
        session_tool(
            server,
            link,
            read_resource,
            name=read_name(server),
            description=f"Read one resource of MCP server {server} by its URI.",
            properties={"uri": {"type": "string", "description": "The resource's URI."}},
            required=["uri"],
        ),
    ]


def _listed(resource: Any) -> Json:
    return {"uri": str(resource.uri), "name": resource.name} | present(
        [
            ("title", resource.title),
            ("description", resource.description),
            ("mime_type", resource.mime_type),
        ]
    )
