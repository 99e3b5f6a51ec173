"""Which of the runtime's tools one agent may call: the tools its ``tools`` entries give
(every tool, with no entries), every tool of its MCP servers, as they list them now, and
its sub-agents (``agents``)."""

from __future__ import annotations

from typing import Any

from agentos._errors import UsageError
from agentos._kernel.runtime import Runtime
from agentos._kernel.tools import Tool
from agentos._toolsets.imports import tools_of
from agentos._turns.agent_config import AgentConfig
from agentos._turns.mcp_config import TOOL_NAME

AGENT_SOURCE = "agents"
"""The ``Tool.source`` of a sub-agent's tool: only an agent whose ``agents`` names it sees it."""


class ToolAccess:
    """``allows(name)`` for the machine, ``tools()`` for the model's request.

    ``UsageError`` when made if the agent names what the runtime lacks: an import path
    whose tools it was not given, or an MCP server that is not one of its toolsets.
    """

    def __init__(self, config: AgentConfig, runtime: Runtime) -> None:
        self._runtime = runtime
        self._servers = frozenset(config.mcp_servers)
        self._agents = frozenset(config.agents)
        problems = [
            f"mcp_servers.{name}: this runtime has no toolset {name!r} "
            f"(toolsets: {', '.join(sorted(runtime.toolsets)) or 'none'}; "
            "agentos.agent_tools(config) makes them)"
            for name in config.mcp_servers
            if name not in runtime.toolsets
        ]
        self._names: frozenset[str] | None = None
        if config.tools is not None:
            names: set[str] = set()
            for index, spec in enumerate(config.tools):
                if TOOL_NAME.match(spec) and spec in runtime.tools:
                    names.add(spec)
                    continue
                try:
                    given = tools_of(spec, runtime.tools)
                except UsageError as error:
                    problems.append(f"tools[{index}]: {error}")
                    continue
                for item in given:
                    if runtime.tool(item.name) is not item:
                        problems.append(
                            f"tools[{index}]: {spec!r} gives the tool {item.name!r}, which "
                            "this runtime was not given (agentos.agent_tools(config) "
                            "resolves an agent's tools)"
                        )
                    names.add(item.name)
            self._names = frozenset(names)
        if problems:
            raise UsageError(f"agent {config.name!r}: " + "; ".join(problems))

    def allows(self, name: str) -> bool:
        if name in self._agents:
            return True
        found = self._runtime.tool(name)
        if found is not None and found.source == AGENT_SOURCE:
            return False  # another agent's sub-agent
        if self._names is None or name in self._names:
            return True
        return found is not None and found.source in self._servers

    def tools(self) -> list[Tool[Any]]:
        """The tools the agent may call now, by name."""
        tools = self._runtime.tools
        return [tools[name] for name in sorted(tools) if self.allows(name)]
