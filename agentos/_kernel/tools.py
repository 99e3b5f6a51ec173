"""Declaring tools: a function plus the pydantic model (or JSON schema) its input must satisfy."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from typing import Generic
from typing import TypeVar
from typing import overload

from pydantic import BaseModel
from pydantic import ValidationError

from agentos._errors import ToolDefinitionError
from agentos._kernel.schemas import UncheckableInput
from agentos._kernel.schemas import problems
from agentos._kernel.schemas import quick_check
from agentos._kernel.schemas import schema_validator
from agentos._kernel.signature import inspect_tool
from agentos._kernel.signature import without_parameters

InputT = TypeVar("InputT", bound=BaseModel)
ToolFunction = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class ToolFailure:
    """Return this from a tool to end its call ``failed`` with a message the model can read."""

    message: str


class Tool(Generic[InputT]):
    """A named function the runtime can run as a call.

    The function takes the validated input model and, optionally, a
    ``ToolContext``; it may be ``async`` (runs as a task) or plain (runs in a
    worker thread). Its JSON schema, shown to the model, comes from the input
    model. ``source`` names where it came from when not from Python (an MCP server).
    """

    def __init__(
        self,
        fn: ToolFunction,
        input_model: type[InputT],
        *,
        name: str,
        description: str,
        takes_context: bool,
        timeout: float | None = None,
        source: str | None = None,
    ) -> None:
        self.fn = fn
        self.input_model = input_model
        self.name = name
        self.description = description
        self.takes_context = takes_context
        self.is_async = inspect.iscoroutinefunction(fn)
        self.timeout = timeout
        self.source = source

    @classmethod
    def from_schema(
        cls,
        fn: ToolFunction,
        *,
        name: str,
        input_schema: dict[str, Any],
        description: str = "",
        timeout: float | None = None,
        source: str | None = None,
    ) -> Tool[Any]:
        """A tool whose input is checked against a JSON schema (draft 2020-12 unless it says
        ``$schema``) instead of a pydantic model: ``fn(args: dict[, ctx])`` gets the object.

        ``ToolDefinitionError`` if the schema is not a valid JSON schema of an object.
        """
        takes_context = _parameter_count(fn, name) == 2
        if timeout is not None and not timeout > 0:
            raise ToolDefinitionError(f"tool {name}: timeout must be > 0, got {timeout}")
        made: Tool[Any] = SchemaTool(
            fn,
            _JsonObject,
            name=name,
            description=description,
            takes_context=takes_context,
            timeout=timeout,
            source=source,
        )
        made.__dict__["input_schema"] = input_schema
        made.__dict__["_validator"] = schema_validator(name, input_schema)
        made.__dict__["_fits"] = quick_check(input_schema)
        return made

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        return self.input_model.model_json_schema()

    def validate(self, raw: dict[str, Any]) -> InputT:
        """The call's arguments from its JSON input; ``InvalidToolInput`` or pydantic's
        ``ValidationError`` when the input does not fit."""
        return self.input_model.model_validate(raw)

    def __repr__(self) -> str:
        kind = "async" if self.is_async else "sync"
        return f"<Tool {self.name} ({kind}, input {self.input_model.__name__})>"


class InvalidToolInput(ValueError):
    """A call's input does not fit its tool's JSON schema; the message names each problem."""


class _JsonObject(BaseModel):
    """Stands for the input model of a tool that is checked against a JSON schema."""


class SchemaTool(Tool[Any]):
    """A tool checked against a JSON schema: the arguments are the JSON object itself."""

    _validator: Any
    _fits: Callable[[dict[str, Any]], bool] | None

    def validate(self, raw: dict[str, Any]) -> Any:
        if self._fits is not None and self._fits(raw):
            return raw
        try:
            found = problems(self._validator, raw)
        except UncheckableInput as error:
            raise InvalidToolInput(f"its schema could not check it: {error}") from None
        if found:
            raise InvalidToolInput("; ".join(found))
        return raw

    def __repr__(self) -> str:
        kind = "async" if self.is_async else "sync"
        where = f" from {self.source}" if self.source else ""
        return f"<Tool {self.name} ({kind}, JSON schema input{where})>"


@overload
def tool(
    fn: ToolFunction,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
) -> Tool[Any]: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None, timeout: float | None = None
) -> Callable[[ToolFunction], Tool[Any]]: ...


def tool(
    fn: ToolFunction | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
) -> Tool[Any] | Callable[[ToolFunction], Tool[Any]]:
    """Make a tool from ``fn(args: SomeModel[, ctx: ToolContext])``, or from a function of
    plain typed parameters, ``fn(city: str, days: int = 1, *, ctx: ToolContext)``, whose
    input model is made from its signature (each parameter described by the docstring's
    ``Args:`` section; unknown arguments are refused).

    Used bare (``@tool``) or with options (``@tool(name=..., timeout=...)``).
    The name defaults to the function's, the description to its docstring.
    """

    def build(fn: ToolFunction) -> Tool[Any]:
        where = getattr(fn, "__qualname__", repr(fn))
        input_model, takes_context, call = inspect_tool(fn, where)
        if timeout is not None and not timeout > 0:
            raise ToolDefinitionError(f"tool {fn.__name__}: timeout must be > 0, got {timeout}")
        made: Tool[Any] = Tool(
            call,
            input_model,
            name=name or fn.__name__,
            description=description or plain_text(without_parameters(inspect.getdoc(fn) or "")),
            takes_context=takes_context,
            timeout=timeout,
        )
        made.is_async = inspect.iscoroutinefunction(fn)
        return made

    return build if fn is None else build(fn)


def _parameter_count(fn: ToolFunction, where: str) -> int:
    """1 or 2: a tool takes (args) or (args, ctx)."""
    if not callable(fn):
        raise ToolDefinitionError(f"tool {where}: expected a function, got {fn!r}")
    count = len(inspect.signature(fn).parameters)
    if not 1 <= count <= 2:
        raise ToolDefinitionError(
            f"tool {where} must take (args) or (args, ctx); it takes {count} parameters"
        )
    return count


def describe_validation_error(subject: str, error: ValidationError) -> str:
    """``subject: field: problem; ...``, naming each field: what a model needs to fix its call."""
    problems = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "(input)"
        problems.append(f"{where}: {item['msg']}")
    return f"{subject}: " + "; ".join(problems)


_MARKUP = re.compile(r"(?::[\w:.-]+:)?`{1,2}([^`]+)`{1,2}")
"""reST literals and roles: ``x``, `x`, :func:`x`."""


def plain_text(docstring: str) -> str:
    """A docstring as the model should read it: reST literals and roles become their text."""
    return _MARKUP.sub(r"\1", docstring)
