"""A person's answer to a call's question as the page posts it (``{"action", "content"}``):
read into an ``Answer``, then checked against the question's form (a JSON Schema object of
flat fields), so a wrong field is refused saying which and the question stays to be
answered again, instead of the asker failing on a value it cannot read."""

from __future__ import annotations

import math

from agentos import Answer, AnswerAction, Question
from agentos._ui.web.pages import WebError
from components import Json, JsonObject

_ACTIONS = ", ".join(action.value for action in AnswerAction)


def answer_of(body: JsonObject) -> Answer:
    """The answer ``body`` gives; 400 for an action that is none, or content that is not
    an object or comes with anything but accept."""
    action = body.get("action")
    if not isinstance(action, str) or action not in {a.value for a in AnswerAction}:
        raise WebError(400, "bad_request", f"'action' must be one of {_ACTIONS}")
    content = body.get("content")
    if content is not None and action != AnswerAction.ACCEPT:
        raise WebError(400, "bad_request", f"a {action} answer carries no 'content'")
    if content is not None and not isinstance(content, dict):
        raise WebError(400, "bad_request", "'content' must be an object: the form's fields")
    return Answer(AnswerAction(action), content)


def fitting(answer: Answer, question: Question) -> Answer:
    """``answer`` if its content fills ``question``'s form: every required field, no field
    the form lacks, each value of its field's type (and among its choices); else 400."""
    if answer.action is not AnswerAction.ACCEPT:
        return answer
    content = answer.content or {}
    if question.form is None:
        if content:
            raise _wrong("this question has no form: accept it with no 'content'")
        return answer
    properties = question.form.get("properties")
    fields = properties if isinstance(properties, dict) else {}
    required = question.form.get("required")
    for name in required if isinstance(required, list) else []:
        if isinstance(name, str) and name not in content:
            raise _wrong(f"field {name!r} is required")
    for name, value in content.items():
        field = fields.get(name)
        if not isinstance(field, dict):
            raise _wrong(f"the form has no field {name!r}")
        problem = _problem(field, value)
        if problem is not None:
            raise _wrong(f"field {name!r}: {problem}")
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


def _wrong(message: str) -> WebError:
    return WebError(400, "invalid_answer", message)
