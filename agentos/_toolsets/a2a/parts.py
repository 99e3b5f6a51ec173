"""What A2A's messages, parts and states become in agentos, and back: a task's state in the
one status vocabulary's words, a message's parts as text, data and files, artifacts as a
call's result, an ``input-required`` message as a question, an answer as a message.

The SDK's types are protobuf messages: they are imported where used, so that importing
agentos does not import the SDK.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from typing import TypeGuard

from components import Answer
from components import AnswerAction
from components import Json
from components import JsonObject

STATES = {
    1: "submitted",
    2: "working",
    3: "completed",
    4: "failed",
    5: "cancelled",
    6: "input_required",
    7: "rejected",
    8: "auth_required",
}
"""A2A's ``TaskState`` values in the words a call's progress uses (``canceled`` is spelled
as agentos spells ``cancelled``)."""
FINAL = frozenset({"completed", "failed", "cancelled", "rejected"})
"""The states a task never leaves."""
INTERRUPTED = frozenset({"input_required", "auth_required"})
"""The states in which a task waits for its client."""
UNSAID = "The remote agent needs more input to go on."
"""The question of an ``input-required`` status that says none."""
ANSWER_FIELD = "answer"
"""The one field of the form a free-text question is asked with."""


def state_word(state: int) -> str:
    """A ``TaskState`` in the progress's words (``unknown`` for one this SDK lacks)."""
    return STATES.get(state, "unknown")


def _whole(value: Any) -> Json:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {str(k): _whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return value  # type: ignore[no-any-return]


def text_of(parts: Iterable[Any]) -> str:
    """The text parts, one per line."""
    return "\n".join(part.text for part in parts if part.WhichOneof("content") == "text")


def data_of(parts: Iterable[Any]) -> list[Json]:
    """The data parts' data, whole numbers as ints again (protobuf keeps doubles)."""
    from a2a.helpers import get_data_parts

    return [_whole(data) for data in get_data_parts(list(parts))]


def files_of(parts: Iterable[Any]) -> list[JsonObject]:
    """The file parts (a URL, or raw bytes) as what they are: a URL is kept, bytes are
    said by their size (the model cannot read them)."""
    files: list[JsonObject] = []
    for part in parts:
        kind = part.WhichOneof("content")
        if kind not in ("url", "raw"):
            continue
        entry: JsonObject = {"media_type": part.media_type or None, "name": part.filename or None}
        if kind == "url":
            entry["url"] = part.url
        else:
            entry["bytes"] = len(part.raw)
        files.append({k: v for k, v in entry.items() if v is not None})
    return files


def result_of(parts: list[Any], task_id: str | None, context_id: str | None) -> JsonObject:
    """A call's result from what the agent gave (its artifacts' parts, or its message's):
    the text, the data and the files it holds, and the ids to continue with."""
    result: JsonObject = {"text": text_of(parts)}
    data, files = data_of(parts), files_of(parts)
    if data:
        result["data"] = data
    if files:
        result["files"] = list(files)
    if task_id:
        result["task_id"] = task_id
    if context_id:
        result["context_id"] = context_id
    return result


@dataclass(frozen=True, slots=True)
class Asking:
    """What an ``input-required`` status message asks: ``text`` for the person, ``form``
    the JSON Schema of the answer (None: free text) or ``url`` a page to open instead;
    ``peer``: asked by a call of an agentos agent (``agentos a2a``), which takes a
    declined question as an answer too."""

    text: str
    form: JsonObject | None = None
    url: str | None = None
    peer: bool = False


def question_of(message: Any) -> Asking:
    """What an ``input-required`` status message asks. Its data part may be the answer's
    schema itself (an object schema), or agentos's question of a call
    (``{"call_id", "tool_name", "question": {"message", "form", "url", ...}}``)."""
    parts = list(message.parts) if message is not None else []
    words = text_of(parts)
    for data in data_of(parts):
        if _is_form(data):
            return Asking(words or UNSAID, data)
        asked = data.get("question") if isinstance(data, dict) else None
        if isinstance(asked, dict):
            said, form, url = (asked.get(k) for k in ("message", "form", "url"))
            if isinstance(said, str) and said and said not in words:
                words = f"{words}\n{said}" if words else said  # a refused answer says why first
            return Asking(
                words or UNSAID,
                form if isinstance(form, dict) and form else None,
                url if isinstance(url, str) and url else None,
                peer=True,
            )
    return Asking(words or UNSAID)


def _is_form(data: Json) -> TypeGuard[JsonObject]:
    return isinstance(data, dict) and data.get("type") == "object" and "properties" in data


FREE_TEXT: JsonObject = {
    "type": "object",
    "properties": {ANSWER_FIELD: {"type": "string", "title": "Your answer"}},
    "required": [ANSWER_FIELD],
}
"""The form a free-text question is asked with."""


def user_message(
    text: str | None,
    data: JsonObject | None,
    *,
    task_id: str | None = None,
    context_id: str | None = None,
) -> Any:
    """A message from agentos's side: a text part, a data part, or both."""
    from a2a.helpers import new_data_part
    from a2a.helpers import new_text_part
    from a2a.types import Message
    from a2a.types import Role

    parts = []
    if text is not None:
        parts.append(new_text_part(text))
    if data is not None:
        parts.append(new_data_part(data))
    return Message(
        role=Role.ROLE_USER,
        message_id=str(uuid.uuid4()),
        parts=parts,
        task_id=task_id or None,
        context_id=context_id or None,
    )


def answer_message(answer: Answer, asking: Asking, task_id: str, context_id: str | None) -> Any:
    """The person's answer as a message on the task: the form's values as data when the
    agent gave a form, else the free text; to a peer's question asked with a URL or with
    no form (a confirmation), or one the person declined, the action's word (``accept``,
    ``decline``, ``cancel``), which ``agentos a2a`` hears as that action."""
    ids = {"task_id": task_id, "context_id": context_id}
    content = answer.content or {}
    confirmation = asking.peer and asking.form is None
    if answer.action is not AnswerAction.ACCEPT or asking.url is not None or confirmation:
        return user_message(answer.action.value, None, **ids)
    if asking.form is not None:
        return user_message(None, content, **ids)
    return user_message(str(content.get(ANSWER_FIELD, "")), None, **ids)
