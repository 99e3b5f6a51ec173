"""JSON schemas as tools' input checks: refused when they cannot be used, never raising
anything but the call's own failure when a call is checked against them.

A server may list any schema; one that is too large, nested without end or that refers
to itself with no input to descend into (``{"$ref": "#"}``) would take the host's
memory or stack when a call is checked. Such a schema leaves its tool out at
definition; a check that still fails (recursion that only some input reaches) fails
that call, never the session.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agentos._errors import ToolDefinitionError

MAX_SCHEMA_CHARS = 200_000
"""An input schema larger than this, as JSON, is refused: it would go to the model on
every turn, and no tool needs it."""
MAX_SCHEMA_DEPTH = 64
"""An input schema nested deeper than this is refused."""


class UncheckableInput(ValueError):
    """Checking a call's input against its schema failed (not: the input does not fit)."""


def schema_validator(name: str, schema: object) -> Any:
    """A validator of ``schema``, which must be a usable JSON schema whose type is object;
    ``ToolDefinitionError`` naming the tool and what is wrong otherwise."""
    import jsonschema  # only schema tools need it (85 ms to import)

    if not isinstance(schema, dict):
        raise ToolDefinitionError(
            f"tool {name}: the input schema must be a JSON object, got {type(schema).__name__}"
        )
    if schema.get("type") != "object":
        raise ToolDefinitionError(
            f'tool {name}: the input schema must have "type": "object" '
            f"(got {schema.get('type')!r}): a tool's input is a JSON object"
        )
    try:
        size = len(json.dumps(schema))
    except (TypeError, ValueError, RecursionError) as error:
        raise ToolDefinitionError(
            f"tool {name}: the input schema is not JSON ({type(error).__name__})"
        ) from None
    if size > MAX_SCHEMA_CHARS:
        raise ToolDefinitionError(
            f"tool {name}: the input schema is {size:,} characters of JSON, "
            f"over {MAX_SCHEMA_CHARS:,}"
        )
    if _depth(schema) > MAX_SCHEMA_DEPTH:
        raise ToolDefinitionError(
            f"tool {name}: the input schema is nested more than {MAX_SCHEMA_DEPTH} levels deep"
        )
    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        validator.check_schema(schema)
    except jsonschema.SchemaError as error:
        where = "/".join(str(part) for part in error.absolute_path) or "(top)"
        raise ToolDefinitionError(
            f"tool {name}: the input schema is not a valid JSON schema: at {where}: {error.message}"
        ) from None
    checker = validator(schema)
    try:
        problems(checker, {})
    except UncheckableInput as error:
        raise ToolDefinitionError(
            f"tool {name}: the input schema cannot be used: {error}"
        ) from None
    return checker


def problems(checker: Any, raw: object) -> list[str]:
    """What in ``raw`` does not fit ``checker``'s schema, each as ``path: message``;
    ``UncheckableInput`` if the check itself fails (a reference that never ends, say)."""
    try:
        errors = sorted(checker.iter_errors(raw), key=lambda e: e.path)
        return [
            f"{'.'.join(str(part) for part in error.absolute_path) or '(input)'}: {error.message}"
            for error in errors
        ]
    except RecursionError:
        raise UncheckableInput("its references never end (a $ref to itself)") from None
    except Exception as error:
        raise UncheckableInput(f"checking it failed: {type(error).__name__}: {error}") from None


_TYPES: dict[str, Callable[[object], bool]] = {
    "string": lambda value: type(value) is str,
    "integer": lambda value: type(value) is int,
    "number": lambda value: type(value) is int or type(value) is float,
    "boolean": lambda value: type(value) is bool,
}
_NOTES = frozenset({"description", "title", "default", "examples", "$schema"})
"""Keywords that say something of a value but check nothing."""


def quick_check(schema: dict[str, Any]) -> Callable[[dict[str, Any]], bool] | None:
    """For an object of named scalar properties (the schema most tools have), a test that
    says True only of input that fits it, with no validator's walk; None for any other
    schema. An input it does not pass goes to the validator, which names each problem."""
    if not set(schema) <= _NOTES | {"type", "properties", "required", "additionalProperties"}:
        return None
    properties, required = schema.get("properties", {}), schema.get("required", [])
    closed = schema.get("additionalProperties", True)
    if not (isinstance(properties, dict) and isinstance(required, list) and type(closed) is bool):
        return None
    checks: dict[str, Callable[[object], bool]] = {}
    for name, spec in properties.items():
        check = _scalar_check(spec)
        if check is None:
            return None
        checks[name] = check
    needed = frozenset(name for name in required if isinstance(name, str))

    def fits(raw: dict[str, Any]) -> bool:
        if not needed <= raw.keys() or (closed is False and not raw.keys() <= checks.keys()):
            return False
        return all(name not in checks or checks[name](value) for name, value in raw.items())

    return fits


def _scalar_check(spec: object) -> Callable[[object], bool] | None:
    """The test of one property: a single scalar type, and a string's length bounds."""
    if not isinstance(spec, dict) or not set(spec) <= _NOTES | {"type", "minLength", "maxLength"}:
        return None
    kind, shortest, longest = spec.get("type"), spec.get("minLength", 0), spec.get("maxLength")
    of_type = _TYPES.get(kind) if type(kind) is str else None
    if of_type is None or type(shortest) is not int or type(longest) not in (int, type(None)):
        return None
    if kind != "string":
        return None if "minLength" in spec or "maxLength" in spec else of_type
    return lambda value: (
        type(value) is str and len(value) >= shortest and (longest is None or len(value) <= longest)
    )


def _depth(schema: object) -> int:
    """How deeply objects and arrays nest in ``schema``, counted without recursion."""
    deepest = 0
    stack: list[tuple[object, int]] = [(schema, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: list[object] = list(value.values())
        elif isinstance(value, list):
            children = list(value)
        else:
            continue
        deepest = max(deepest, depth)
        if depth > MAX_SCHEMA_DEPTH:
            return depth
        stack.extend((child, depth + 1) for child in children)
    return deepest
