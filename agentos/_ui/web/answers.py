"""A person's answer to a call's question as the page posts it (``{"action", "content"}``),
read into an ``Answer`` (``Host.answer`` checks it against the question's form)."""

from __future__ import annotations

from agentos import Answer
from agentos import AnswerAction
from agentos._ui.web.pages import WebError
from components import JsonObject

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
