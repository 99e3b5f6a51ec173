"""Which of the runtime's tools one agent may call: the tools its ``tools`` entries give
(every tool, with no entries), every tool of its MCP servers, as they list them now, its
A2A agents' tools, and its sub-agents (``agents``)."""

from __future__ import annotations

from typing import Any

from agentos._errors import UsageError
from agentos._kernel.runtime import Runtime
from agentos._kernel.tools import Tool
from agentos._sessions.toolbox import SystemToolbox
from agentos._toolsets.imports import tools_of
from agentos._turns.agent_config import AgentConfig
from agentos._turns.call_options import ToolFacts
from agentos._turns.capabilities import CAPABILITIES
from agentos._turns.capabilities import MESSAGE_AGENT
from agentos._turns.expected import has_own_field
from agentos._turns.expected import with_expected_seconds
from agentos._turns.mcp_config import TOOL_NAME
from agentos._turns.tool_policy import Disposition

AGENT_SOURCE = "agents"
"""The ``Tool.source`` of a sub-agent's tool: only an agent whose ``agents`` names it sees it."""


class ToolAccess:
    """``allows(name)`` and ``takes_expected(name)`` for the machine, ``tools()`` and
    ``definitions()`` for the model's request.

    ``UsageError`` when made if the agent names what the runtime lacks: an import path
    whose tools it was not given, or an MCP server that is not one of its toolsets.
    """

    def __init__(self, config: AgentConfig, runtime: Runtime) -> None:
        self._config = config
        self._runtime = runtime
        self._expecting: tuple[int, frozenset[str]] | None = None
        """The tools whose schema has our ``expected_seconds``, and the ``tools_version`` of
        the runtime they were found at (an MCP server's list may change)."""
        self._definitions: tuple[int, list[dict[str, Any]]] | None = None
        self._facts: ToolFacts | None = None
        self._servers = frozenset(config.mcp_servers) | frozenset(config.a2a_agents)
        self._agents = frozenset(config.agents)
        problems = [
            f"mcp_servers.{name}: this runtime has no toolset {name!r} "
            f"(toolsets: {', '.join(sorted(runtime.toolsets)) or 'none'}; "
            "agentos.agent_tools(config) makes them)"
            for name in config.mcp_servers
            if name not in runtime.toolsets
        ] + [
            f"a2a_agents.{name}: this runtime has no toolset {name!r} "
            f"(toolsets: {', '.join(sorted(runtime.toolsets)) or 'none'}; "
            "agentos.agent_tools(config) makes them)"
            for name in config.a2a_agents
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

    def definitions(self) -> list[dict[str, Any]]:
        """The tools as the model sees them: a background tool's schema has
        ``expected_seconds``; then the agent's capabilities. One list while the runtime's
        tools stay as they are, shared by the agent's sessions: not to be changed."""
        version = self._runtime.tools_version
        if self._definitions is None or self._definitions[0] != version:
            self._definitions = (version, self._defined())
        return self._definitions[1]

    def facts(self, token_ttl: float | None) -> ToolFacts:
        """What the agent's turn machines know of its tools (one per ``token_ttl``)."""
        if self._facts is None or self._facts.token_ttl != token_ttl:
            self._facts = ToolFacts(self.takes_expected, token_ttl)
        return self._facts

    def _defined(self) -> list[dict[str, Any]]:
        config = self._config
        cap = config.expected_seconds_cap
        definitions = [
            {
                "name": tool.name,
                "description": tool.description,
                "input_schema": with_expected_seconds(tool.input_schema, cap)
                if self.takes_expected(tool.name)
                else tool.input_schema,
            }
            for tool in self.tools()
        ]
        chosen = [
            name
            for name in config.capabilities
            if name in CAPABILITIES and (name != MESSAGE_AGENT or config.agents)
        ]
        return definitions + SystemToolbox.definitions(chosen)

    def takes_expected(self, name: str) -> bool:
        """Whether the model gives this tool's calls our ``expected_seconds``: its calls let
        the turn go on without them (run_async, run_isolated in asynchronous mode) and it
        has no field of that name of its own."""
        version = self._runtime.tools_version
        if self._expecting is None or self._expecting[0] != version:
            background = (Disposition.RUN_ASYNC, Disposition.RUN_ISOLATED)
            self._expecting = (
                version,
                frozenset(
                    name
                    for name, tool in self._runtime.tools.items()
                    if self._config.disposition(name) in background
                    and not has_own_field(tool.input_schema)
                ),
            )
        return name in self._expecting[1]
