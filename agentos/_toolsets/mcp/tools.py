"""A server's listing as agentos tools: under the agent's prefix, limited to its allow-list,
their input checked against the server's schema; and a progress notification as an entry."""

from __future__ import annotations

import math
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

from agentos._errors import ToolDefinitionError
from agentos._kernel.tools import Tool
from agentos._turns.mcp_config import TOOL_NAME
from agentos._turns.mcp_config import McpServerConfig
from components import Json


def adapt(
    listed: Sequence[Any],
    config: McpServerConfig,
    source: str,
    caller: Callable[[str], Callable[..., Any]],
    holder: Callable[[str], str | None],
) -> tuple[list[Tool[Any]], list[str]]:
    """The listed tools the agent may use, each calling ``caller(its name on the server)``,
    and why the others it would see are left out (``holder(name)`` says who else has a
    name: the session, a Python tool, another server)."""
    tools: list[Tool[Any]] = []
    problems: list[str] = []
    for listing in listed:
        if config.tools is not None and listing.name not in config.tools:
            continue
        name = config.prefix + listing.name
        if not TOOL_NAME.match(name):
            problems.append(
                f"tool {listing.name!r}: {name!r} is not a name the model can call "
                "(letters, digits, _ and -, at most 64)"
            )
            continue
        taken = holder(name)
        if taken is not None:
            problems.append(
                f"tool {listing.name!r}: left out, {name!r} is the name of {taken}; "
                f"give the server a prefix (mcp_servers.{source}.prefix) to use it"
            )
            continue
        try:
            tools.append(
                Tool.from_schema(
                    caller(listing.name),
                    name=name,
                    input_schema=dict(listing.input_schema),
                    description=listing.description or listing.title or "",
                    source=source,
                )
            )
        except ToolDefinitionError as error:
            problems.append(str(error))
    return tools, problems


def progress_entry(done: float, total: float | None, message: str | None) -> Json:
    """An MCP progress notification as a progress entry: ``percent`` when there is a total."""
    entry: dict[str, Json] = {"progress": done}
    if total is not None and total > 0 and math.isfinite(total):
        entry["total"] = total
        entry["percent"] = round(min(100.0, max(0.0, done * 100.0 / total)), 1)
    if message:
        entry["text"] = message
    return entry
