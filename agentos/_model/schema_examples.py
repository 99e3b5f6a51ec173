"""Example input made from a JSON schema, for ``TestModel``'s tool calls.

Pure and deterministic: the same schema gives the same value. It fills what a
pydantic model's schema requires (nested models, enums, literals, bounds, lists)
and never raises: a schema it cannot read, or one nested too deep (a recursive
model), gets ``{}`` or ``"example"``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

_DEPTH = 12
_MAX_ITEMS = 20
_MAX_LENGTH = 1_000
_FORMATS = {
    "date": "2026-01-02",
    "date-time": "2026-01-02T03:04:05Z",
    "time": "03:04:05Z",
    "email": "someone@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "12345678-1234-5678-1234-567812345678",
}


def example_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Input that fits ``schema`` (an object's JSON schema): its required fields filled."""
    try:
        value = _example(schema, schema, 0)
    except Exception:  # a schema too odd to read: the tool's own validation will say
        return {}
    return value if isinstance(value, dict) else {}


def _example(schema: Any, root: Mapping[str, Any], depth: int) -> Any:
    if not isinstance(schema, Mapping):
        return "example"
    if depth > _DEPTH:
        return {} if _type(schema) == "object" or "properties" in schema else "example"
    if isinstance(schema.get("$ref"), str):
        return _example(_resolve(schema["$ref"], root), root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if "default" in schema:
        return schema["default"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            chosen = next((b for b in branches if _type(b) != "null"), branches[0])
            return _example(chosen, root, depth + 1)
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        parts = [_example(part, root, depth + 1) for part in schema["allOf"]]
        if all(isinstance(part, dict) for part in parts):
            return {key: value for part in parts for key, value in part.items()}
        return parts[0]
    return _typed(schema, root, depth)


def _typed(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> Any:
    kind = _type(schema)
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        required = schema.get("required")
        names = [n for n in required if isinstance(n, str)] if isinstance(required, list) else []
        return {name: _example(properties.get(name, {}), root, depth + 1) for name in names}
    if kind == "array":
        item = _example(schema.get("items", {}), root, depth + 1)
        count = min(max(1, _int(schema.get("minItems"), 1)), _MAX_ITEMS)
        count = min(count, max(0, _int(schema.get("maxItems"), count)))
        return [item] * count
    if kind in ("integer", "number"):
        return _number(schema, integer=kind == "integer")
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _string(schema)


def _type(schema: Any) -> str | None:
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        return str(kinds[0]) if kinds else ("null" if kind else None)
    return None if kind is None else str(kind)


def _number(schema: Mapping[str, Any], *, integer: bool) -> int | float:
    """A number inside the bounds, on the ``multipleOf`` grid when there is one."""
    low, low_open = _bound(schema, "minimum", "exclusiveMinimum")
    high, high_open = _bound(schema, "maximum", "exclusiveMaximum")
    step = _float(schema.get("multipleOf"))
    if step is not None and step <= 0:
        step = None
    if integer and step is None:
        step = 1.0
    value = 1.0
    if low is not None:
        value = low
        if step is not None:
            value = math.ceil(low / step) * step
            if low_open and value <= low:
                value += step
        elif low_open:
            value = low + 1 if high is None or low + 1 < high else (low + high) / 2
    if high is not None and (value > high or (high_open and value >= high)):
        if step is not None:
            value = math.floor(high / step) * step
            if high_open and value >= high:
                value -= step
        elif low is None:
            value = high - 1
        else:
            value = (low + high) / 2 if high_open else high
    return int(value) if integer and float(value).is_integer() else value


def _bound(schema: Mapping[str, Any], inclusive: str, exclusive: str) -> tuple[float | None, bool]:
    """A bound and whether it is open, in draft 2020-12 or draft 4 (a boolean flag)."""
    flag = schema.get(exclusive)
    if isinstance(flag, bool):
        return _float(schema.get(inclusive)), flag
    open_bound = _float(flag)
    closed = _float(schema.get(inclusive))
    if open_bound is not None and (closed is None or open_bound >= closed):
        return open_bound, True
    return closed, False


def _string(schema: Mapping[str, Any]) -> str:
    value = _FORMATS.get(str(schema.get("format")), "example")
    low = min(max(0, _int(schema.get("minLength"), 0)), _MAX_LENGTH)
    value = value + "x" * max(0, low - len(value))
    high = _int(schema.get("maxLength"), len(value))
    return value[: max(high, low)]


def _resolve(reference: str, root: Mapping[str, Any]) -> Any:
    """A local ``#/$defs/Name`` (or ``#/definitions/Name``) reference's schema; {} if none."""
    if not reference.startswith("#"):
        return {}
    node: Any = root
    for part in reference.removeprefix("#").strip("/").split("/"):
        if not part:
            continue
        part = part.replace("~1", "/").replace("~0", "~")
        node = node.get(part) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else {}


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _int(value: Any, fallback: int) -> int:
    number = _float(value)
    return fallback if number is None else int(number)
