"""agentos's ``AgentExecutor``: a message starts a turn of the task's context (an agentos
session) and the task follows it.

The task is ``working`` while the turn runs, each of its calls' events told as a status
update; ``input-required`` while one of its calls, or a call of a sub-agent it runs, asks a
person (``ask``, the host's ``ask_person``, hands the question to the task that follows the
session: see ``questions``; the question is the status message, and a message on the task
answers it); then ``completed`` with the model's answer to this turn (an artifact, and the
status message), or ``failed``. A cancel stops the calls this turn started, and only those.
While a task waits for an answer its executor has returned (the SDK's way for an
interrupted task); the turn goes on in the host, its events kept for the next message, or,
when the question waits no more without the client's answer (declined for want of one,
or its call ended), for the task's follower that goes on in the background (``running``).
A context runs one task at a time: a message that would start another while one runs is
rejected, naming it. A message on a task that has not ended and that no executor here
follows (a host that stopped left it) posts nothing: the task fails, as it reads.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from dataclasses import field
from functools import partial
from typing import Any

import anyio
from a2a.helpers import get_message_text
from a2a.helpers import new_task
from a2a.helpers import new_text_artifact
from a2a.helpers import new_text_part
from a2a.server.agent_execution import AgentExecutor
from a2a.server.agent_execution import RequestContext
from a2a.server.agent_execution.active_task import TERMINAL_TASK_STATES
from a2a.server.events import EventQueue
from a2a.types.a2a_pb2 import Message
from a2a.types.a2a_pb2 import Role
from a2a.types.a2a_pb2 import TaskArtifactUpdateEvent
from a2a.types.a2a_pb2 import TaskState
from a2a.types.a2a_pb2 import TaskStatus
from a2a.types.a2a_pb2 import TaskStatusUpdateEvent
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream

from agentos import AgentConfig
from agentos import AgentOSError
from agentos import Answer
from agentos import Asked
from agentos import CallEvent
from agentos import Host
from agentos import Session
from agentos import SessionStatus
from agentos import UnknownCallError
from agentos import UnknownSessionError
from agentos._ui.a2a.handler import ABANDONED
from agentos._ui.a2a.questions import Handed
from agentos._ui.a2a.questions import TaskQuestions
from agentos._ui.a2a.questions import answer_of
from agentos._ui.a2a.questions import check_ask_timeout
from agentos._ui.a2a.questions import declined
from agentos._ui.a2a.questions import question_part
from agentos._ui.asking import ASK_TIMEOUT
from agentos._ui.lineage import lineage
from agentos._ui.posted_turn import PostedTurn

LOG = logging.getLogger("agentos.a2a")
"""Quiet unless the application configures logging, as every agentos logger."""
CANCELLED = "the A2A client cancelled the task"
"""The reason the calls of a cancelled task's turn are given."""
NO_TASK = "no A2A task follows this call's session, so no one can be asked"
"""Why a question of a call no task follows is declined."""
STOPPED = "the session was stopped before the turn ended"
"""What the task of a turn whose session was stopped says, failed."""
NO_ANSWER = "the turn ended without an answer from the model"
"""What the task of a turn that ended with no reply of its own says, failed."""
SERVER_STOPPED = "the A2A server stopped"
NO_LIFESPAN = (
    "the A2A app is served without its lifespan, which follows a task whose question went "
    "unanswered: serve it with an ASGI server that runs it (uvicorn does; a Starlette Mount "
    "needs the parent app's lifespan to enter the app's)"
)
"""Why the questions of the tasks still followed when the app stops are declined."""
EXTERNAL = "the turn waits for deferred calls that only someone outside can complete"
"""What the task of a turn left waiting on deferred calls says, failed: it has no answer."""


@dataclass(eq=False)
class _TaskTurn:
    """A task's turn as its executor follows it, across the messages of the task (its
    ``questions`` given as soon as it is made: they name it when they end)."""

    turn: PostedTurn
    task_id: str
    context_id: str
    queue: EventQueue
    replies_before: int
    """The session's replies before the post: the later ones are this turn's."""
    questions: TaskQuestions = field(init=False)
    asking: Handed | None = None
    unheard: list[CallEvent | Handed] = field(default_factory=list)
    """What was heard with the question the task asks, told once it is answered."""
    cancelled: bool = False
    scope: anyio.CancelScope | None = None
    """Where it is followed now."""

    async def status(self, state: TaskState, text: str, *more: Any) -> None:
        await _status(self.queue, self.task_id, self.context_id, state, text, *more)


class TurnExecutor(AgentExecutor):
    """Runs each task's turn in ``host``, in sessions of ``config`` (a new context starts
    one, its id the context's); ``ask`` is the host's ``ask_person``; a client has
    ``ask_timeout`` seconds (the runtime's clock) to answer a question its task shows."""

    def __init__(self, host: Host, config: AgentConfig, ask_timeout: float = ASK_TIMEOUT) -> None:
        self._host = host
        self._config = config
        self._ask_timeout = check_ask_timeout(ask_timeout)
        self._turns: dict[str, _TaskTurn] = {}
        """By task id: the turns followed (running, or waiting for an answer)."""
        self._sessions: dict[str, _TaskTurn] = {}
        """The same by session id, where the questions of its calls go."""
        self._group: TaskGroup | None = None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """While the app serves: a task whose question was declined for want of an answer
        goes on here, followed to its end. Once it stops, no task is followed: the
        questions still waiting are declined, saying so."""
        try:
            async with anyio.create_task_group() as self._group:
                yield
                self._group.cancel_scope.cancel()
        finally:
            self._group = None
            for task_id in list(self._turns):
                self._forget(task_id, SERVER_STOPPED)

    async def ask(self, asked: Asked) -> Answer:
        """A call's question goes to the task that follows its session (or a session it is a
        sub-agent of), which asks its client (see ``TaskQuestions.ask``); with none, it is
        declined at once."""
        for session_id in lineage(self._host, asked.session_id):
            following = self._sessions.get(session_id)
            if following is not None:
                return await following.questions.ask(asked)
        return declined(NO_TASK)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = _ids(context)
        message = context.message
        assert message is not None  # a send always has one
        following = self._turns.get(task_id)
        if following is not None:
            following.queue = event_queue
            await self._take(following, message)
            return
        if context.current_task is None:
            await event_queue.enqueue_event(
                new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED, history=[message])
            )
        elif context.current_task.status.state not in TERMINAL_TASK_STATES:
            # A stored task no one follows here, its session not held by another live
            # host: a host that stopped left it. The message is no turn of it.
            await _status(event_queue, task_id, context_id, TaskState.TASK_STATE_FAILED, ABANDONED)
            return
        if self._group is None:
            await _status(
                event_queue, task_id, context_id, TaskState.TASK_STATE_FAILED, NO_LIFESPAN
            )
            return
        session = await self._session(context_id)
        busy = self._sessions.get(context_id)
        if busy is not None:
            await _status(
                event_queue,
                task_id,
                context_id,
                TaskState.TASK_STATE_REJECTED,
                f"context {context_id} is busy with task {busy.task_id}: send to that task, "
                "or start this one when it has ended",
            )
            return
        replies_before = len(session.replies)
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
        following = _TaskTurn(turn, task_id, context_id, event_queue, replies_before)
        ended = partial(self._asks_no_more, following)
        following.questions = TaskQuestions(self._host.runtime.clock, self._ask_timeout, ended)
        self._turns[task_id] = self._sessions[context_id] = following
        try:
            await following.status(TaskState.TASK_STATE_WORKING, f"session {context_id}: posted")
        except BaseException:
            self._let_go(following)
            raise
        await self._follow(following)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = _ids(context)
        following = self._forget(task_id, CANCELLED)
        if following is not None:
            following.cancelled = True
            if following.scope is not None:
                following.scope.cancel()
            following.turn.cancel_calls(CANCELLED)
        await _status(event_queue, task_id, context_id, TaskState.TASK_STATE_CANCELED, CANCELLED)

    async def _take(self, following: _TaskTurn, message: Message) -> None:
        """A message on a followed task: the answer to the question it asks. One that asks
        nothing now (its question waits no more, answered elsewhere or its call ended, even
        if the task has not heard so yet) is told so: the turn goes on without it."""
        asking = following.asking
        if asking is not None:
            try:
                took = self._answer(asking.asked, message)
            except (TypeError, ValueError) as error:
                refused = f"that answer does not fit: {error}"
                await following.status(
                    TaskState.TASK_STATE_INPUT_REQUIRED, refused, question_part(asking.asked)
                )
                return
            if took:
                following.asking = None
                await self._follow(following)
                return
        await following.status(
            TaskState.TASK_STATE_WORKING,
            f"task {following.task_id} asks nothing now (its question waits no more): the "
            "message answers nothing; the turn goes on",
        )

    def _asks_no_more(self, following: _TaskTurn, handed: Handed) -> None:
        """A question the task showed waits no more. Unless its client answered it (on the
        task: the executor follows the turn on), it was declined for want of an answer or its
        call ended: the task goes on in the background (its executor returned when it
        asked)."""
        followed = self._turns.get(following.task_id) is following
        if following.asking is not handed or not followed or self._group is None:
            return
        following.asking = None
        self._group.start_soon(self._go_on, following, handed)

    async def _go_on(self, following: _TaskTurn, handed: Handed) -> None:
        """Follow the task on in the background. An error on the way fails the task, and is
        logged, rather than ending what runs beside it (the app's lifespan)."""
        if following.cancelled:
            return
        asked = handed.asked
        try:
            await following.status(
                TaskState.TASK_STATE_WORKING,
                f"{asked.tool_name} ({asked.call_id}) asks no more: {self._why(handed)}",
            )
            await self._follow(following)
        except Exception as error:
            LOG.warning("a2a.follow_failed task_id=%s error=%r", following.task_id, error)
            self._let_go(following)
            with contextlib.suppress(Exception):
                await following.status(
                    TaskState.TASK_STATE_FAILED, f"following its turn failed: {error!r}"
                )

    def _why(self, handed: Handed) -> str:
        """Why a question the task showed waits no more, its client not having answered."""
        if handed.declined is not None:
            return f"declined, {handed.declined.reason}"
        try:
            ended = self._host.runtime.status(handed.asked.call_id).is_final
        except UnknownCallError:
            ended = True
        if ended:
            return "its call has ended"
        return "it was answered elsewhere or withdrawn by its call"

    def _let_go(self, following: _TaskTurn) -> None:
        """Follow ``following`` no more, if it is still followed."""
        if self._turns.get(following.task_id) is following:
            self._forget(following.task_id, NO_TASK)

    def _forget(self, task_id: str, reason: str) -> _TaskTurn | None:
        """Follow the task's turn no more (its questions are declined for ``reason``)."""
        following = self._turns.pop(task_id, None)
        if following is None:
            return None
        if self._sessions.get(following.context_id) is following:
            del self._sessions[following.context_id]
        following.turn.stop()
        following.questions.close(reason)
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

    def _answer(self, asking: Asked, message: Message) -> bool:
        """Answer ``asking`` with ``message``: whether it took (False: its call asks it no
        more); ``ValueError`` or ``TypeError`` if it does not fit (the question stays)."""
        answer = answer_of(message, asking.question)
        try:
            return self._host.answer(asking.session_id, asking.call_id, answer)
        except (UnknownCallError, UnknownSessionError):
            return False  # the call has ended: nothing waits for the answer

    async def _follow(self, following: _TaskTurn) -> None:
        """Tell the turn's call events until the model has answered, or a call asks a
        person (it returns then; the turn goes on)."""
        if following.cancelled:
            return
        asks = False
        try:
            with anyio.CancelScope() as following.scope:
                while heard := await _next(following):
                    for index, each in enumerate(heard):
                        if isinstance(each, Handed):
                            if not following.questions.show(each):
                                continue  # its call asks it no more
                            following.asking = each
                            following.unheard = heard[index + 1 :]  # told after the answer
                            await following.status(
                                TaskState.TASK_STATE_INPUT_REQUIRED,
                                each.asked.question.message,
                                question_part(each.asked),
                            )
                            asks = True
                            return
                        said = following.turn.said(each)
                        await following.status(TaskState.TASK_STATE_WORKING, said)
                self._let_go(following)
                await self._end(following)
        finally:
            if not asks:  # ended, or an error on the way: its context is free either way
                self._let_go(following)

    async def _end(self, following: _TaskTurn) -> None:
        """The task's end as its turn's: the model's answer to it, or why there is none. A
        deferred call of an earlier turn the session still waits for is not this turn's:
        only the turn's own, its model's last reply saying nothing, leave it unanswered."""
        session = following.turn.session
        replies = session.replies[following.replies_before :]
        failed = TaskState.TASK_STATE_FAILED
        if session.status is SessionStatus.FAILED:
            why = session.errors[-1].message if session.errors else "the session failed"
            await following.status(failed, why)
        elif session.status is SessionStatus.STOPPED:
            await following.status(failed, STOPPED)
        elif not (replies and replies[-1]) and _waits_on_its_deferred_calls(following.turn):
            await following.status(failed, EXTERNAL)
        elif not replies:
            await following.status(failed, NO_ANSWER)
        else:
            answer = replies[-1]
            artifact = new_text_artifact("answer", answer)
            await following.queue.enqueue_event(
                TaskArtifactUpdateEvent(
                    task_id=following.task_id, context_id=following.context_id, artifact=artifact
                )
            )
            await following.status(TaskState.TASK_STATE_COMPLETED, answer)


def _waits_on_its_deferred_calls(turn: PostedTurn) -> bool:
    """Whether the session waits only for deferred calls, some of them ``turn``'s own."""
    if not turn.session.external_only:
        return False
    calls = turn.session.calls_after(turn.asked_before)
    return any(call.deferred and not call.is_final for call in calls)


async def _next(following: _TaskTurn) -> list[CallEvent | Handed]:
    """What the turn tells next: call events and questions, as they came (an empty list
    once the session is idle, its model having answered, and all before that was told)."""
    if following.unheard:
        got, following.unheard = following.unheard, []
        return got
    turn = following.turn
    streams: tuple[MemoryObjectReceiveStream[Any], ...] = (
        turn.events,
        following.questions.received,
    )
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

        for stream in streams:
            group.start_soon(read, stream)
        group.start_soon(idle)
    for stream in streams:  # what came in the same moment
        with contextlib.suppress(anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
            while True:
                got.append(stream.receive_nowait())
    return got


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
