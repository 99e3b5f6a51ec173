"""agentos's ``AgentExecutor``: a message starts a turn of the task's context (an agentos
session) and the task follows it.

The task is ``working`` while the turn runs, each of its calls' events told as a status
update; ``input-required`` while one of its calls, or a call of a sub-agent it runs, asks a
person (``ask``, the host's ``ask_person``, hands the question to the task that follows the
session; the question is the status message, and a message on the task answers it; a
question no task follows is declined at once); then ``completed`` with the model's answer
(an artifact, and the status message), or ``failed``. A cancel stops the calls this turn
started, and only those. While a task waits for an answer its executor has returned (the
SDK's way for an interrupted task); the turn goes on in the host, its events kept for the
next message.
"""

from __future__ import annotations

import contextlib
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
from anyio.streams.memory import MemoryObjectReceiveStream

from agentos import (
    AgentConfig,
    AgentOSError,
    Answer,
    AnswerAction,
    Asked,
    CallEvent,
    Host,
    Question,
    Session,
    SessionStatus,
    UnknownCallError,
    UnknownSessionError,
)
from agentos._ui.lineage import lineage
from agentos._ui.posted_turn import PostedTurn

CANCELLED = "the A2A client cancelled the task"
"""The reason the calls of a cancelled task's turn are given."""
NO_TASK = "no A2A task follows this call's session, so no one can be asked"
"""Why a question of a call no task follows is declined."""
QUESTIONS_BUFFERED = 100
"""Questions a task holds for its client before the newest are dropped."""
WORDS = {"decline": AnswerAction.DECLINE, "cancel": AnswerAction.CANCEL}
"""A text answer that is one of these words declines (or cancels) the question."""


class _TaskTurn:
    """A task's turn as its executor follows it, across the messages of the task: the
    questions its calls (or its sub-agents' calls) ask arrive on ``asks``."""

    def __init__(self, turn: PostedTurn) -> None:
        self.turn = turn
        self.asking: Asked | None = None
        self.unheard: list[CallEvent | Asked] = []
        """What was heard with the question the task asks, told once it is answered."""
        self.cancelled = False
        self.tell, self.asks = anyio.create_memory_object_stream[Asked](QUESTIONS_BUFFERED)


class TurnExecutor(AgentExecutor):
    """Runs each task's turn in ``host``, in sessions of ``config`` (a new context starts
    one, its id the context's); ``ask`` is the host's ``ask_person``."""

    def __init__(self, host: Host, config: AgentConfig) -> None:
        self._host = host
        self._config = config
        self._turns: dict[str, _TaskTurn] = {}
        """By task id: the turns followed (running, or waiting for an answer)."""
        self._sessions: dict[str, _TaskTurn] = {}
        """The same by session id, where the questions of its calls go."""

    async def ask(self, asked: Asked) -> Answer | None:
        """A call's question goes to the task that follows its session (or a session it is a
        sub-agent of), which asks its client; with none, it is declined at once."""
        for session_id in lineage(self._host, asked.session_id):
            following = self._sessions.get(session_id)
            if following is not None:
                with contextlib.suppress(anyio.WouldBlock, anyio.ClosedResourceError):
                    following.tell.send_nowait(asked)  # a flood: the newest wait on their calls
                return None  # the question stays on the call until the task's client answers
        return Answer(AnswerAction.DECLINE, reason=NO_TASK)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = _ids(context)
        message = context.message
        assert message is not None  # a send always has one
        following = self._turns.get(task_id)
        if following is not None and following.asking is not None:
            asking = following.asking
            refused = self._answer(asking, message)
            if refused is not None:
                await _status(
                    event_queue,
                    task_id,
                    context_id,
                    TaskState.TASK_STATE_INPUT_REQUIRED,
                    refused,
                    question_part(asking),
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
            following = self._turns[task_id] = self._sessions[context_id] = _TaskTurn(turn)
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
        following = self._forget(task_id)
        if following is not None:
            following.cancelled = True
            following.turn.cancel_calls(CANCELLED)
        await _status(event_queue, task_id, context_id, TaskState.TASK_STATE_CANCELED, CANCELLED)

    def _forget(self, task_id: str) -> _TaskTurn | None:
        """Follow the task's turn no more (its questions are declined from now on)."""
        following = self._turns.pop(task_id, None)
        if following is None:
            return None
        session_id = following.turn.session.session_id
        if self._sessions.get(session_id) is following:
            del self._sessions[session_id]
        following.turn.stop()
        following.tell.close()
        following.asks.close()
        return following

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

    def _answer(self, asking: Asked, message: Message) -> str | None:
        """Answer ``asking`` with ``message``; None if it took, or the call asks it no more
        (the turn goes on either way), else why not (the question stays)."""
        try:
            answer = answer_of(message, asking.question)
            self._host.answer(asking.session_id, asking.call_id, answer)
        except (TypeError, ValueError) as error:
            return f"that answer does not fit: {error}"
        except (UnknownCallError, UnknownSessionError):
            pass  # the call has ended: nothing waits for the answer
        return None

    async def _follow(
        self, following: _TaskTurn, task_id: str, context_id: str, queue: EventQueue
    ) -> None:
        """Tell the turn's call events until the model has answered, or a call asks a
        person (the executor returns then; the turn goes on)."""
        turn = following.turn
        while heard := await _next(following):
            for index, each in enumerate(heard):
                if following.cancelled:
                    return
                if isinstance(each, Asked):
                    following.asking = each
                    following.unheard = heard[index + 1 :]  # told after the answer
                    await _status(
                        queue,
                        task_id,
                        context_id,
                        TaskState.TASK_STATE_INPUT_REQUIRED,
                        each.question.message,
                        question_part(each),
                    )
                    return
                await _status(
                    queue, task_id, context_id, TaskState.TASK_STATE_WORKING, turn.said(each)
                )
        self._forget(task_id)
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


async def _next(following: _TaskTurn) -> list[CallEvent | Asked]:
    """What the turn tells next: call events and questions, as they came (an empty list
    once the session is idle, its model having answered, and all before that was told)."""
    if following.unheard:
        got, following.unheard = following.unheard, []
        return got
    turn = following.turn
    got = []
    async with anyio.create_task_group() as group:

        async def read(stream: MemoryObjectReceiveStream[Any]) -> None:
            with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError):
                got.append(await stream.receive())
            group.cancel_scope.cancel()

        async def idle() -> None:
            await turn.session.wait_idle()
            await anyio.lowlevel.checkpoint()
            group.cancel_scope.cancel()

        group.start_soon(read, turn.events)
        group.start_soon(read, following.asks)
        group.start_soon(idle)
    for stream in (turn.events, following.asks):  # what came in the same moment
        with contextlib.suppress(anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
            while True:
                got.append(stream.receive_nowait())
    return got


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
    """The task's id and its context's. A message that names a stored task but no context
    is given a new context id by the SDK: the task's own is the one that counts."""
    assert context.task_id is not None and context.context_id is not None
    task = context.current_task
    return context.task_id, context.context_id if task is None else task.context_id


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
