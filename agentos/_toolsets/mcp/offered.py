"""What a server offers besides its tools, as tools of its own: its resources and its
prompts, each pair only when the server says it has them and lists some now, under the
agent's allow-list, and never over a name someone else has."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

from agentos._kernel.tools import Tool
from agentos._toolsets.mcp.listing import Link
from agentos._toolsets.mcp.listing import Lister
from agentos._toolsets.mcp.listing import lists_some
from agentos._toolsets.mcp.prompts import prompt_tools
from agentos._toolsets.mcp.resources import resource_tools


async def offered_tools(
    session: Any,
    server: str,
    allowed: Sequence[str] | None,
    holder: Callable[[str], str | None],
    link: Link,
    problems: list[str],
) -> list[Tool[Any]]:
    """The tools of ``server``'s resources and prompts the agent may use; why any it would
    see are left out goes in ``problems`` (``holder(name)`` says who else has a name)."""
    declared = session.server_capabilities
    made: list[Tool[Any]] = []
    offers: tuple[tuple[str, Lister, Callable[[], list[Tool[Any]]]], ...] = (
        ("resources", session.list_resources, lambda: resource_tools(server, link)),
        ("prompts", session.list_prompts, lambda: prompt_tools(server, link)),
    )
    for kind, lister, tools in offers:
        if getattr(declared, kind, None) is not None and await lists_some(lister, kind, problems):
            made += tools()
    kept: list[Tool[Any]] = []
    for tool in made:
        if allowed is not None and tool.name not in allowed:
            continue  # an allow-list that does not name them leaves them out
        taken = holder(tool.name)
        if taken is None:
            kept.append(tool)
        else:
            problems.append(f"{tool.name}: left out, it is the name of {taken}")
    return kept
