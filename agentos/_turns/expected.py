"""The expected-duration argument: how long the model expects a background call to take.

Only the model knows whether a call is worth waiting for, and only the harness
knows that time passed (seed 004, "Knowing when to give up"). So every
background tool's schema, as the model sees it, gets an optional
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
    """A copy of ``schema`` with the optional argument added (the tool's own is not touched)."""
    properties = dict(schema.get("properties") or {})
    properties[EXPECTED_SECONDS] = {
        "type": "number",
        "exclusiveMinimum": 0,
        "maximum": cap,
        "description": _DESCRIPTION,
    }
    return {**schema, "type": "object", "properties": properties}


def take_expected_seconds(
    arguments: object, *, default: float | None, cap: float, floor: float = 0.0
) -> tuple[object, float | None]:
    """The input without the argument, and the overdue interval it asks for.

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
