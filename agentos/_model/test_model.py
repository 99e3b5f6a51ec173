"""``TestModel``: an offline model that smoke-tests an agent's tools (``model = "test"``).

Its first reply calls every tool the request offers once (but those it is told to
skip, such as the capabilities), with arguments made from each tool's schema; once
every call has an outcome it replies with a text quoting each one. Like Pydantic AI's
``TestModel``: a whole agent file runs without a key, and every tool is exercised.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from typing import Any

from agentos._model.messages import Block, blocks_of, content_text
from agentos._model.provider import ModelRequest, ModelResponse, text

PREFIX = "toolu_test_"
_LATE = re.compile(r"^\[tool call (\S+) \((.*?)\) finished: (\w+)\] (.*)$", re.DOTALL)
_DEPTH = 8


class TestModel:
    """Calls every offered tool once (but ``skip``), then quotes every result."""

    __test__ = False  # not a pytest test class
    name = "test"

    def __init__(self, skip: Collection[str] = ()) -> None:
        self.skip = frozenset(skip)
        self.answered = 0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.answered += 1
        called = _called(request)
        if not called:
            return self._call_everything(request)
        outcomes = _outcomes(request)
        waiting = [name for use_id, name in called.items() if use_id not in outcomes]
        if waiting:
            return text(f"waiting for: {', '.join(waiting)}")
        lines = [f"{name}: {outcomes[use_id]}" for use_id, name in called.items()]
        return text("\n".join(lines))

    def _call_everything(self, request: ModelRequest) -> ModelResponse:
        tools = [t for t in request.tools if t.get("name") not in self.skip]
        if not tools:
            return text("this agent has no tools to call")
        content: list[Block] = [
            {
                "type": "tool_use",
                "id": f"{PREFIX}{index}",
                "name": str(definition["name"]),
                "input": example_arguments(definition.get("input_schema") or {}),
            }
            for index, definition in enumerate(tools, start=1)
        ]
        return ModelResponse(content, "tool_use")


def _called(request: ModelRequest) -> dict[str, str]:
    """The tool uses this model made in the conversation: id to tool name."""
    return {
        str(block["id"]): str(block.get("name"))
        for message in request.messages
        if message.get("role") == "assistant"
        for block in blocks_of(message)
        if block.get("type") == "tool_use" and str(block.get("id", "")).startswith(PREFIX)
    }


def _outcomes(request: ModelRequest) -> dict[str, str]:
    """Each call's outcome as a line: a tool_result that is not a placeholder, or the
    message that told it late."""
    found: dict[str, str] = {}
    for message in request.messages:
        if message.get("role") != "user":
            continue
        for block in blocks_of(message):
            if block.get("type") == "tool_result":
                said = _said(block.get("content"))
                if not _placeholder(said):
                    use_id = str(block.get("tool_use_id"))
                    found[use_id] = f"error: {said}" if block.get("is_error") else said
            elif block.get("type") == "text":
                late = _LATE.match(str(block.get("text", "")))
                if late is not None:
                    found[late[1]] = late[4].removeprefix("result: ")
    return found


def _said(content: object) -> str:
    if isinstance(content, list):
        return content_text(b for b in content if isinstance(b, Mapping))
    return str(content)


def _placeholder(said: str) -> bool:
    try:
        value = json.loads(said)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("agentos_placeholder") is True


def example_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Input that fits ``schema`` (an object's JSON schema): its required fields filled."""
    value = _example(schema, schema, 0)
    return value if isinstance(value, dict) else {}


def _example(schema: Any, root: Mapping[str, Any], depth: int) -> Any:
    if not isinstance(schema, Mapping) or depth > _DEPTH:
        return None
    if "$ref" in schema:
        return _example(_resolve(str(schema["$ref"]), root), root, depth + 1)
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        branches = [b for b in schema.get(key) or () if _type(b) != "null"]
        if branches:
            return _example(branches[0], root, depth + 1)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            value = _example(part, root, depth + 1)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    return _typed(schema, root, depth)


def _typed(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> Any:
    kind = _type(schema)
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties") or {}
        return {
            name: _example(properties.get(name, {}), root, depth + 1)
            for name in schema.get("required") or ()
        }
    if kind == "array":
        item = _example(schema.get("items", {}), root, depth + 1)
        return [item] * max(1, int(schema.get("minItems", 1)))
    if kind in ("integer", "number"):
        return _number(schema, kind)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _string(schema)


def _type(schema: Any) -> str | None:
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        return str(kinds[0]) if kinds else "null"
    return None if kind is None else str(kind)


def _number(schema: Mapping[str, Any], kind: str) -> int | float:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    value: float = 1
    if low is not None:
        value = low + (1 if "exclusiveMinimum" in schema and "minimum" not in schema else 0)
    if high is not None and value > high:
        value = high - (1 if "exclusiveMaximum" in schema and "maximum" not in schema else 0)
    step = schema.get("multipleOf")
    if isinstance(step, int | float) and step > 0:
        value = step * max(1, round(value / step))
    return int(value) if kind == "integer" else float(value)


def _string(schema: Mapping[str, Any]) -> str:
    examples = {
        "date": "2026-01-02",
        "date-time": "2026-01-02T03:04:05Z",
        "email": "someone@example.com",
        "uri": "https://example.com",
    }
    value = examples.get(str(schema.get("format")), "example")
    low = int(schema.get("minLength", 0))
    value = value + "x" * max(0, low - len(value))
    high = schema.get("maxLength")
    return value[: int(high)] if isinstance(high, int) and high >= low else value


def _resolve(reference: str, root: Mapping[str, Any]) -> Any:
    """A local ``#/$defs/Name`` (or ``#/definitions/Name``) reference's schema."""
    node: Any = root
    for part in reference.removeprefix("#/").split("/"):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node
