"""The questions a task's turn puts to its A2A client: each is handed to the task that
follows the asking call's session, which shows them one at a time (``input-required``) and
takes a message on the task as the answer. A question the client leaves unanswered for the
ask timeout after it was shown, one beyond the most a task holds, or one handed to a task
that has ended, is declined saying why: the call goes on."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import anyio
from a2a.helpers import get_data_parts
from a2a.helpers import get_message_text
from a2a.helpers import new_data_part
from a2a.types.a2a_pb2 import Message

from agentos import Answer
from agentos import AnswerAction
from agentos import Asked
from agentos import Clock
from agentos import JsonObject
from agentos import Question

QUESTIONS_HELD = 100
"""The most questions a task holds for its client at once: one more is declined."""
WORDS = {"decline": AnswerAction.DECLINE, "cancel": AnswerAction.CANCEL}
"""A text answer that is one of these words declines (or cancels) the question."""
ACTIONS = "accept, decline or cancel"
"""The words that answer a question with no field (a confirmation, or a page to open)."""


def declined(reason: str) -> Answer:
    return Answer(AnswerAction.DECLINE, reason=reason)


def check_ask_timeout(seconds: float) -> float:
    """``seconds`` if it can be an ask timeout (more than 0; ``math.inf``: never), else
    ``ValueError`` saying why."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise TypeError(f"ask_timeout is a number of seconds, not {type(seconds).__name__}")
    if math.isnan(seconds) or seconds <= 0:
        raise ValueError(f"ask_timeout is a number of seconds above 0, not {seconds}")
    return float(seconds)


@dataclass(eq=False, slots=True)
class Handed:
    """A question handed to a task. Its hook waits in ``scope`` until the call has its
    answer (the runtime then ends the hook), or until it is ``declined`` here."""

    asked: Asked
    shown_at: float | None = None
    """When (the runtime's clock) the task showed it to its client."""
    shown: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    declined: Answer | None = None

    def decline(self, reason: str) -> None:
        if self.declined is None:
            self.declined = declined(reason)
        self.scope.cancel()


class TaskQuestions:
    """The questions handed to one task: ``received`` as they come, ``waiting`` until
    answered or declined. ``ended`` is told of each shown question once it waits no more
    (answered, declined, or its call ended)."""

    def __init__(self, clock: Clock, timeout: float, ended: Callable[[Handed], None]) -> None:
        self._clock = clock
        self._timeout = timeout
        self._ended = ended
        self._send, self.received = anyio.create_memory_object_stream[Handed](QUESTIONS_HELD)
        self.waiting: list[Handed] = []

    async def ask(self, asked: Asked) -> Answer:
        """Hand ``asked`` to the task and wait: what the hook answers (a decline) unless the
        client answers first (the runtime then cancels this wait)."""
        if len(self.waiting) >= QUESTIONS_HELD:
            return declined(
                f"{QUESTIONS_HELD} questions of this task already wait for its A2A client: "
                "it is asked no more until one is answered"
            )
        handed = Handed(asked)
        try:
            self._hand(handed)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return declined("the A2A task that followed this call's session has ended")
        self.waiting.append(handed)
        try:
            with handed.scope:
                await handed.shown.wait()
                assert handed.shown_at is not None
                await _until(self._clock, handed.shown_at + self._timeout)
                handed.declined = declined(
                    f"the A2A client did not answer within {self._timeout:g} s"
                )
        finally:
            self.waiting.remove(handed)
            if handed.shown.is_set():
                self._ended(handed)
        assert handed.declined is not None  # else the call's answer cancelled the wait
        return handed.declined

    def _hand(self, handed: Handed) -> None:
        """Put ``handed`` where the task reads. A full buffer holds questions that wait no
        more (their calls ended before the task read them): they are let go to make room,
        as fewer than ``QUESTIONS_HELD`` wait."""
        try:
            self._send.send_nowait(handed)
            return
        except anyio.WouldBlock:
            pass
        unread: list[Handed] = []
        with contextlib.suppress(anyio.WouldBlock):
            while True:
                unread.append(self.received.receive_nowait())
        for each in [*[h for h in unread if h in self.waiting], handed]:
            self._send.send_nowait(each)

    def show(self, handed: Handed) -> bool:
        """Mark ``handed`` shown to the client now; False if it waits no more (its call has
        ended, or it was declined), so it is not to be shown."""
        if handed not in self.waiting or handed.declined is not None:
            return False
        handed.shown_at = self._clock.monotonic()
        handed.shown.set()
        return True

    def close(self, reason: str) -> None:
        """The task follows its turn no more: what waits is declined for ``reason``, and
        what comes later is told so."""
        self._send.close()
        self.received.close()
        for handed in self.waiting:
            handed.decline(reason)


async def _until(clock: Clock, deadline: float) -> None:
    """Wait until ``clock`` reads ``deadline`` (a ``ManualClock``: until advanced there)."""
    send, advanced = anyio.create_memory_object_stream[None](1)

    def wake() -> None:
        with contextlib.suppress(anyio.WouldBlock):  # a wake is waiting already
            send.send_nowait(None)

    forget = clock.on_advance(wake)
    with send, advanced:
        try:
            while (budget := clock.sleep_budget(deadline)) != 0.0:
                with anyio.move_on_after(math.inf if budget is None else budget):
                    await advanced.receive()
        finally:
            forget()


def question_part(asked: Asked) -> Any:
    """The question as data: its call, message, form (or URL) and who asks."""
    return new_data_part(
        {
            "call_id": asked.call_id,
            "tool_name": asked.tool_name,
            "question": asked.question.to_json(),
        }
    )


def answer_of(message: Message, question: Question) -> Answer:
    """What a message answers a question with: its data (the form's fields), else its
    text: ``decline`` or ``cancel`` declines; otherwise the form's one text field, or the
    first required one. A question with no field (a confirmation, or a page to open) takes
    only ``accept`` beside those: other text is ``ValueError``, as it says neither."""
    data = [part for part in get_data_parts(message.parts) if isinstance(part, dict)]
    if data:
        return Answer(AnswerAction.ACCEPT, content=_whole_integers(data[0], question.form))
    text = get_message_text(message).strip()
    action = WORDS.get(text.lower())
    if action is not None:
        return Answer(action, reason=f"the A2A client said {text}")
    form = question.form or {}
    properties = form.get("properties")
    if not isinstance(properties, dict) or not properties:
        if text.lower() == "accept":
            return Answer(AnswerAction.ACCEPT, content={})
        raise ValueError(f"this question is answered {ACTIONS}, not {text!r}")
    required = form.get("required")
    names = [n for n in (required if isinstance(required, list) else []) if n in properties]
    name = str((names or list(properties))[0])
    return Answer(AnswerAction.ACCEPT, content={name: text})


def _whole_integers(content: dict[str, Any], form: JsonObject | None) -> JsonObject:
    """``content`` with each whole float the form says is an integer (a field, an array's
    item, a type list such as ``["integer", "null"]``) an int again: A2A's data parts
    carry every number as a float, so ``3`` arrives as ``3.0``."""
    fitted = _fitted(content, {"type": "object", **(form or {})})
    assert isinstance(fitted, dict)
    return fitted


def _fitted(value: Any, schema: Any) -> Any:
    """``value`` as ``schema`` says, as far as integers go."""
    if not isinstance(schema, dict):
        return value
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "integer" in kinds and isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_fitted(item, schema.get("items")) for item in value]
    if isinstance(value, dict):
        properties = schema.get("properties")
        fields = properties if isinstance(properties, dict) else {}
        return {name: _fitted(item, fields.get(name)) for name, item in value.items()}
    return value
