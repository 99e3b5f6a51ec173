"""What a tool function's signature says: the input model the model's JSON must fit, and
how to call the function with it.

Two shapes. ``fn(args: SomeModel[, ctx])``: the model is the input. Or plain typed
parameters, as other agent frameworks take them, ``fn(city: str, days: int = 1, *, ctx:
ToolContext)``: the input model is made from the parameters (their types and defaults,
each described by the docstring's ``Args:`` section), and ``Spread`` calls the function
with the validated fields. The ``ToolContext`` parameter is found by its annotation,
wherever it stands.
"""

from __future__ import annotations

import inspect
import re
import typing
from dataclasses import dataclass
from typing import Annotated
from typing import Any

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import create_model

from agentos._errors import ToolDefinitionError

_SECTION = re.compile(r"^(?:Args|Arguments|Parameters):\s*$")
_ENTRY = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


@dataclass(frozen=True, slots=True)
class Spread:
    """Calls a function of plain parameters with a validated input model's fields (and the
    call's context by the name it takes it under). Module-level, so it pickles."""

    fn: Any
    names: tuple[str, ...]
    positional: tuple[str, ...]
    context: str | None
    whole: str | None = None
    """The parameter that takes the validated model itself (a model tool whose context
    is not its second positional parameter)."""

    def __call__(self, args: BaseModel, ctx: object = None) -> Any:
        given: dict[str, object]
        if self.whole is not None:
            given = {self.whole: args}
        else:
            given = {name: getattr(args, name) for name in self.names}
        if self.context is not None:
            given[self.context] = ctx
        first = [given.pop(name) for name in self.positional]
        return self.fn(*first, **given)


def inspect_tool(fn: Any, where: str) -> tuple[type[BaseModel], bool, Any]:
    """The input model, whether the function to call takes a context, and that function
    (``fn`` itself, or a ``Spread`` of it); ``ToolDefinitionError`` naming what is wrong."""
    if not callable(fn):
        raise ToolDefinitionError(f"tool {where}: expected a function, got {fn!r}")
    params = list(inspect.signature(fn).parameters.values())
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except NameError as error:
        raise ToolDefinitionError(
            f"tool {where}: cannot resolve its annotations ({error}); "
            "define the input model at module level"
        ) from None
    from agentos._kernel.context import ToolContext

    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    by_position = [p for p in params if p.kind in positional]
    if params and _is_model(hints.get(params[0].name)) and params[0] in by_position:
        if len(params) == 1:
            return hints[params[0].name], False, fn  # fn(args: Model)
        second = params[1]
        if (
            len(params) == 2
            and second in by_position
            and hints.get(second.name, ToolContext) is ToolContext
        ):
            return hints[params[0].name], True, fn  # fn(args: Model, ctx)
    context = next((p.name for p in params if hints.get(p.name) is ToolContext), None)
    others = [p for p in params if p.name != context]
    if len(others) == 1 and _is_model(hints.get(others[0].name)) and others[0] in by_position:
        order = tuple(p.name for p in params if p.kind is p.POSITIONAL_ONLY)
        return hints[others[0].name], True, Spread(fn, (), order, context, whole=others[0].name)
    return _from_parameters(fn, where, params, hints, context)


def _is_model(hint: object) -> bool:
    return isinstance(hint, type) and issubclass(hint, BaseModel)


def _from_parameters(
    fn: Any,
    where: str,
    params: list[inspect.Parameter],
    hints: dict[str, Any],
    context: str | None,
) -> tuple[type[BaseModel], bool, Any]:
    described = parameter_descriptions(inspect.getdoc(fn) or "")
    fields: dict[str, Any] = {}
    for param in params:
        if param.name == context:
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(
                f"tool {where}: *{param.name} cannot be a tool's input: give each parameter "
                "a name and a type"
            )
        if param.name not in hints:
            raise ToolDefinitionError(
                f"tool {where}: parameter {param.name!r} needs a type annotation (it is part "
                "of the JSON schema the model sees)"
            )
        default = ... if param.default is param.empty else param.default
        said = described.get(param.name)
        field = Field(default, description=said) if said else Field(default)
        fields[param.name] = (Annotated[hints[param.name], field], default)
    name = "".join(part.title() for part in getattr(fn, "__name__", "tool").split("_"))
    try:
        model = create_model(f"{name}Input", __config__=ConfigDict(extra="forbid"), **fields)
    except Exception as error:  # a type pydantic cannot make a schema of
        raise ToolDefinitionError(f"tool {where}: {error}") from None
    names = tuple(fields)
    positional = tuple(p.name for p in params if p.kind is p.POSITIONAL_ONLY)
    return model, True, Spread(fn, names, positional, context)


def parameter_descriptions(docstring: str) -> dict[str, str]:
    """Each parameter's description from a Google-style ``Args:`` section."""
    found: dict[str, str] = {}
    lines = docstring.splitlines()
    inside, indent, current = False, 0, None
    for line in lines:
        if _SECTION.match(line.strip()) and not line.startswith(" "):
            inside, indent, current = True, -1, None
            continue
        if not inside:
            continue
        if line.strip() and not line.startswith((" ", "\t")):
            break  # the next section
        stripped = line.strip()
        if not stripped:
            continue
        depth = len(line) - len(line.lstrip())
        entry = _ENTRY.match(stripped)
        if entry and (indent < 0 or depth <= indent):
            indent, current = depth, entry.group(1).lstrip("*")
            found[current] = entry.group(2).strip()
        elif current is not None:
            found[current] = f"{found[current]} {stripped}".strip()
    return found


def without_parameters(docstring: str) -> str:
    """The docstring without its ``Args:`` section (the schema describes the parameters)."""
    kept: list[str] = []
    skipping = False
    for line in docstring.splitlines():
        if _SECTION.match(line.strip()) and not line.startswith(" "):
            skipping = True
            continue
        if skipping and line.strip() and not line.startswith((" ", "\t")):
            skipping = False
        if not skipping:
            kept.append(line)
    return "\n".join(kept).strip()
