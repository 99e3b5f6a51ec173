"""Toolsets: tools that come from something the runtime starts and stops (an MCP server).

A toolset runs as one task of the runtime for as long as the runtime is open:
it starts what it needs, puts its tools in the runtime's ``ToolRegistry`` (and
may replace them later, when its server's list changes), says it has started,
and serves until it is cancelled, cleaning up on the way out. The runtime
starts every toolset before it is entered, side by side, and fails to enter
if one cannot start.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import Protocol
from typing import runtime_checkable

import anyio
from anyio.abc import TaskGroup
from anyio.abc import TaskStatus

from agentos._errors import ToolsetError
from agentos._kernel.tools import Tool


@runtime_checkable
class Toolset(Protocol):
    """Something that provides tools while it runs; ``name`` is unique in a runtime."""

    name: str

    async def run(self, tools: ToolRegistry, *, task_status: TaskStatus[None]) -> None:
        """Start, ``tools.replace(self.name, ...)``, ``task_status.started()``, serve until
        cancelled. Raising before ``started`` fails the runtime's start with that error."""
        ...


class ToolRegistry:
    """The runtime's tools by name, as toolsets change them; ``version`` counts the changes."""

    def __init__(self, max_result_chars: int | None = None) -> None:
        self.by_name: dict[str, Tool[Any]] = {}
        self.max_result_chars = max_result_chars
        """The runtime's cap on a result: a toolset may refuse a larger one before reading it."""
        self.version = 0
        self._changed: anyio.Event | None = None

    async def changed(self, since: int) -> int:
        """Wait until ``version`` is past ``since``; return it."""
        while self.version <= since:
            if self._changed is None:
                self._changed = anyio.Event()
            await self._changed.wait()
        return self.version

    def _count_change(self) -> None:
        self.version += 1
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    def add(self, item: Tool[Any]) -> None:
        if not isinstance(item, Tool):
            raise TypeError(f"expected a Tool (use @agentos.tool), got {item!r}")
        if item.name in self.by_name:
            raise ValueError(f"a tool named {item.name!r} is already registered")
        self.by_name[item.name] = item
        self._count_change()

    def replace(self, source: str, tools: Sequence[Tool[Any]]) -> None:
        """Make ``tools`` the tools of ``source``: others of its are removed. ``ValueError``
        (and no change) if a name is another source's tool, or appears twice."""
        names = [item.name for item in tools]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"{source} has more than one tool named {', '.join(twice)}")
        for item in tools:
            if item.source != source:
                raise ValueError(f"tool {item.name!r} has source {item.source!r}, not {source!r}")
            held = self.by_name.get(item.name)
            if held is not None and held.source != source:
                owner = "a Python tool" if held.source is None else held.source
                raise ValueError(
                    f"{source}'s tool {item.name!r} has the name of {owner}'s "
                    "(give the server a prefix)"
                )
        for name in [n for n, held in self.by_name.items() if held.source == source]:
            del self.by_name[name]
        for item in tools:
            self.by_name[item.name] = item
        self._count_change()


class Toolsets:
    """The runtime's toolsets: started side by side in its task group, each a task."""

    def __init__(self, toolsets: Iterable[Toolset], registry: ToolRegistry) -> None:
        self.by_name: dict[str, Toolset] = {}
        for toolset in toolsets:
            if not isinstance(toolset, Toolset):
                raise TypeError(f"expected a Toolset (an McpServer, say), got {toolset!r}")
            if toolset.name in self.by_name:
                raise ValueError(f"two toolsets are named {toolset.name!r}")
            self.by_name[toolset.name] = toolset
        self._registry = registry

    async def start(self, group: TaskGroup) -> None:
        """Start every toolset; ``ToolsetError`` naming each that failed (the others are
        stopped with the group)."""
        failures: dict[str, BaseException] = {}
        async with anyio.create_task_group() as starting:
            for toolset in self.by_name.values():
                starting.start_soon(self._start, group, toolset, failures)
        if failures:
            raise ToolsetError(
                "; ".join(_said(failures[name]) for name in self.by_name if name in failures)
            )

    async def _start(
        self, group: TaskGroup, toolset: Toolset, failures: dict[str, BaseException]
    ) -> None:
        try:
            await group.start(toolset.run, self._registry)
        except Exception as error:
            failures[toolset.name] = error

    @property
    def names(self) -> Mapping[str, Toolset]:
        return dict(self.by_name)


def _said(error: BaseException) -> str:
    if isinstance(error, ToolsetError):
        return str(error)
    return f"{type(error).__name__}: {error}"
