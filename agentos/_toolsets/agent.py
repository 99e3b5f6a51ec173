"""An agent's own tools: what its ``tools`` entries name, its MCP servers and its A2A agents,
ready to give a ``Runtime`` (``Runtime(found.tools, toolsets=found.toolsets)``)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from agentos._kernel.tools import Tool
from agentos._toolsets.a2a.agent import A2aAgent
from agentos._toolsets.imports import ToolImportError
from agentos._toolsets.imports import resolve_tools
from agentos._toolsets.mcp.server import McpServer
from agentos._turns.a2a_config import A2aAgentConfig
from agentos._turns.agent_config import AgentConfig
from agentos._turns.mcp_config import McpServerConfig


@dataclass(frozen=True, slots=True)
class AgentTools:
    """The tools an agent configuration names, and the toolsets its MCP servers and A2A
    agents are."""

    tools: list[Tool[Any]] = field(default_factory=list)
    toolsets: list[McpServer | A2aAgent] = field(default_factory=list)


def agent_tools(
    config: AgentConfig,
    available: Iterable[Tool[Any]] = (),
    *,
    environ: Mapping[str, str] | None = None,
) -> AgentTools:
    """Resolve ``config.tools`` (a bare name is one of ``available``; None: all of them)
    and make an ``McpServer`` per ``config.mcp_servers`` entry and an ``A2aAgent`` per
    ``config.a2a_agents`` entry (``${VAR}`` read from
    ``environ`` when it starts); likewise for each sub-agent, down the tree, so one runtime
    serves them all. ``config.import_path`` is added to ``sys.path`` first.
    ``ToolImportError`` names every entry that gives no tools, and two agents of the tree
    whose tools or servers share a name but differ.
    """
    known = {item.name: item for item in available}
    tools: dict[str, Tool[Any]] = {}
    servers: dict[str, McpServerConfig] = {}
    remotes: dict[str, A2aAgentConfig] = {}
    problems: list[str] = []
    for where, agent in _tree(config, ""):
        for path in agent.import_path:  # where its modules are, as the agent file says
            if path not in sys.path:
                sys.path.insert(0, path)
        try:
            found = (
                list(known.values()) if agent.tools is None else resolve_tools(agent.tools, known)
            )
        except ToolImportError as error:
            problems.append(f"{where}{error}")
            continue
        for item in found:
            if tools.setdefault(item.name, item) is not item:
                problems.append(f"{where}tools: another agent of the tree has a tool {item.name!r}")
        for name, server in agent.mcp_servers.items():
            if servers.setdefault(name, server) != server:
                problems.append(
                    f"{where}mcp_servers.{name}: another agent of the tree has a server {name!r} "
                    "set up otherwise; give one of them another name"
                )
        for name, remote in agent.a2a_agents.items():
            if remotes.setdefault(name, remote) != remote or name in servers:
                problems.append(
                    f"{where}a2a_agents.{name}: another agent of the tree has a server or an "
                    f"A2A agent {name!r} set up otherwise; give one of them another name"
                )
    if problems:
        raise ToolImportError("; ".join(problems))
    made: list[McpServer | A2aAgent] = [
        McpServer(name, server, environ=environ) for name, server in servers.items()
    ]
    made += [A2aAgent(name, remote, environ=environ) for name, remote in remotes.items()]
    return AgentTools(list(tools.values()), made)


def _tree(config: AgentConfig, where: str) -> Iterator[tuple[str, AgentConfig]]:
    """The agent and its sub-agents, depth first, each with the path of its settings."""
    yield where, config
    for name, child in config.agents.items():
        yield from _tree(child.agent, f"{where}agents.{name}.agent: ")
