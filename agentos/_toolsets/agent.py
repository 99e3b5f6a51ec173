"""An agent's own tools: what its ``tools`` entries name and its MCP servers, ready to give
a ``Runtime`` (``Runtime(found.tools, toolsets=found.toolsets)``)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentos._kernel.tools import Tool
from agentos._toolsets.imports import resolve_tools
from agentos._toolsets.mcp.server import McpServer
from agentos._turns.agent_config import AgentConfig


@dataclass(frozen=True, slots=True)
class AgentTools:
    """The tools an agent configuration names, and the toolsets its MCP servers are."""

    tools: list[Tool[Any]] = field(default_factory=list)
    toolsets: list[McpServer] = field(default_factory=list)


def agent_tools(
    config: AgentConfig,
    available: Iterable[Tool[Any]] = (),
    *,
    environ: Mapping[str, str] | None = None,
) -> AgentTools:
    """Resolve ``config.tools`` (a bare name is one of ``available``; None: all of them)
    and make an ``McpServer`` per ``config.mcp_servers`` entry (``${VAR}`` read from
    ``environ`` when it starts). ``config.import_path`` is added to ``sys.path`` first.
    ``ToolImportError`` names every entry that gives no tools.
    """
    for where in config.import_path:  # where its modules are, as the agent file says
        if where not in sys.path:
            sys.path.insert(0, where)
    known = {item.name: item for item in available}
    tools = list(known.values()) if config.tools is None else resolve_tools(config.tools, known)
    servers = [
        McpServer(name, server, environ=environ) for name, server in config.mcp_servers.items()
    ]
    return AgentTools(tools, servers)
