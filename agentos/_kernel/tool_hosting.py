"""The tools a runtime may run: its Python tools, its toolsets' and its isolated runners."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

from agentos._kernel.checks import check_text
from agentos._kernel.isolation import IsolatedRunner
from agentos._kernel.tools import Tool
from agentos._kernel.toolsets import ToolRegistry
from agentos._kernel.toolsets import Toolset
from agentos._kernel.toolsets import Toolsets


class ToolHosting:
    """``Runtime``'s tools, toolsets and runners: registered, listed and looked up."""

    def __init__(
        self, tools: Iterable[Tool[Any]], toolsets: Iterable[Toolset], max_result_chars: int | None
    ) -> None:
        self._registry = ToolRegistry(max_result_chars)
        self._tools = self._registry.by_name
        self._runners: dict[str, IsolatedRunner] = {}
        for item in tools:
            self.add_tool(item)
        self._toolsets = Toolsets(toolsets, self._registry)

    def add_tool(self, item: Tool[Any]) -> None:
        """Register a tool; its name must be new."""
        self._registry.add(item)

    def add_runner(self, name: str, runner: IsolatedRunner) -> None:
        """Register an isolated runner that ``submit(..., runner=name)`` calls use."""
        check_text("name", name)
        if name in self._runners:
            raise ValueError(f"a runner named {name!r} is already registered")
        self._runners[name] = runner

    @property
    def tools(self) -> Mapping[str, Tool[Any]]:
        """The tools calls may name now: the Python tools and the toolsets' (a copy)."""
        return dict(self._tools)

    def tool(self, name: str) -> Tool[Any] | None:
        """The tool named ``name`` now, if any (cheaper than ``tools``)."""
        return self._tools.get(name)

    @property
    def tools_version(self) -> int:
        """Counts changes to ``tools``: an MCP server's list changing adds one."""
        return self._registry.version

    async def tools_changed(self, since: int) -> int:
        """Wait until ``tools_version`` is past ``since`` (a toolset's tools changed);
        returns the new version."""
        return await self._registry.changed(since)

    @property
    def toolsets(self) -> Mapping[str, Toolset]:
        """The toolsets given to the runtime, by name."""
        return self._toolsets.names

    @property
    def runners(self) -> Mapping[str, IsolatedRunner]:
        """The isolated runners registered with ``add_runner``, by name."""
        return dict(self._runners)
