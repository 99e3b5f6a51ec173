"""agentos's ``AgentExecutor``: a message starts a turn of the task's context (an agentos
session) and the task follows it.

The task is ``working`` while the turn runs, each of its calls' events told as a status
update; ``input-required`` while one of its calls asks a person (the question is the status
message, and a message on the task answers it); then ``completed`` with the model's answer
(an artifact, and the status message), or ``failed``. A cancel stops the calls this turn
started, and only those. While a task waits for an answer its executor has returned (the
SDK's way for an interrupted task); the turn goes on in the host, its events kept for the
next message.
"""

from __future__ import annotations

import uuid
from typing import Any

import anyio
from a2a.helpers import (
    get_data_parts,
    get_message_text,
    new_data_part,
    new_task,
    new_text_artifact,
    new_text_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.types.a2a_pb2 import (
    Message,
    Role,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

from agentos import (
    AgentConfig,
    AgentOSError,
    Answer,
    AnswerAction,
    CallEvent,
    CallEventKind,
    Host,
    ProgressKind,
    Question,
    Session,
    SessionStatus,
    UnknownCallError,
    UnknownSessionError,
)
from agentos._ui.posted_turn import PostedTurn

CANCELLED = "the A2A client cancelled the task"
"""The reason the calls of a cancelled task's turn are given."""
WORDS = {"decline": AnswerAction.DECLINE, "cancel": AnswerAction.CANCEL}
"""A text answer that is one of these words declines (or cancels) the question."""


class _Asking:
    """The question a call of a task's turn waits to have answered."""

    def __init__(self, call_id: str, question: Question) -> None:
        self.call_id = call_id
        self.question = question


class _TaskTurn:
    """A task's turn as its executor follows it, across the messages of the task."""

    def __init__(self, turn: PostedTurn) -> None:
        self.turn = turn
        self.asking: _Asking | None = None
        self.cancelled = False


class TurnExecutor(AgentExecutor):
    """Runs each task's turn in ``host``, in sessions of ``config`` (a new context starts
    one, its id the context's)."""

    def __init__(self, host: Host, config: AgentConfig) -> None:
        self._host = host
        self._config = config
        self._turns: dict[str, _TaskTurn] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = _ids(context)
        message = context.message
        assert message is not None  # a send always has one
        following = self._turns.get(task_id)
        if following is not None and following.asking is not None:
            refused = self._answer(following, message)
            if refused is not None:
                await _status(
                    event_queue,
                    task_id,
                    context_id,
                    TaskState.TASK_STATE_INPUT_REQUIRED,
                    refused,
                    question_part(following.asking),
                )
                return
            following.asking = None
        else:
            if context.current_task is None:
                await event_queue.enqueue_event(
                    new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED, history=[message])
                )
            session = await self._session(context_id)
            try:
                turn = PostedTurn.posted(self._host, session, get_message_text(message))
            except (AgentOSError, ValueError) as error:
                await _status(
                    event_queue,
                    task_id,
                    context_id,
                    TaskState.TASK_STATE_FAILED,
                    f"could not post: {error}",
                )
                return
            following = self._turns[task_id] = _TaskTurn(turn)
            await _status(
                event_queue,
                task_id,
                context_id,
                TaskState.TASK_STATE_WORKING,
                f"session {context_id}: posted",
            )
        await self._follow(following, task_id, context_id, event_queue)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = _ids(context)
        following = self._turns.pop(task_id, None)
        if following is not None:
            following.cancelled = True
            following.turn.cancel_calls(CANCELLED)
            following.turn.stop()
        await _status(event_queue, task_id, context_id, TaskState.TASK_STATE_CANCELED, CANCELLED)

    async def _session(self, context_id: str) -> Session:
        """The context's session: loaded here, brought back from the store, or new."""
        try:
            return self._host.get(context_id)
        except UnknownSessionError:
            pass
        store = self._host.store
        if store is not None and await store.load_session(context_id) is not None:
            return await self._host.resume(context_id)
        return await self._host.create_session(self._config, session_id=context_id)

    def _answer(self, following: _TaskTurn, message: Message) -> str | None:
        """Answer the question ``following`` waits on with ``message``; None if it took,
        else why not (the question stays)."""
        asking = following.asking
        assert asking is not None
        answer = answer_of(message, asking.question)
        session_id = following.turn.session.session_id
        try:
            taken = self._host.answer(session_id, asking.call_id, answer)
        except (TypeError, ValueError) as error:
            return f"that answer does not fit: {error}"
        except (UnknownCallError, UnknownSessionError):
            taken = False
        return None if taken else "the call asks nothing now"

    async def _follow(
        self, following: _TaskTurn, task_id: str, context_id: str, queue: EventQueue
    ) -> None:
        """Tell the turn's call events until the model has answered, or a call asks a
        person (the executor returns then; the turn goes on)."""
        turn = following.turn
        while True:
            event = await _next(turn)
            if following.cancelled:
                return
            if event is None:
                break
            question = asked_by(event)
            if question is not None:
                following.asking = _Asking(event.call_id, question)
                await _status(
                    queue,
                    task_id,
                    context_id,
                    TaskState.TASK_STATE_INPUT_REQUIRED,
                    question.message,
                    question_part(following.asking),
                )
                return
            await _status(
                queue, task_id, context_id, TaskState.TASK_STATE_WORKING, turn.said(event)
            )
        self._turns.pop(task_id, None)
        turn.stop()
        session = turn.session
        if session.status is SessionStatus.FAILED:
            why = session.errors[-1].message if session.errors else "the session failed"
            await _status(queue, task_id, context_id, TaskState.TASK_STATE_FAILED, why)
            return
        replies = session.replies
        answer = replies[-1] if replies else ""
        artifact = new_text_artifact("answer", answer)
        await queue.enqueue_event(
            TaskArtifactUpdateEvent(task_id=task_id, context_id=context_id, artifact=artifact)
        )
        await _status(queue, task_id, context_id, TaskState.TASK_STATE_COMPLETED, answer)


async def _next(turn: PostedTurn) -> CallEvent | None:
    """The turn's next call event, or None once the session is idle (its model answered)
    and every event before that was told."""
    got: list[CallEvent | None] = []
    async with anyio.create_task_group() as group:

        async def read() -> None:
            try:
                got.append(await turn.events.receive())
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                got.append(None)
            group.cancel_scope.cancel()

        async def idle() -> None:
            await turn.session.wait_idle()
            await anyio.lowlevel.checkpoint()
            group.cancel_scope.cancel()

        group.start_soon(read)
        group.start_soon(idle)
    if got:
        return got[0]
    try:
        return turn.events.receive_nowait()  # told after idle: still the turn's
    except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
        return None


def asked_by(event: CallEvent) -> Question | None:
    """The question ``event`` tells its call asks, if it does."""
    progress = event.progress
    if event.kind is not CallEventKind.PROGRESSED or progress is None:
        return None
    if progress.kind is not ProgressKind.QUESTION:
        return None
    return Question.from_json(progress.payload)


def question_part(asking: _Asking) -> Any:
    """The question as data: its call, message, form (or URL) and who asks."""
    return new_data_part({"call_id": asking.call_id, "question": asking.question.to_json()})


def answer_of(message: Message, question: Question) -> Answer:
    """What a message answers a question with: its data (the form's fields), else its
    text (``decline`` or ``cancel`` declines; otherwise the form's one text field, or the
    first required one)."""
    data = [part for part in get_data_parts(message.parts) if isinstance(part, dict)]
    if data:
        return Answer(AnswerAction.ACCEPT, content=dict(data[0]))
    text = get_message_text(message).strip()
    action = WORDS.get(text.lower())
    if action is not None:
        return Answer(action, reason=f"the A2A client said {text}")
    form = question.form or {}
    properties = form.get("properties")
    if not isinstance(properties, dict) or not properties:
        return Answer(AnswerAction.ACCEPT, content={})
    required = form.get("required")
    names = [n for n in (required if isinstance(required, list) else []) if n in properties]
    name = str((names or list(properties))[0])
    return Answer(AnswerAction.ACCEPT, content={name: text})


def _ids(context: RequestContext) -> tuple[str, str]:
    assert context.task_id is not None and context.context_id is not None
    return context.task_id, context.context_id


async def _status(
    queue: EventQueue,
    task_id: str,
    context_id: str,
    state: TaskState,
    text: str,
    *more: Any,
) -> None:
    message = Message(
        role=Role.ROLE_AGENT,
        parts=[new_text_part(text), *more],
        message_id=uuid.uuid4().hex,
        task_id=task_id,
        context_id=context_id,
    )
    status = TaskStatus(state=state, message=message)
    status.timestamp.GetCurrentTime()
    await queue.enqueue_event(
        TaskStatusUpdateEvent(task_id=task_id, context_id=context_id, status=status)
    )
