"""The questions running calls put to a person (``ctx.ask``) and how they are answered.

A question shows on its call (a ``question`` progress entry: every view and listener
sees it) until it is answered. Who answers is the runtime's ``ask_person`` hook, set
by its host: it may answer at once (a program's own policy, a terminal prompt), or
return None to leave the question for a person, who answers it later through
``Runtime.answer`` (the page, the terminal UI). With no hook, or when the call's owner
said nobody is there (``CallOptions.nobody_to_ask``: a board's autonomous turn), the
question is declined at once, saying why nobody can be asked. The call goes on running meanwhile; a
cancel or a timeout of the call ends its wait.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Coroutine
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

import anyio

from agentos._errors import UsageError
from agentos._kernel.answer_form import fitting
from agentos._log import agentos_logger
from components import Answer
from components import AnswerAction
from components import CallId
from components import CallSnapshot
from components import CallStatus
from components import JsonObject
from components import Question
from components import SessionId


@dataclass(frozen=True, slots=True)
class Asked:
    """A question and the call that asks it, as the ``ask_person`` hook is given it."""

    call_id: CallId
    session_id: SessionId
    tool_name: str
    question: Question


AskPerson = Callable[[Asked], Awaitable[Answer | None]]
"""The host's hook: an answer now, or None to wait for ``Runtime.answer``."""

AskFunction = Callable[
    [Asked, Callable[[Answer | None], None], str | None], Coroutine[Any, Any, Answer]
]
"""How a ``ToolContext`` asks (``Questions.ask``): the question, how to show it on the call,
and why nobody is there to answer it (None: the hook decides)."""

NOBODY = (
    "nobody to ask: this runtime's host has no way to reach a person "
    "(give it one with Host(ask_person=...), or run it under agentos serve, chat or run)"
)


WITHDRAWN = "the question was withdrawn before anyone answered"


class _Waiting:
    __slots__ = ("answer", "answered")

    def __init__(self) -> None:
        self.answered = anyio.Event()
        self.answer: Answer | None = None

    def give(self, answer: Answer) -> bool:
        if self.answer is not None:
            return False
        self.answer = answer
        self.answered.set()
        return True


class Questions:
    """The hook that answers, and the calls waiting for an answer (one question a call)."""

    def __init__(self) -> None:
        self.ask_person: AskPerson | None = None
        self._waiting: dict[CallId, _Waiting] = {}

    def waiting(self, call_id: CallId) -> bool:
        return call_id in self._waiting

    async def ask(
        self,
        asked: Asked,
        report: Callable[[Answer | None], None],
        nobody: str | None = None,
    ) -> Answer:
        """Put ``asked`` to a person; ``report(None)`` shows the question on the call and
        ``report(answer)`` its answer. ``nobody``: why no person is there (the call's
        ``nobody_to_ask``): declined at once, saying so. Cancelling the call ends the wait."""
        if asked.call_id in self._waiting:
            raise UsageError(f"call {asked.call_id} already waits for an answer: ask one at a time")
        hook = self.ask_person
        report(None)
        if nobody is not None or hook is None:
            answer = Answer(AnswerAction.DECLINE, reason=NOBODY if nobody is None else nobody)
            report(answer)
            return answer
        waiting = self._waiting[asked.call_id] = _Waiting()
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_consult, hook, asked, waiting)
                await waiting.answered.wait()
                group.cancel_scope.cancel()
        finally:
            del self._waiting[asked.call_id]
            # Asked no more (the call ended, or the asker gave up): it shows no more.
            report(waiting.answer or Answer(AnswerAction.CANCEL, reason=WITHDRAWN))
        return waiting.answer or Answer(AnswerAction.CANCEL, reason=WITHDRAWN)

    def set_hook(self, hook: AskPerson | None) -> None:
        if hook is not None and not callable(hook):
            raise TypeError(f"ask_person takes an async function, got {type(hook).__name__}")
        self.ask_person = hook

    def answer(self, call: CallSnapshot, answer: Answer) -> bool:
        """Give ``call``'s question its answer, with the form's defaults; False if it asks
        none now (an ended call's work may not know it yet); ``ValueError`` naming a field
        that does not fit."""
        waiting = self._waiting.get(call.call_id)
        question = call.question
        if call.status is not CallStatus.RUNNING or question is None or waiting is None:
            return False
        if waiting.answer is not None:
            return False
        return waiting.give(fitting(with_defaults(answer, question.form), question.form))


async def _consult(hook: AskPerson, asked: Asked, waiting: _Waiting) -> None:
    """Ask the hook; an answer it gives ends the wait, None leaves it to ``answer``. A hook
    that fails, or answers what no asker can read, declines saying why."""
    form = asked.question.form
    try:
        answer = await hook(asked)
        if answer is not None:
            answer = fitting(with_defaults(checked_answer(answer), form), form)
    except Exception as error:
        logger, _, _ = agentos_logger()
        logger.warning("ask_person.failed", call_id=asked.call_id, error=repr(error))
        waiting.give(Answer(AnswerAction.DECLINE, reason=f"asking failed: {error!r}"))
        return
    if answer is not None:
        waiting.give(answer)


def with_defaults(answer: Answer, form: JsonObject | None) -> Answer:
    """An accepted answer with the form's ``default`` for each field the person left out
    (MCP's SEP-1034: a client applies the defaults a form gives)."""
    properties = None if form is None else form.get("properties")
    if answer.action is not AnswerAction.ACCEPT or not isinstance(properties, dict):
        return answer
    given = answer.content or {}
    defaults = {
        name: field["default"]
        for name, field in properties.items()
        if isinstance(field, dict) and "default" in field and name not in given
    }
    return replace(answer, content={**defaults, **given}) if defaults else answer


def checked_answer(answer: object) -> Answer:
    """``answer`` if it is one an asker can read, else ``TypeError`` saying why."""
    if not isinstance(answer, Answer):
        raise TypeError(f"an answer is an agentos.Answer, not {type(answer).__name__}")
    action = AnswerAction(answer.action)  # ValueError for a word that is no action
    content = answer.content
    if content is not None and not isinstance(content, dict):
        raise TypeError(f"an answer's content is a JSON object, not {type(content).__name__}")
    if action is not AnswerAction.ACCEPT and content is not None:
        raise ValueError(f"a {action.value} answer carries no content")
    if content is not None:
        for key, value in content.items():
            if not isinstance(value, str | int | float | bool | list | dict | type(None)):
                raise TypeError(f"answer field {key!r}: {type(value).__name__} is not JSON")
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"answer field {key!r}: {value} is not a JSON number")
    return answer if action is answer.action else Answer(action, content, answer.reason)
