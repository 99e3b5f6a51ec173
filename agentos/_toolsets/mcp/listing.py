"""What the tools of a server's resources and prompts share: how they reach the server,
reading every page of a list, whether a list has anything in it, a listed entry's fields
without the empty ones, and a tool that needs the server's live session."""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentos._kernel.context import ToolContext
from agentos._kernel.tools import Tool
from agentos._kernel.tools import ToolFailure
from agentos._toolsets.mcp.transport import said
from components import Json

LIST_PAGES = 100
"""At most this many pages of a list: a server that pages forever cannot hang us."""


Failed = Callable[[Exception], Awaitable[ToolFailure]]
"""A call's failure from what it raised; a lost connection is reached again."""
Reached = tuple[Any, Failed]
"""A live session, and how a call's failure on that connection is told."""


@dataclass(frozen=True)
class Link:
    """How the tools of a server's resources and prompts reach it, as its own tools do."""

    reach: Callable[[], Awaitable[Reached | None]]
    """The live session, starting the server again if it died (None: it cannot be)."""
    reader: Callable[[], str | None]
    """The tool that reads the server's resources now (None: the agent has none)."""


Lister = Callable[..., Awaitable[Any]]
"""One of the session's list requests (``list_tools``, ``list_prompts`` ...): takes
``params=`` (the cursor) and answers a page."""
WithSession = Callable[[Any, dict[str, Any]], Awaitable["Json | ToolFailure"]]
"""A tool's work given the live session and its input."""


async def every_page(lister: Lister, field: str) -> list[Any]:
    """The entries of every page of a list (``field`` of each page), at most ``LIST_PAGES``."""
    from mcp_types import PaginatedRequestParams

    found: list[Any] = []
    cursor: str | None = None
    for _ in range(LIST_PAGES):
        params = None if cursor is None else PaginatedRequestParams(cursor=cursor)
        page = await lister(params=params)
        found.extend(getattr(page, field))
        cursor = page.next_cursor
        if cursor is None:
            break
    return found


async def lists_some(lister: Lister, field: str, problems: list[str]) -> bool:
    """Whether the first page of a list has entries (a failing list: no, said in
    ``problems``): a server may say it has ``field`` and have none."""
    try:
        return bool(getattr(await lister(), field))
    except Exception as error:
        problems.append(f"{field} left out: {field}/list failed: {said(error)}")
        return False


def present(fields: Iterable[tuple[str, Any]]) -> dict[str, Json]:
    """The fields that have a value (a listing shows what the server said, no nulls)."""
    return {key: value for key, value in fields if value not in (None, "", [])}


def list_tool(
    server: str, link: Link, kind: str, shown: Callable[[Any], Json], description: str
) -> Tool[Any]:
    """``<server>_list_<kind>``: every page of the server's ``<kind>/list``, each entry
    ``shown``."""

    async def listed(session: Any, args: dict[str, Any]) -> Json | ToolFailure:
        found = await every_page(getattr(session, f"list_{kind}"), kind)
        return {kind: [shown(entry) for entry in found]}

    return session_tool(
        server, link, listed, name=f"{server}_list_{kind}", description=description, properties={}
    )


def session_tool(
    server: str,
    link: Link,
    work: WithSession,
    *,
    name: str,
    description: str,
    properties: dict[str, Any],
    required: Sequence[str] = (),
) -> Tool[Any]:
    """A tool of ``server`` whose ``work`` gets the live session, failing clearly when the
    server cannot be reached or the work raises; its input is an object of ``properties``."""

    async def run(args: dict[str, Any], ctx: ToolContext) -> Json | ToolFailure:
        reached = await link.reach()
        if reached is None:
            return ToolFailure(f"MCP server {server!r} is not available")
        session, failed = reached
        try:
            return await work(session, args)
        except Exception as error:
            return await failed(error)

    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = False
    return Tool.from_schema(
        run, name=name, input_schema=schema, description=description, source=server
    )
