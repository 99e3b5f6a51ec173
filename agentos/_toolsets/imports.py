"""Tools named by import path in an agent file: ``module:attribute`` or a whole module.

``module:attribute`` is a tool, or a list (tuple) of tools; a module gives the tools at
its top level (those in its ``__all__`` when it has one). A bare name is a tool the
caller already has; failing that, a module of that name. Each problem is one line that
names the setting (``tools[1]``) and the cause.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from agentos._errors import UsageError
from agentos._kernel.tools import Tool
from agentos._turns.mcp_config import TOOL_NAME


class ToolImportError(UsageError):
    """A ``tools`` entry of an agent does not give tools; the message names the entry."""


def resolve_tools(specs: Sequence[str], known: Mapping[str, Tool[Any]]) -> list[Tool[Any]]:
    """The tools ``specs`` name, in order; ``ToolImportError`` listing every problem
    (an import that fails, a module with no tools, two tools with one name)."""
    found: dict[str, tuple[Tool[Any], int]] = {}
    problems: list[str] = []
    for index, spec in enumerate(specs):
        try:
            tools = tools_of(spec, known)
        except ToolImportError as error:
            problems.append(f"tools[{index}]: {error}")
            continue
        for item in tools:
            held, earlier = found.setdefault(item.name, (item, index))
            if held is not item:  # the same tool named twice is harmless
                problems.append(
                    f"tools[{index}]: {spec!r} gives a tool named {item.name!r}, "
                    f"as tools[{earlier}] ({specs[earlier]!r}) does"
                )
    if problems:
        raise ToolImportError("; ".join(problems))
    return [item for item, _ in found.values()]


def tools_of(spec: str, known: Mapping[str, Tool[Any]]) -> list[Tool[Any]]:
    """The tools one entry names (``ToolImportError`` saying why there are none)."""
    module_name, _, attribute = spec.partition(":")
    if not attribute and TOOL_NAME.match(spec) and spec in known:
        return [known[spec]]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        missing = error.name is not None and module_name.startswith(error.name)
        if missing and ":" not in spec and TOOL_NAME.match(spec):
            names = ", ".join(sorted(known)) or "none"
            raise ToolImportError(
                f"{spec!r} is neither a tool here (tools: {names}) nor a module "
                "that can be imported"
            ) from None
        raise ToolImportError(f"{spec!r}: cannot import {module_name}: {error}") from None
    except Exception as error:
        raise ToolImportError(
            f"{spec!r}: importing {module_name} failed: {type(error).__name__}: {error}"
        ) from None
    if attribute:
        if not hasattr(module, attribute):
            raise ToolImportError(f"{spec!r}: {module_name} has no attribute {attribute!r}")
        value = getattr(module, attribute)
        tools = _tools_in([value] if isinstance(value, Tool) else value, spec)
        if not tools:
            raise ToolImportError(
                f"{spec!r} is {_kind(value)}, not a tool: decorate the function with "
                "@agentos.tool (or name a list of tools)"
            )
        return tools
    public: Iterable[str] = getattr(module, "__all__", None) or [
        name for name in vars(module) if not name.startswith("_")
    ]
    values = (getattr(module, name, None) for name in public)
    tools = list({id(value): value for value in values if isinstance(value, Tool)}.values())
    if not tools:
        raise ToolImportError(
            f"{spec!r}: the module {module_name} has no tools at its top level "
            "(functions decorated with @agentos.tool)"
        )
    return tools


def _tools_in(value: object, spec: str) -> list[Tool[Any]]:
    """``value`` as a list of tools if it is a list or tuple of them, else empty."""
    if not isinstance(value, list | tuple):
        return []
    items: Iterable[object] = value
    tools = [item for item in items if isinstance(item, Tool)]
    if len(tools) != len(value):
        raise ToolImportError(f"{spec!r} is a {type(value).__name__} that holds more than tools")
    return tools


def _kind(value: object) -> str:
    if callable(value):
        return f"the function {getattr(value, '__qualname__', value)!r}"
    return f"a {type(value).__name__}"
