"""One conversation with a model: the async shell around its turn machine.

``TurnMachine`` (``_turn``) decides; ``Session`` feeds it events (a user
message, the model's answer, a call starting, ending or going overdue, the
yield timer, a stop) and performs the actions it returns: ask the model,
submit calls, arm the timer, cancel calls, commit. A model request and the
commit of the history before it run side by side.

Waiting for calls is not a task awaiting: the actions that the end of a call
allows run in that call's own task (``Runtime.hand_off``), so the next request
goes out at once however busy the event loop is.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Mapping
from typing import Any

import anyio
from anyio.abc import TaskStatus

from agentos._agent_config import AgentConfig
from agentos._board import Board, ChatEntry
from agentos._board_turn import BoardMachine
from agentos._board_words import NEW_THREAD_DEFINITION
from agentos._context_view import ContextView, ViewInput
from agentos._errors import (
    SessionConflictError,
    SessionEndedError,
    StoreError,
    UnknownCallError,
)
from agentos._history import MessageHistory
from agentos._provider import Message, ModelRequest, Provider
from agentos._runtime import Runtime
from agentos._scope import Caller, Scope
from agentos._session_calls import SessionCalls
from agentos._session_writer import SessionWriter
from agentos._snapshot import CallSnapshot, SessionStatistics
from agentos._store import SessionStore
from agentos._tokens import ContinuationTokens
from agentos._toolbox import SystemToolbox
from agentos._transcript import ToolResultBlock
from agentos._turn import TurnMachine
from agentos._turn_events import (
    Action,
    ArmTimer,
    CallOverdue,
    CallRunning,
    CallSettled,
    CancelCalls,
    CancelsDone,
    Commit,
    Crashed,
    DisarmTimer,
    Event,
    ModelReplied,
    SendRequest,
    SessionStatus,
    StopRequested,
    SubmitCalls,
    TimerFired,
    UserPosted,
)
from components import CallEvent, CallEventKind, CallId

_TIMER_ACTIONS = (ArmTimer, DisarmTimer)
_CLOSE_GRACE = 5.0
"""Seconds a closing session waits for its last commit."""


class Session:
    """A conversation: its history, its calls, and the task that performs its turns.

    Created by ``Host.create_session``; ``post`` a user message and the session
    answers when the model has spoken. ``history`` is Anthropic Messages.
    """

    def __init__(
        self,
        session_id: str,
        config: AgentConfig,
        *,
        runtime: Runtime,
        provider: Provider,
        toolbox: SystemToolbox,
        view: ContextView,
        tokens: ContinuationTokens,
        scope: Scope = Scope.OWN,
        store: SessionStore | None = None,
        version: int | None = None,
    ) -> None:
        """``version``: the stored version this session owns (from its lease); every
        commit expects it, so none replaces another host's writes."""
        self.session_id = session_id
        self.config = config
        self.errors: list[str] = []
        self.changed_at = runtime.clock.monotonic()
        """When (the runtime's clock) the status last changed: how long it has been idle."""
        self._turn: TurnMachine | BoardMachine = (
            BoardMachine(session_id, config)
            if config.context_view == "board"
            else TurnMachine(session_id, config)
        )
        self._reported = self._turn.status
        self._runtime = runtime
        self._provider = provider
        self._view = view
        self._todo: deque[Action] = deque()
        self._stepping = False
        """Actions are being performed (in the session's task or, handed off, a call's)."""
        self._deadline = math.inf
        self._step_scope: anyio.CancelScope | None = None
        self._arrived: anyio.Event | None = None
        self._writer = SessionWriter(session_id, store, version, self._turn.status)
        self._changed: anyio.Event | None = None
        self._commit_later = False
        """A ``Commit(wait=False)`` the session's task has yet to perform."""
        self._hands = SessionCalls(
            session_id, config, runtime, toolbox, tokens, Caller(session_id, session_id, scope)
        )
        self._tools = self._hands.tool_definitions()
        if isinstance(self._turn, BoardMachine):
            self._tools.append(NEW_THREAD_DEFINITION)

    # ------------------------------------------------------------------ the API

    @property
    def status(self) -> SessionStatus:
        return self._turn.status

    @property
    def history(self) -> list[Message]:
        return self._turn.history

    @property
    def requests(self) -> int:
        """Model requests made so far."""
        return self._turn.requests

    def statistics(self) -> SessionStatistics:
        """Model requests made by this session object and the tokens they used, prompt-cache
        reads and writes included (from the responses' usage; none kept across a restart)."""
        return self._hands.statistics()

    @property
    def calls(self) -> MessageHistory:
        """What this session's history says of each call: the source of ``orphaned``."""
        return self._turn.calls

    def post(self, text: str, *, reply_to: int | None = None) -> None:
        """A user message: it grants a turn, and cuts short a wait for background calls.

        A board session takes ``reply_to``, the node the message answers (None: a
        new thread); ``KeyError`` for a node the board does not have.
        """
        if reply_to is not None and type(reply_to) is not int:
            raise TypeError(f"reply_to is a node's id (an int), got {type(reply_to).__name__}")
        self._turn.check_reply(reply_to)
        if not isinstance(text, str):
            raise TypeError(f"a user message is a str, got {type(text).__name__}")
        if not text.strip():
            raise ValueError("a user message must not be empty")
        if self._turn.ended or self._turn.stopping:
            state = "failed" if self.status is SessionStatus.FAILED else "stopped"
            raise SessionEndedError(f"session {self.session_id!r} is {state}")
        self._feed(UserPosted(text, reply_to, at=time.time()))

    @property
    def board(self) -> Board | None:
        """A board session's message board (None for a transcript session)."""
        return self._turn.board if isinstance(self._turn, BoardMachine) else None

    @property
    def chat(self) -> list[ChatEntry]:
        """What a person sees of the conversation: every message of a transcript, seed 004's
        projection of a board."""
        return self._turn.chat(self._calls)

    def restore(
        self, history: list[Message], held: Mapping[str, ToolResultBlock] | None = None
    ) -> list[tuple[str, str]]:
        """Take over an earlier conversation (before the task starts).

        A ``tool_use`` left without a result gets its entry in ``held`` (a
        placeholder for a call that outlived the restart) or one saying the
        call was lost; a board's running call waits on only with an entry in
        ``held``, else it reads as lost. Returns the calls still waiting
        (placeholder, no outcome delivered) as ``(tool_use_id, tool_name)``:
        the host re-creates the deferred ones and calls ``lost`` for the rest.
        """
        return self._turn.restore(history, held or {})

    def lost(self, tool_use_id: str, tool_name: str) -> None:
        """The model will be told, before its next request, that this call did not survive."""
        self._turn.lost(tool_use_id, tool_name)

    def await_outcome(self, call_id: CallId, tool_use_id: str) -> None:
        """Deliver this call's outcome later, as for any call that got a placeholder."""
        try:
            deferred = self._runtime.status(call_id).deferred
        except UnknownCallError:
            deferred = False
        self._turn.await_outcome(call_id, tool_use_id, deferred=deferred)

    def disown(self, reason: str) -> None:
        """Another host owns this session now: record why, write nothing more, and stop."""
        if self._writer.store is None:
            return
        self._writer.store = None
        self.errors.append(f"store: {reason}")
        self.stop(cancel_calls=False)

    def stop(self, *, cancel_calls: bool = True) -> None:
        """End the session once the model request in flight (if any) is answered.

        Its calls still running are cancelled (reason ``"session stopped"``),
        deferred ones aside; ``cancel_calls=False`` leaves them running in the
        runtime. A turn waiting for calls ends at once, with placeholders for
        the calls left running.
        """
        self._feed(StopRequested(cancel_calls))

    @property
    def idle(self) -> bool:
        return self.status is SessionStatus.IDLE and self.at_rest and not self._turn.stopping

    @property
    def at_rest(self) -> bool:
        """Ended, or idle with nothing queued: no turn would be cut."""
        return self._turn.ended or (self._turn.at_rest and not self._busy)

    @property
    def _busy(self) -> bool:
        """Actions are queued or being performed."""
        return self._stepping or bool(self._todo)

    async def wait_idle(self) -> None:
        """Until the model has answered everything posted and no event is waiting.

        Returns at once if that is so already, and once the session is stopped or
        failed. A turn waits for its calls as its strategy says: every call final
        (``yield_when_all_done``, and synchronous mode, one after another), one
        final (``yield_on_any_progress``), or one final or ``milliseconds`` passed
        (``yield_on_timeout``); a deferred call is final once ``Host.complete``
        gives it its outcome. A user message or an overdue call ends the wait
        early; the calls still running then get placeholders and their outcomes a
        later turn, so the session may be busy again (see ``wait_settled``).
        """
        while not (self.idle or (self._turn.ended and not self._busy)):
            await self._next_change()

    def outstanding(self) -> list[CallSnapshot]:
        """Calls the model got a placeholder for and whose outcome is not delivered yet
        (and that the runtime still holds: a stopped session's may have been forgotten)."""
        snapshots = []
        for call_id in self._turn.outstanding:
            try:
                snapshots.append(self._runtime.status(call_id))
            except UnknownCallError:
                continue
        return snapshots

    async def wait_settled(self, *, include_deferred: bool = False) -> None:
        """Until idle with no outstanding call, or ended: ``wait_idle``, and more.

        Every call the model got a placeholder for has ended and the model has
        heard its outcome and answered (under ``yield_when_all_done`` outcomes
        are told once every outstanding call that can end by itself is final,
        otherwise as each ends). Deferred calls count only with
        ``include_deferred``.
        """
        while True:
            waiting = [call for call in self.outstanding() if include_deferred or not call.deferred]
            if (self._turn.ended and not self._busy) or (self.idle and not waiting):
                return
            await self._next_change()

    async def _next_change(self) -> None:
        if self._changed is None:
            self._changed = anyio.Event()
        await self._changed.wait()

    @property
    def replies(self) -> list[str]:
        """The text of every assistant message, in order (a board session's: every agent
        node's, shown to the person or not; ``chat`` is what a person sees)."""
        return self._turn.replies

    async def commit(self) -> None:
        """Write what the store does not have yet, and the status; ``StoreError`` if it fails.

        The write names the session's version: one another host took over is refused.
        """
        await self._writer.write(self._turn)

    # ------------------------------------------------------------------ the task

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """The session's own task: it performs the actions whenever nobody else does."""
        unsubscribe = self._runtime.on_call_events(self.session_id, self._on_call_event)
        forget_clock = self._runtime.clock.on_advance(self._wake)
        for call_id in list(self._turn.outstanding):  # awaited from before a resume
            self._settle_if_final(call_id)
        task_status.started()
        try:
            while True:
                self._arrived = anyio.Event()
                await self._advance()
                if self._turn.ended and not self._stepping:
                    break
                if self._commit_later:  # while it writes, a call's end is handed off as usual
                    self._commit_later = False
                    await self._persist()
                    continue
                await self._sleep()
        finally:
            unsubscribe()
            forget_clock()
            if self._step_scope is not None:
                self._step_scope.cancel()  # actions running in a call's task end with us
            with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_GRACE):
                await self._flush()
            self._turn.abandon()
            self._reported_change()

    async def _flush(self) -> None:
        """Once no step runs, write what the store does not have yet: a host that closes
        mid-turn loses nothing its session had decided."""
        while self._stepping:
            await self._next_change()
        if self._writer.behind(self._turn):
            await self._persist()

    def _on_call_event(self, event: CallEvent) -> None:
        """Called by the kernel right after the tick that made the change."""
        if not self._turn.awaits(event.call_id):
            return
        if event.status.is_final:
            self._settle_if_final(event.call_id)
        elif event.kind is CallEventKind.OVERDUE:
            self._feed(CallOverdue(event.call_id), hand_off=True)
        elif event.kind is CallEventKind.STARTED:
            self._turn.handle(CallRunning(event.call_id))  # changes no status, asks nothing

    def _settle_if_final(self, call_id: CallId) -> None:
        try:
            snapshot = self._runtime.status(call_id)
        except UnknownCallError:
            return
        if snapshot.is_final:
            self._feed(CallSettled(snapshot), hand_off=True)

    def _feed(self, event: Event, *, hand_off: bool = False) -> None:
        """Give the machine an event; perform what it asks now, or have it performed."""
        self._todo.extend(self._turn.handle(event))
        self._reported_change()
        if self._stepping or not self._todo:
            return
        while self._todo and isinstance(self._todo[0], _TIMER_ACTIONS):
            self._set_timer(self._todo.popleft())
        if self._todo and not (hand_off and self._runtime.hand_off(self._advance)):
            self._wake()

    async def _sleep(self) -> None:
        """Until an event arrives, or the yield timer is due."""
        assert self._arrived is not None
        clock = self._runtime.clock
        if self._deadline <= clock.monotonic():
            self._deadline = math.inf
            self._feed(TimerFired(clock.monotonic()))
            return
        budget = math.inf if self._deadline == math.inf else clock.sleep_budget(self._deadline)
        with anyio.move_on_after(budget):
            await self._arrived.wait()

    async def _advance(self) -> None:
        """Perform the queued actions; a session performs in one task at a time."""
        if self._stepping:
            return
        self._stepping = True
        try:
            with anyio.CancelScope() as self._step_scope:
                while self._todo:
                    await self._perform(self._todo.popleft())
        except Exception as error:  # one session's bug ends that session only
            self.errors.append(f"session_crashed: {type(error).__name__}: {error}")
            self._todo.clear()
            self._todo.extend(self._turn.handle(Crashed(str(error))))
            await self._perform_all_quietly()
        finally:
            self._stepping = False
            self._step_scope = None
            self._reported_change()
            if self._todo or self._turn.ended:
                self._wake()

    async def _perform_all_quietly(self) -> None:
        while self._todo:
            action = self._todo.popleft()
            if isinstance(action, Commit):
                await self._persist()

    async def _perform(self, action: Action) -> None:
        if isinstance(action, Commit):
            later = self._todo[0] if self._todo else None
            if isinstance(later, SendRequest) or (
                isinstance(later, Commit) and (later.wait or not action.wait)
            ):
                return  # committed alongside the request, or by the next commit
            if action.wait:
                await self._persist()
            else:
                self._commit_later = True
                self._wake()
        elif isinstance(action, SendRequest):
            self._feed(ModelReplied(await self._ask(action), at=time.time()))
        elif isinstance(action, SubmitCalls):
            self._feed(await self._hands.submit(action, turn_id=f"request-{self.requests}"))
        elif isinstance(action, CancelCalls):
            for call_id in action.call_ids:
                self._runtime.cancel(call_id, action.reason)
            self._feed(CancelsDone())
        else:
            self._set_timer(action)

    def _set_timer(self, action: Action) -> None:
        self._deadline = action.deadline if isinstance(action, ArmTimer) else math.inf
        self._wake()

    # ------------------------------------------------------------------ performing

    async def _ask(self, action: SendRequest) -> list[Any] | None:
        """One model request, the history committed alongside; None if it failed."""
        messages = action.messages
        if messages is None:
            messages = self._view.build(ViewInput(self.session_id, self.history, self._calls))
        system = self.config.system_prompt
        if action.system_note:
            system = f"{system}\n\n{action.system_note}"
        request = ModelRequest(
            model=self.config.model,
            system=system,
            messages=messages,
            tools=self._tools,
            max_tokens=self.config.max_tokens,
            session_id=self.session_id,
            cache_system=action.cache_system,
        )
        if self._writer.store is None:
            response = await self._hands.ask(self._provider, request)
        else:
            async with anyio.create_task_group() as group:
                group.start_soon(self._persist)
                response = await self._hands.ask(self._provider, request)
        if isinstance(response, str):
            self.errors.append(response)
            return None
        return response.content

    async def _persist(self) -> None:
        """Commit what changed since the last commit, in one transaction."""
        if self._writer.store is None:
            return
        try:
            await self.commit()
        except SessionConflictError as error:
            self.disown(str(error))
        except StoreError as error:  # kept in memory; the next commit tries again
            self.errors.append(f"store: {error}")

    # ------------------------------------------------------------------ plumbing

    def _calls(self) -> list[CallSnapshot]:
        return self._runtime.list_calls(self.session_id)

    def _wake(self) -> None:
        if self._arrived is not None:
            self._arrived.set()

    def _reported_change(self) -> None:
        """Tell the runtime and any waiter what changed."""
        status = self._turn.status
        if status is not self._reported:
            self._reported = status
            self.changed_at = self._runtime.clock.monotonic()
            self._runtime.update_session(
                self.session_id,
                status=status.value,
                requests=self.requests,
                errors=len(self.errors),
            )
        if self._changed is not None:  # only made when someone waits
            self._changed.set()
            self._changed = None
