"""Input checks of the runtime's methods: argument types and ranges, and a call's tool input.

A wrong argument to a method is the caller's bug and raises at once
(``TypeError``/``ValueError``). A call's tool input is the model's business:
it never raises here but becomes the ``CallError`` the call is settled with.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from agentos._kernel.json_values import to_json
from agentos._kernel.tools import InvalidToolInput
from agentos._kernel.tools import Tool
from agentos._kernel.tools import describe_validation_error
from components import CallError
from components import ErrorKind
from components import JsonObject

_PLAIN = frozenset({str, int, bool, type(None)})
"""Value types an input can hold and be stored as it is (floats need a finiteness check)."""


def check_text(name: str, value: object) -> None:
    """``value`` must be a non-empty str."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if not value:
        raise ValueError(f"{name} must not be empty")


def check_optional_texts(**values: object) -> None:
    """Each value given must be None or a non-empty str."""
    for name, value in values.items():
        if value is not None:
            check_text(name, value)


def optional_texts(*values: object) -> bool:
    """Whether each value is None or a non-empty str: the quick test before
    ``check_optional_texts`` names the first that is not (a call checks five)."""
    for value in values:
        if value is not None and (type(value) is not str or not value):
            return False
    return True


def check_seconds(name: str, value: object) -> None:
    """``value`` must be a finite, positive number of seconds."""
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")


def check_positive_int(name: str, value: object, *, optional: bool = False) -> None:
    """``value`` must be an int of at least 1 (or None, when ``optional``)."""
    if optional and value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        allowed = "a positive int or None" if optional else "a positive int"
        raise ValueError(f"{name} must be {allowed}, got {value!r}")


def check_retries(value: object) -> None:
    """A call may be run again up to ten times."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 10:
        raise ValueError(f"retries must be an int from 0 to 10, got {value!r}")


def check_input(
    tools: Mapping[str, Tool[Any]],
    tool_name: str,
    tool_input: Mapping[str, Any] | str | None,
) -> tuple[JsonObject, object, CallError | None]:
    """The call's JSON input, the tool's validated arguments, and why the call is refused.

    An unknown tool, input that is not a JSON object, or input the tool's
    model rejects gives no arguments and the error the call fails with.
    """
    raw, rejection = parse_input(tool_input)
    if rejection is not None:
        message = f"invalid input for tool {tool_name!r}: {rejection.message}"
        rejection = CallError(rejection.kind, message)
    tool = tools.get(tool_name)
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        message = f"unknown tool {tool_name!r} (known tools: {known})"
        return raw, None, CallError(ErrorKind.UNKNOWN_TOOL, message)
    if rejection is not None:
        return raw, None, rejection
    try:
        return raw, tool.validate(raw), None
    except ValidationError as error:
        message = describe_validation_error(f"invalid input for tool {tool_name!r}", error)
        return raw, None, CallError(ErrorKind.INVALID_INPUT, message)
    except InvalidToolInput as error:
        message = f"invalid input for tool {tool_name!r}: {error}"
        return raw, None, CallError(ErrorKind.INVALID_INPUT, message)
    except Exception as error:  # the check itself broke: that call fails, nothing else
        message = (
            f"the input of tool {tool_name!r} could not be checked: {type(error).__name__}: {error}"
        )
        return raw, None, CallError(ErrorKind.INVALID_INPUT, message)


def parse_input(tool_input: Mapping[str, Any] | str | None) -> tuple[JsonObject, CallError | None]:
    """A JSON object (as a dict) from the input as given: a mapping, JSON text, or nothing."""
    if tool_input is None:
        return {}, None
    if isinstance(tool_input, str):
        try:
            tool_input = json.loads(tool_input)
        except json.JSONDecodeError as error:
            message = f"tool input must be a JSON object; this is not valid JSON: {error}"
            return {}, CallError(ErrorKind.INVALID_INPUT, message)
    if not isinstance(tool_input, Mapping):
        kind = type(tool_input).__name__
        return {}, CallError(
            ErrorKind.INVALID_INPUT, f"tool input must be a JSON object, got {kind}"
        )
    copy = dict(tool_input)
    if all(type(value) in _PLAIN for value in copy.values()) and all(
        type(key) is str for key in copy
    ):
        return copy, None
    try:
        return to_json(copy), None  # type: ignore[return-value]
    except (TypeError, ValueError) as error:
        return {}, CallError(ErrorKind.INVALID_INPUT, f"tool input is not JSON: {error}")
