"""The expected-duration argument: how long the model expects a background call to take.

Only the model knows whether a call is worth waiting for, and only the harness
knows that time passed (knowing when to give up). So every
background tool's schema, as the model sees it, requires
``expected_seconds``; the session takes it out of the input before the tool
sees it and uses it as the call's overdue interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

EXPECTED_SECONDS = "expected_seconds"
"""The argument's name in a tool's input."""

_DESCRIPTION = (
    "How long, in seconds, you expect this call to take. "
    "If it runs longer, you will be asked whether to keep waiting."
)


def has_own_field(schema: Mapping[str, Any]) -> bool:
    """The tool already takes an argument of our name: then it is the tool's, not ours."""
    properties = schema.get("properties")
    return isinstance(properties, Mapping) and EXPECTED_SECONDS in properties


def with_expected_seconds(schema: Mapping[str, Any], cap: float) -> dict[str, Any]:
    """A copy of ``schema`` that requires the argument (the tool's own is not touched): the
    model is asked for its estimate on every call; one that omits it anyway gets the
    agent's default."""
    properties = dict(schema.get("properties") or {})
    properties[EXPECTED_SECONDS] = {
        "type": "number",
        "exclusiveMinimum": 0,
        "maximum": cap,
        "description": _DESCRIPTION,
    }
    required = [name for name in schema.get("required") or () if name != EXPECTED_SECONDS]
    return {
        **schema,
        "type": "object",
        "properties": properties,
        "required": [*required, EXPECTED_SECONDS],
    }


def take_expected_seconds(
    arguments: object, *, default: float | None, cap: float, floor: float = 0.0
) -> tuple[object, float | None]:
    """The input without the argument, and the overdue interval it asks for (``default``
    when it asks for none: ``estimate`` tells the two apart).

    A value that is not a number above zero (or is NaN) is dropped and ``default``
    applies: a bad estimate never fails the call. A good one is clamped between ``floor``
    and ``cap`` (``1e-9`` on a 2 s call would otherwise ask the model about it nonstop).
    """
    if not isinstance(arguments, dict) or EXPECTED_SECONDS not in arguments:
        return arguments, default
    stripped = {key: value for key, value in arguments.items() if key != EXPECTED_SECONDS}
    value = arguments[EXPECTED_SECONDS]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return stripped, default
    if math.isnan(value) or value <= 0:
        return stripped, default
    return stripped, max(floor, min(float(value), cap))


def estimate(arguments: object) -> bool:
    """Whether the model's input gives an expected duration ``take_expected_seconds`` uses."""
    if not isinstance(arguments, dict):
        return False
    value = arguments.get(EXPECTED_SECONDS)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return not math.isnan(value) and value > 0
