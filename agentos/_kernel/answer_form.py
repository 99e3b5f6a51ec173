"""Whether an accepted answer fills its question's form (a JSON Schema object of flat
fields): every required field, no field the form lacks, each value of its field's type and
among its choices. Checked before the asker gets it, so a wrong field is refused naming it
and the question stays, instead of the asker failing on a value it cannot read."""

from __future__ import annotations

import math

from components import Answer
from components import AnswerAction
from components import Json
from components import JsonObject


def fitting(answer: Answer, form: JsonObject | None) -> Answer:
    """``answer`` if it fits ``form`` (its defaults already applied); else ``ValueError``
    naming what is wrong."""
    if answer.action is not AnswerAction.ACCEPT:
        return answer
    content = answer.content or {}
    if form is None:
        if content:
            raise ValueError("this question has no form: accept it with no 'content'")
        return answer
    properties = form.get("properties")
    fields = properties if isinstance(properties, dict) else {}
    required = form.get("required")
    for name in required if isinstance(required, list) else []:
        if isinstance(name, str) and name not in content:
            raise ValueError(f"field {name!r} is required")
    for name, value in content.items():
        field = fields.get(name)
        if not isinstance(field, dict):
            raise ValueError(f"the form has no field {name!r}")
        problem = _problem(field, value)
        if problem is not None:
            raise ValueError(f"field {name!r}: {problem}")
    return answer


def _problem(field: JsonObject, value: Json) -> str | None:
    """What is wrong with ``value`` for the field ``field`` describes (None: nothing)."""
    kind = field.get("type")
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value} is not a number JSON can carry"
    if kind == "array":
        items = field.get("items")
        if not isinstance(value, list):
            return f"a list is expected, not {_named(value)}"
        if not all(isinstance(item, str | int | float | bool) for item in value):
            return "a list of plain values is expected"
        chosen = [_problem(items, item) for item in value] if isinstance(items, dict) else []
        return next((problem for problem in chosen if problem is not None), None)
    expected = {
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
    }.get(kind if isinstance(kind, str) else "", True)
    if not expected:
        return f"{'an' if str(kind)[0] in 'aeiou' else 'a'} {kind} is expected, not {_named(value)}"
    choices = _choices(field)
    if choices is not None and value not in choices:
        return f"{value!r} is not one of {', '.join(repr(c) for c in choices)}"
    return None


def _choices(field: JsonObject) -> list[Json] | None:
    """The values a field may take: its ``enum``, or the ``const`` of each ``oneOf``/``anyOf``."""
    listed = field.get("enum")
    if isinstance(listed, list):
        return listed
    for key in ("oneOf", "anyOf"):
        options = field.get(key)
        if isinstance(options, list):
            return [option.get("const") for option in options if isinstance(option, dict)]
    return None


def _named(value: Json) -> str:
    return {bool: "true or false", str: "text", list: "a list", dict: "an object"}.get(
        type(value), "null" if value is None else "a number"
    )
