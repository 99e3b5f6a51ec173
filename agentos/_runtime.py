"""The kernel: one esper world, the async shell around its synchronous ticks.

Code that is not a tick (API calls, tool tasks, worker threads) only appends
to the inbox; a tick applies the inbox and runs the systems in phase order,
then the kernel performs the effects the tick decided (start or interrupt
work, wake waiters, deliver events). Ticks never await. The driver task
sleeps until the inbox has something or the nearest deadline passes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import threading
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from types import MappingProxyType, TracebackType
from typing import Any, Self, TypeVar

import anyio
import anyio.lowlevel
import esper
from anyio import TaskHandle
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from pydantic import BaseModel, ValidationError

from agentos._clock import Clock, SystemClock
from agentos._context import ToolContext
from agentos._errors import (
    CallCancelled,
    RuntimeClosedError,
    UnknownCallError,
    UnknownSessionError,
    UsageError,
    WrongThreadError,
)
from agentos._isolation import IsolatedCall, IsolatedRunner
from agentos._json import ResultTooLarge, safe_text, to_json
from agentos._log import agentos_logger
from agentos._snapshot import (
    CallSnapshot,
    CancelOutcome,
    CompleteOutcome,
    RuntimeStatistics,
    SessionSnapshot,
    snapshot_of,
)
from agentos._threads import DaemonThreads
from agentos._tools import Tool, ToolFailure, describe_validation_error
from components import (
    CallError,
    CallEvent,
    CallId,
    CallStatus,
    CancelCall,
    CancelReply,
    CloseSession,
    CompleteCall,
    CompleteReply,
    ConversationId,
    DeadlineKind,
    Effects,
    Entity,
    ErrorKind,
    InboxMessage,
    JsonObject,
    Limits,
    OpenSession,
    ReportFailure,
    ReportResult,
    SessionConfig,
    SessionId,
    SessionState,
    SessionStatus,
    SetSessionCap,
    StatusQuery,
    SubmitCall,
    TickContext,
    TimeoutSettings,
    ToolCallArgs,
    ToolCallConfig,
    ToolCallState,
    TurnId,
    UpdateSession,
    Waiter,
    new_call_id,
)
from systems import PHASES

DEFAULT_SESSION = SessionId("default")
EVENT_BUFFER = 10_000
"""Events a subscriber may fall behind by before the newest are dropped (and counted)."""

_UNSET: Any = object()
_T = TypeVar("_T")
INTERRUPTS_PER_PASS = 1_000
_STRAY_CANCEL = (
    "the tool raised CancelledError although nobody cancelled this call "
    "(did it await a task or future that something else cancelled?)"
)
_PLAIN = frozenset({str, int, bool, type(None)})
"""Value types an input can hold and be stored as it is (floats need a finiteness check)."""


class Runtime:
    """Hosts tool calls as entities of one esper world, moved by tick-driven systems.

    Use it as an async context manager. Call its methods from the event loop's
    thread; from other threads (a sync tool, a UI) use ``submit`` and the
    ``*_threadsafe`` methods, the others refuse at once. Leaving the context
    cancels every call that is not final and waits up to ``shutdown_grace``
    seconds for the work to end.
    """

    def __init__(
        self,
        tools: Iterable[Tool[Any]] = (),
        *,
        clock: Clock | None = None,
        max_running: int = 256,
        max_running_per_session: int = 16,
        max_threads: int = 32,
        retention_seconds: float | None = 600.0,
        default_timeout: float | None = None,
        max_result_chars: int | None = 1_000_000,
        shutdown_grace: float = 5.0,
    ) -> None:
        """``max_result_chars``: a result whose JSON text is longer fails its call
        (None: no limit; a huge result then stalls the loop while it is encoded).
        ``shutdown_grace``: seconds leaving the runtime waits for cancelled work to
        end before abandoning it (and saying so in the log)."""
        for name, value in (
            ("max_running", max_running),
            ("max_running_per_session", max_running_per_session),
            ("max_threads", max_threads),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if retention_seconds is not None:
            _check_seconds("retention_seconds", retention_seconds)
        if default_timeout is not None:
            _check_seconds("default_timeout", default_timeout)
        if max_result_chars is not None and (
            not isinstance(max_result_chars, int)
            or isinstance(max_result_chars, bool)
            or max_result_chars < 1
        ):
            raise ValueError(
                f"max_result_chars must be a positive int or None, got {max_result_chars!r}"
            )
        _check_seconds("shutdown_grace", shutdown_grace)
        self._max_result_chars = max_result_chars
        self._shutdown_grace = shutdown_grace
        self._tools: dict[str, Tool[Any]] = {}
        self._runners: dict[str, IsolatedRunner] = {}
        for item in tools:
            self.add_tool(item)
        self._clock: Clock = clock or SystemClock()
        self._max_threads = max_threads
        self._default_timeout = default_timeout
        self._world = f"agentos-{uuid.uuid4()}"
        self._ctx = TickContext(
            limits=Limits(max_running, max_running_per_session, retention_seconds)
        )
        self._running: dict[Entity, ToolContext] = {}
        self._looks: dict[Entity, dict[SessionId, int]] = {}
        self._subscribers: dict[SessionId, list[MemoryObjectSendStream[CallEvent]]] = {}
        self._callbacks: dict[SessionId, list[Callable[[CallEvent], object]]] = {}
        self._events_dropped = 0
        self._hand_offs: list[tuple[SessionId, Callable[[], Awaitable[None]]]] | None = None
        """Set while a finishing call's own task runs the tick that reports it."""
        self._delivering = DEFAULT_SESSION
        self._hand_offs_here = 0
        self._hand_offs_spawned = 0
        self._log: Any = None
        self._internal_errors = 0
        self._opened = False
        self._closed = False
        self._processing = False
        self._performing = False
        self._later: deque[Effects] = deque()
        """Effects of ticks run by a listener while others are performed: performed next."""
        self._spare: list[Effects] = []
        self._wake = anyio.Event()
        self._wake_requested = False
        self._asleep = False
        self._armed: float | None = None
        """The deadline the sleeping driver wakes at by itself (None: only when woken)."""
        self._work_done = anyio.Event()
        self._interrupts: list[TaskHandle[None]] = []
        self._work_task: asyncio.Task[None] | None = None
        self._live: dict[Entity, tuple[ToolCallConfig, asyncio.Task[Any] | None]] = {}
        """Calls whose task has not ended, named for the log if closing abandons them."""
        self._loop_thread = 0
        self._group: TaskGroup | None = None
        self._forget_clock = _nothing

    # ----------------------------------------------------------------- lifecycle

    def add_tool(self, item: Tool[Any]) -> None:
        """Register a tool; its name must be new."""
        if not isinstance(item, Tool):
            raise TypeError(f"expected a Tool (use @agentos.tool), got {item!r}")
        if item.name in self._tools:
            raise ValueError(f"a tool named {item.name!r} is already registered")
        self._tools[item.name] = item

    def add_runner(self, name: str, runner: IsolatedRunner) -> None:
        """Register an isolated runner that ``submit(..., runner=name)`` calls use."""
        _check_text("name", name)
        if name in self._runners:
            raise ValueError(f"a runner named {name!r} is already registered")
        self._runners[name] = runner

    @property
    def tools(self) -> Mapping[str, Tool[Any]]:
        return dict(self._tools)

    @property
    def clock(self) -> Clock:
        """Where the runtime (and its sessions) read time: call and yield deadlines."""
        return self._clock

    async def __aenter__(self) -> Self:
        if self._opened:
            raise UsageError("a Runtime can be entered only once")
        self._opened = True
        esper.switch_world(self._world)
        for priority, phase in enumerate(reversed(PHASES)):
            esper.add_processor(phase(), priority=priority)
        self._token = anyio.lowlevel.current_token()
        self._loop_thread = threading.get_ident()
        self._threads = DaemonThreads(self._max_threads)
        self._cancelled_exc = anyio.get_cancelled_exc_class()
        self._log, self._ctx.log_info, self._ctx.log_debug = agentos_logger()
        self._ctx.log = self._log
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        ready = anyio.Event()
        self._loop = asyncio.get_running_loop()
        self._work_task = self._loop.create_task(self._hold_work(ready))
        await ready.wait()
        self._forget_clock = self._clock.on_advance(self._on_clock_advance)
        self._group.start_soon(self._drive)
        return self

    async def _hold_work(self, ready: anyio.Event) -> None:
        """The task whose task group runs tools and hand-offs.

        It is not a child of the runtime's task group, so closing can stop
        waiting for a tool that swallows its cancellation.
        """
        try:
            async with anyio.create_task_group() as work:
                self._work = work
                ready.set()
                await anyio.sleep_forever()
        except BaseException as error:  # only a bug of ours can get here
            self._internal_errors += 1
            self._log.error("runtime.work_failed", error=f"{type(error).__name__}: {error}")
        finally:
            self._work_done.set()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        assert self._group is not None
        try:
            self._cancel_everything("runtime closed")
        finally:
            self._closed = True
            self._forget_clock()
            self._work.cancel_scope.cancel()
            with anyio.move_on_after(self._shutdown_grace, shield=True):
                await self._work_done.wait()
            if not self._work_done.is_set():
                self._abandon_work()
            self._threads.close()
            self._group.cancel_scope.cancel()
            handled = await self._group.__aexit__(exc_type, exc, tb)
            for streams in self._subscribers.values():
                for stream in streams:
                    stream.close()
            if esper.current_world == self._world:
                esper.switch_world("default")
            esper.delete_world(self._world)
        return handled

    def _abandon_work(self) -> None:
        """Stop waiting for tools that ignore their cancellation, and say which."""
        self._log.warning(
            "runtime.work_abandoned",
            grace_seconds=self._shutdown_grace,
            calls=sorted(
                f"{config.call_id} ({config.tool_name})" for config, _ in self._live.values()
            ),
            threads=sorted(self._threads.busy()),
        )
        # asyncio.run would wait for these tasks forever when it ends the loop
        unregister = getattr(asyncio.tasks, "_unregister_task", None)
        if unregister is not None and self._work_task is not None:
            for task in (*(task for _, task in self._live.values()), self._work_task):
                if task is not None:
                    unregister(task)

    def _cancel_everything(self, reason: str) -> None:
        self._flush()
        for call_id, entity in list(self._ctx.index.by_id.items()):
            if not self._state(entity).status.is_final:
                self._ctx.inbox.append(CancelCall(call_id, None, reason, CancelReply()))
        self._apply_now()

    # --------------------------------------------------------------------- calls

    def submit(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any] | str | None = None,
        *,
        session_id: str = DEFAULT_SESSION,
        provider_call_id: str | None = None,
        conversation_id: str | None = None,
        turn_id: str | None = None,
        parent_call_id: str | None = None,
        timeout: float | None = _UNSET,
        overdue_after: float | None = None,
        deferred: bool = False,
        runner: str | None = None,
        retries: int = 0,
        label: str | None = None,
    ) -> CallId:
        """Queue a call and return its id at once.

        Bad input never raises here: an unknown tool, malformed JSON or input
        the tool's model rejects settles the call ``failed`` with a message
        naming the problem. Wrong argument types for the method itself raise.
        A ``deferred`` call is never run here: it stays ``pending`` until
        ``complete`` gives it its outcome (or it is cancelled). With ``runner``
        a registered ``IsolatedRunner`` does the work instead of the tool's
        function (the input is still checked against the tool's model).
        ``retries`` runs the work again after a failure, within the same call.
        """
        self._check_open()
        _check_text("tool_name", tool_name)
        _check_text("session_id", session_id)
        for name, value in (
            ("provider_call_id", provider_call_id),
            ("conversation_id", conversation_id),
            ("turn_id", turn_id),
            ("parent_call_id", parent_call_id),
        ):
            if value is not None:
                _check_text(name, value)
        if overdue_after is not None:
            _check_seconds("overdue_after", overdue_after)
        if not isinstance(retries, int) or isinstance(retries, bool) or not 0 <= retries <= 10:
            raise ValueError(f"retries must be an int from 0 to 10, got {retries!r}")
        if label is not None:
            _check_text("label", label)
        if runner is not None and runner not in self._runners:
            known = ", ".join(sorted(self._runners)) or "none"
            raise ValueError(f"no isolated runner named {runner!r} (registered: {known})")
        tool = self._tools.get(tool_name)
        if timeout is _UNSET:
            timeout = (
                self._default_timeout if tool is None or tool.timeout is None else tool.timeout
            )
        elif timeout is not None:
            _check_seconds("timeout", timeout)
        raw, rejection = _parse_input(tool_input)
        if rejection is not None:
            message = f"invalid input for tool {tool_name!r}: {rejection.message}"
            rejection = CallError(rejection.kind, message)
        args: BaseModel | None = None
        if tool is None:
            known = ", ".join(sorted(self._tools)) or "none"
            rejection = CallError(
                ErrorKind.UNKNOWN_TOOL, f"unknown tool {tool_name!r} (known tools: {known})"
            )
        elif rejection is None:
            try:
                args = tool.validate(raw)
            except ValidationError as error:
                rejection = CallError(
                    ErrorKind.INVALID_INPUT,
                    describe_validation_error(f"invalid input for tool {tool_name!r}", error),
                )
        call_id = new_call_id()
        config = ToolCallConfig(
            call_id=call_id,
            session_id=SessionId(session_id),
            tool_name=tool_name,
            tool_input=raw,
            provider_call_id=provider_call_id,
            conversation_id=None if conversation_id is None else ConversationId(conversation_id),
            turn_id=None if turn_id is None else TurnId(turn_id),
            parent_call_id=None if parent_call_id is None else CallId(parent_call_id),
            timeouts=TimeoutSettings(timeout, overdue_after),
            deferred=bool(deferred),
            runner=runner,
            retries=retries,
            label=label,
        )
        self._post(SubmitCall(config, self._clock.wall(), args, rejection))
        return call_id

    def status(self, call_id: str, *, session_id: str | None = None) -> CallSnapshot:
        """The call as it is now. With ``session_id``, only that session's calls are visible."""
        self._flush()
        entity = self._resolve(call_id, session_id)
        return snapshot_of(self._config(entity), self._state(entity))

    async def wait(
        self,
        call_id: str,
        timeout: float | None = None,  # noqa: ASYNC109 - measured on the runtime's clock
        *,
        session_id: str | None = None,
    ) -> CallSnapshot:
        """Wait until the call is final, or ``timeout`` seconds pass; returns its snapshot.

        The timeout is measured on the runtime's clock. When it runs out the
        snapshot is simply not final: waiting is the caller's business only.
        """
        if timeout is not None and not (isinstance(timeout, int | float) and timeout >= 0):
            raise ValueError(f"timeout must be None or >= 0 seconds, got {timeout!r}")
        self._flush()
        entity = self._resolve(call_id, session_id)
        config = self._config(entity)
        if self._state(entity).status.is_final:
            return snapshot_of(config, self._state(entity))
        released = anyio.Event()
        seen: list[CallSnapshot] = []

        def release() -> None:
            seen.append(snapshot_of(config, self._state(entity)))
            released.set()

        deadline = None if timeout is None else self._clock.monotonic() + timeout
        waiter = Waiter(entity, deadline, release)
        self._ctx.waiters.add(waiter)
        if deadline is not None:
            self._notify()
        try:
            await released.wait()
        finally:
            self._ctx.waiters.withdraw(waiter)
        return seen[0]

    def cancel(
        self, call_id: str, reason: str = "cancelled by caller", *, session_id: str | None = None
    ) -> CancelOutcome:
        """Cancel a call now; says whether it took and what the status was before.

        A final call is left as it is (``cancelled=False``). A running call's
        work is interrupted; a tool that ignores that cannot hold the call,
        which is reported ``cancelled`` at once.
        """
        self._check_loop_thread("cancel_threadsafe")
        _check_text("call_id", call_id)
        if not isinstance(reason, str):
            raise TypeError(f"reason must be a str, got {type(reason).__name__}")
        if session_id is not None:
            _check_text("session_id", session_id)
        reply = CancelReply()
        sid = None if session_id is None else SessionId(session_id)
        self._ctx.inbox.append(CancelCall(CallId(call_id), sid, safe_text(reason), reply))
        self._apply_now()
        if not reply.found or reply.previous_status is None:
            raise UnknownCallError(call_id)
        return CancelOutcome(CallId(call_id), reply.took, reply.previous_status)

    def complete(
        self, call_id: str, result: object = None, *, error: str | None = None
    ) -> CompleteOutcome:
        """Give a deferred call its outcome from outside: a result, or an error message.

        Completing twice is harmless (``applied`` is False the second time);
        a call that was not submitted ``deferred`` cannot be completed so, and
        answers like an unknown id.
        """
        self._check_loop_thread("complete_threadsafe")
        _check_text("call_id", call_id)
        if error is not None and not isinstance(error, str):
            raise TypeError(f"error must be a str, got {type(error).__name__}")
        try:
            value = to_json(result, limit=self._max_result_chars)
        except (TypeError, ValueError) as problem:
            raise ValueError(f"the result is not JSON: {problem}") from None
        failure = None if error is None else CallError(ErrorKind.TOOL_ERROR, safe_text(error))
        reply = CompleteReply()
        self._ctx.inbox.append(CompleteCall(CallId(call_id), value, failure, reply))
        self._apply_now()
        if not reply.found or reply.previous_status is None:
            raise UnknownCallError(call_id)
        return CompleteOutcome(CallId(call_id), reply.applied, reply.previous_status)

    def cancel_threadsafe(
        self, call_id: str, reason: str = "cancelled by caller", *, session_id: str | None = None
    ) -> CancelOutcome:
        """``cancel`` for code running in another thread (a sync tool, a UI thread).

        Runs ``cancel`` on the event loop's thread and waits for its answer.
        """
        return self._from_thread(lambda: self.cancel(call_id, reason, session_id=session_id))

    def complete_threadsafe(
        self, call_id: str, result: object = None, *, error: str | None = None
    ) -> CompleteOutcome:
        """``complete`` for code running in another thread."""
        return self._from_thread(lambda: self.complete(call_id, result, error=error))

    def _from_thread(self, action: Callable[[], _T]) -> _T:
        if threading.get_ident() == self._loop_thread:
            raise WrongThreadError(
                "the *_threadsafe methods are for other threads; call the plain one"
            )
        self._check_open()
        try:
            return anyio.from_thread.run_sync(action, token=self._token)
        except RuntimeError:  # also anyio's, once the closed runtime's loop is gone
            if not self._closed:
                raise
            raise RuntimeClosedError("the runtime is closed") from None

    def resolve(
        self, call_id: str, *, session_id: str, conversation_id: str | None = None
    ) -> CallId:
        """The internal id of the call ``call_id`` names: an internal id, or a provider id.

        A provider id (``toolu_...``) is looked up within ``session_id`` (and
        ``conversation_id`` when given). Provider ids repeat across turns: the
        call still in flight wins, then the latest started.
        """
        _check_text("call_id", call_id)
        _check_text("session_id", session_id)
        self._flush()
        index = self._ctx.index
        if call_id in index.by_id:
            return CallId(call_id)
        best: tuple[bool, float] | None = None
        found: CallId | None = None
        for entity in index.by_provider.get((SessionId(session_id), call_id), ()):
            config = self._config(entity)
            if conversation_id is not None and config.conversation_id != conversation_id:
                continue
            state = self._state(entity)
            started = state.started_at if state.started_at is not None else state.submitted_at
            rank = (not state.status.is_final, started)
            if best is None or rank >= best:
                best, found = rank, config.call_id
        if found is None:
            raise UnknownCallError(call_id)
        return found

    def owner(self, call_id: str) -> SessionId:
        """The session a call belongs to (cheaper than a whole ``status``)."""
        self._flush()
        return self._config(self._resolve(call_id, None)).session_id

    def look(self, call_id: str, observer: str) -> tuple[CallSnapshot, bool]:
        """``status`` plus whether anything moved since ``observer`` last looked at the call.

        The first look counts as a change. Looks are remembered per observing
        session for as long as the call is in the world.
        """
        _check_text("observer", observer)
        self._flush()
        entity = self._resolve(call_id, None)
        snapshot = snapshot_of(self._config(entity), self._state(entity))
        seen = self._looks.get(entity)
        if seen is None:
            seen = self._looks[entity] = {}
        changed = seen.get(SessionId(observer)) != snapshot.version
        seen[SessionId(observer)] = snapshot.version
        return snapshot, changed

    def open_session(
        self, session_id: str, *, agent: str, model: str, parent: str | None = None
    ) -> None:
        """Make the session an entity of the world (a second open changes nothing)."""
        self._check_open()
        _check_text("session_id", session_id)
        config = SessionConfig(
            SessionId(session_id), agent, model, None if parent is None else SessionId(parent)
        )
        self._post(OpenSession(config))

    def close_session(self, session_id: str) -> None:
        """Forget the session entity and its cap (its host unloaded it); a later open is new.

        Its calls are not touched: they end and are forgotten as any call is.
        """
        _check_text("session_id", session_id)
        if not self._closed:
            self._post(CloseSession(SessionId(session_id)))

    def update_session(self, session_id: str, *, status: str, requests: int, errors: int) -> None:
        """Record what a session is doing on its entity (applied by the next tick)."""
        if not self._closed:
            update = UpdateSession(SessionId(session_id), SessionStatus(status), requests, errors)
            self._post(update)

    def session(self, session_id: str) -> SessionSnapshot:
        """The session entity; LookupError if it was never opened."""
        self._flush()
        entity = self._ctx.sessions.by_id.get(SessionId(session_id))
        if entity is None:
            raise UnknownSessionError(session_id)
        config = esper.component_for_entity(entity, SessionConfig)
        state = esper.component_for_entity(entity, SessionState)
        return SessionSnapshot(
            config.session_id,
            config.agent,
            config.model,
            config.parent_session_id,
            state.status,
            state.requests,
            state.errors,
            state.opened_at,
            state.updated_at,
        )

    def set_session_cap(self, session_id: str, cap: int | None) -> None:
        """Let one session run up to ``cap`` calls at once (None: back to the default)."""
        _check_text("session_id", session_id)
        if cap is not None and (not isinstance(cap, int) or isinstance(cap, bool) or cap < 1):
            raise ValueError(f"cap must be a positive int or None, got {cap!r}")
        self._post(SetSessionCap(SessionId(session_id), cap))

    def sessions(self) -> list[SessionId]:
        """Every session that has a call in the world."""
        self._flush()
        return list(self._ctx.index.by_session)

    def list_calls(self, session_id: str, *, include_final: bool = True) -> list[CallSnapshot]:
        """The session's calls in submission order (only non-final ones if asked)."""
        _check_text("session_id", session_id)
        self._flush()
        calls = self._ctx.index.by_session.get(SessionId(session_id), {})
        snapshots = []
        for entity in calls.values():
            state = self._state(entity)
            if include_final or not state.status.is_final:
                snapshots.append(snapshot_of(self._config(entity), state))
        return snapshots

    @asynccontextmanager
    async def subscribe(
        self, session_id: str
    ) -> AsyncIterator[MemoryObjectReceiveStream[CallEvent]]:
        """Receive every ``CallEvent`` of one session while the context is open."""
        self._check_open()
        _check_text("session_id", session_id)
        sid = SessionId(session_id)
        send, receive = anyio.create_memory_object_stream[CallEvent](EVENT_BUFFER)
        self._subscribers.setdefault(sid, []).append(send)
        self._ctx.subscribed.add(sid)
        try:
            async with receive:
                yield receive
        finally:
            streams = self._subscribers.get(sid, [])
            if send in streams:
                streams.remove(send)
            if not streams:
                self._subscribers.pop(sid, None)
                if sid not in self._callbacks:
                    self._ctx.subscribed.discard(sid)
            send.close()

    def on_call_events(
        self, session_id: str, callback: Callable[[CallEvent], object]
    ) -> Callable[[], None]:
        """Call ``callback`` with each of the session's call events, right after its tick.

        The cheapest way to listen (no stream, no task): the callback must be
        quick and must not call back into the runtime. Returns a function that
        stops the calls.
        """
        _check_text("session_id", session_id)
        sid = SessionId(session_id)
        self._callbacks.setdefault(sid, []).append(callback)
        self._ctx.subscribed.add(sid)

        def unsubscribe() -> None:
            callbacks = self._callbacks.get(sid, [])
            if callback in callbacks:
                callbacks.remove(callback)
            if not callbacks:
                self._callbacks.pop(sid, None)
                if sid not in self._subscribers:
                    self._ctx.subscribed.discard(sid)

        return unsubscribe

    def hand_off(self, follow_up: Callable[[], Awaitable[None]]) -> bool:
        """From an ``on_call_events`` callback: run ``follow_up`` in the finishing call's task.

        A call whose session has a listener is reported by its own task: the
        tick runs right there and ``follow_up`` runs next in that task, so
        nothing else is scheduled between a call finishing and what its session
        does next, however busy the loop.
        False when the event came from elsewhere (the driver's tick, a cancel):
        then do the work your usual way.
        """
        if not callable(follow_up):
            raise TypeError(f"hand_off takes a coroutine function, got {type(follow_up).__name__}")
        if self._hand_offs is None:
            return False
        self._hand_offs.append((self._delivering, follow_up))
        return True

    def status_threadsafe(self, call_id: str, timeout: float | None = 10.0) -> CallSnapshot:
        """``status`` for code running in another thread (a sync tool, a UI thread).

        The query is answered by the next tick; raises ``TimeoutError`` if the
        runtime does not answer within ``timeout`` seconds.
        """
        if threading.get_ident() == self._loop_thread:
            raise WrongThreadError("status_threadsafe is for other threads; use status()")
        self._check_open()
        done = threading.Event()
        answers: list[CallSnapshot | None] = []

        def answer(entity: Entity | None) -> None:
            answers.append(
                None if entity is None else snapshot_of(self._config(entity), self._state(entity))
            )
            done.set()

        self._post(StatusQuery(CallId(call_id), answer))
        if not done.wait(timeout):
            raise TimeoutError(f"the runtime did not answer a status query within {timeout}s")
        snapshot = answers[0]
        if snapshot is None:
            raise UnknownCallError(call_id)
        return snapshot

    def statistics(self) -> RuntimeStatistics:
        ctx = self._ctx
        counts = ctx.index.status_counts
        return RuntimeStatistics(
            calls_by_status=RuntimeStatistics.freeze(
                {
                    status: counts[status]
                    for status in CallStatus
                    if status is not CallStatus.ORPHANED
                }
            ),
            running=ctx.queues.running_total,
            pending=counts[CallStatus.PENDING],
            ready_sessions=len(ctx.queues.ring),
            nested_admissions=ctx.queues.nested_admissions,
            inbox_length=len(ctx.inbox),
            waiters=ctx.waiters.count(),
            sessions=len(ctx.index.by_session),
            subscribers=sum(len(items) for items in self._subscribers.values()),
            events_dropped=self._events_dropped,
            ticks=ctx.stats.ticks,
            last_tick_us=ctx.stats.last_tick_us,
            max_tick_us=ctx.stats.max_tick_us,
            messages_applied=ctx.stats.messages_applied,
            calls_forgotten=ctx.stats.calls_forgotten,
            hand_offs_here=self._hand_offs_here,
            hand_offs_spawned=self._hand_offs_spawned,
            peak_running=ctx.queues.peak_running,
            timers_armed=MappingProxyType(self._timers_armed()),
            internal_errors=self._internal_errors,
        )

    def _timers_armed(self) -> dict[str, int]:
        """Deadlines in the heap that still apply to their call (stale ones are skipped)."""
        armed = dict.fromkeys((kind.value for kind in DeadlineKind), 0)
        if self._opened and not self._closed and esper.current_world != self._world:
            esper.switch_world(self._world)
        for _, _, entity, kind in self._ctx.deadlines.heap:
            state = esper.try_component(entity, ToolCallState)
            if state is None:
                continue
            if kind is DeadlineKind.RETENTION:
                live = state.status.is_final
            elif kind is DeadlineKind.OVERDUE:
                live = state.status is CallStatus.RUNNING and not state.overdue
            else:
                live = state.status is CallStatus.RUNNING
            armed[kind.value] += live
        return armed

    # -------------------------------------------------------------------- kernel

    async def _drive(self) -> None:
        ctx = self._ctx
        limits = ctx.limits
        while True:
            self._wake = anyio.Event()
            self._wake_requested = False
            self._tick()
            if ctx.inbox or (ctx.queues.ring and ctx.queues.running_total < limits.max_running):
                await anyio.lowlevel.checkpoint()
                continue
            deadline = self._next_deadline()
            budget = None if deadline is None else self._clock.sleep_budget(deadline)
            if budget is not None and budget <= 0:
                await anyio.lowlevel.checkpoint()
                continue
            self._armed = deadline
            self._asleep = True
            try:
                if budget is None:
                    await self._wake.wait()
                else:
                    with anyio.move_on_after(budget):
                        await self._wake.wait()
            finally:
                self._asleep = False

    def _on_clock_advance(self) -> None:
        """A manual clock moved: wake the driver if the deadline it sleeps until passed."""
        if self._asleep and self._armed is not None and self._clock.monotonic() >= self._armed:
            self._notify()

    def _rearm(self) -> None:
        """After a tick the driver did not run: wake it if it must tick sooner than it would."""
        ctx = self._ctx
        if ctx.inbox or (ctx.queues.ring and ctx.queues.running_total < ctx.limits.max_running):
            self._notify()
            return
        deadline = self._next_deadline()
        if deadline is not None and (self._armed is None or deadline < self._armed):
            self._notify()

    def _next_deadline(self) -> float | None:
        calls = self._ctx.deadlines.next_due()
        waiters = self._ctx.waiters.next_due()
        if calls is None:
            return waiters
        return calls if waiters is None else min(calls, waiters)

    def _tick(self) -> None:
        """Apply up to ``messages_per_tick`` inbox messages, run the phases, perform the effects.

        A tick run from inside the effects (a listener cancels a call) performs
        its own effects after the ones in progress, so events keep their order.
        """
        if self._processing:
            return
        self._processing = True
        started = time.perf_counter()
        ctx = self._ctx
        try:
            if esper.current_world != self._world:
                esper.switch_world(self._world)
            inbox = ctx.inbox
            batch = ctx.batch
            for _ in range(min(len(inbox), ctx.limits.messages_per_tick)):
                batch.append(inbox.popleft())
            ctx.now = self._clock.monotonic()
            ctx.wall = self._clock.wall()
            esper.process(ctx)
            effects = ctx.effects
            ctx.effects = self._spare.pop() if self._spare else Effects()
        finally:
            self._processing = False
        if self._performing:
            self._later.append(effects)
        else:
            self._performing = True
            try:
                self._perform(effects)
                while self._later:
                    self._perform(self._later.popleft())
            finally:
                self._performing = False
        cost = (time.perf_counter() - started) * 1e6
        stats = ctx.stats
        stats.last_tick_us = cost
        if cost > stats.max_tick_us:
            stats.max_tick_us = cost
        if self._asleep:
            self._rearm()

    def _drain(self) -> None:
        """Tick until the inbox is empty, so what the caller queued has been applied."""
        self._tick()
        while self._ctx.inbox and not self._processing:
            self._tick()

    def _apply_now(self) -> None:
        """Drain for a cancel or a completion: freed slots are filled by the driver."""
        self._ctx.admit = False
        try:
            self._drain()
        finally:
            self._ctx.admit = True

    def _perform(self, effects: Effects) -> None:
        for entity in effects.start:
            self._start(entity)
        for entity in effects.cancel:
            running = self._running.pop(entity, None)
            if running is not None:
                handle = running._cancel()
                if handle is not None:
                    self._interrupt(handle)
        for entity in effects.forget:
            self._running.pop(entity, None)
            self._looks.pop(entity, None)
        for waiter in effects.release:
            waiter.notify()
        for query, found in effects.answer:
            query.answer(found)
        for session, events in effects.deliver.items():
            for stream in self._subscribers.get(session, ()):
                for event in events:
                    try:
                        stream.send_nowait(event)
                    except anyio.WouldBlock:
                        self._events_dropped += 1
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                        break  # the subscriber stopped reading; its context removes it
            self._delivering = session
            for callback in tuple(self._callbacks.get(session, ())):
                for event in events:
                    try:
                        callback(event)
                    except (KeyboardInterrupt, SystemExit):
                        raise
                    except BaseException as error:  # a listener's bug stays its own
                        self._internal_errors += 1
                        self._log.warning(
                            "call_event_listener.failed",
                            session_id=session,
                            error=f"{type(error).__name__}: {error}",
                        )
        effects.clear()
        self._spare.append(effects)

    def _interrupt(self, handle: TaskHandle[None]) -> None:
        """Cancel the task from a loop callback, batched: outside any task, anyio does not
        format the calling task into the reason, which was half the cost of a cancel."""
        if not self._interrupts:
            self._loop.call_soon(self._deliver_interrupts)
        self._interrupts.append(handle)

    def _deliver_interrupts(self) -> None:
        """At most ``INTERRUPTS_PER_PASS`` a loop pass: each wakes a task that unwinds in
        the next pass, so cancelling 100,000 running calls never stalls the loop for long."""
        handles = self._interrupts
        batch, self._interrupts = handles[:INTERRUPTS_PER_PASS], handles[INTERRUPTS_PER_PASS:]
        if self._interrupts:
            self._loop.call_soon(self._deliver_interrupts)
        for handle in batch:
            handle.cancel()

    def _start(self, entity: Entity) -> None:
        config = self._config(entity)
        tool = self._tools[config.tool_name]
        args = esper.component_for_entity(entity, ToolCallArgs).value
        threaded = config.runner is None and not tool.is_async
        context = ToolContext(entity, config, self._post, self._clock.wall, threaded=threaded)
        self._running[entity] = context
        context._handle = self._work.start_soon(self._run, entity, config, tool, args, context)

    async def _run(
        self,
        entity: Entity,
        config: ToolCallConfig,
        tool: Tool[Any],
        args: object,
        context: ToolContext,
    ) -> None:
        """Run the work, again after a failure while ``retries`` allow, and report once.

        Only a cancel the runtime asked for ends the task cancelled; a tool that
        raises ``CancelledError`` on its own ends its call ``failed``.
        """
        self._live[entity] = (config, asyncio.current_task())
        attempts = config.retries + 1
        try:
            for attempt in range(1, attempts + 1):
                try:
                    report = await self._attempt(entity, config, tool, args, context)
                except self._cancelled_exc:
                    if context._cancelled or self._closed or _cancel_requested():
                        raise  # the task's own cancel scope (anyio's TaskHandle) absorbs it
                    report = ReportFailure(entity, CallError(ErrorKind.TOOL_ERROR, _STRAY_CANCEL))
                except BaseException as error:
                    report = ReportFailure(entity, _failure(error))
                if isinstance(report, ReportFailure) and attempt < attempts:
                    context.log(f"attempt {attempt} of {attempts} failed: {report.error.message}")
                    continue
                break
        finally:
            self._live.pop(entity, None)
        self._running.pop(entity, None)
        if config.session_id in self._callbacks and not self._closed:
            await self._report_here(config.session_id, report)
        else:
            self._post(report)

    async def _report_here(self, session: SessionId, report: InboxMessage) -> None:
        """Tick in this task, so a listening session hears of the end with no hop, and
        run the hand-offs its callbacks asked for (the session's own first, here)."""
        self._ctx.inbox.append(report)
        self._hand_offs = []
        try:
            self._tick()
        finally:
            hand_offs, self._hand_offs = self._hand_offs, None
        here = next((fn for owner, fn in hand_offs if owner == session), None)
        for _, follow_up in hand_offs:
            if follow_up is not here:
                self._hand_offs_spawned += 1
                self._work.start_soon(self._follow, follow_up)
        if here is not None:
            self._hand_offs_here += 1
            await self._follow(here)

    async def _follow(self, follow_up: Callable[[], Awaitable[None]]) -> None:
        try:
            await follow_up()
        except self._cancelled_exc:
            if self._closed or _cancel_requested():
                raise
            self._internal_errors += 1
            self._log.warning("call_event_hand_off.failed", error="CancelledError nobody asked for")
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:  # a listener's bug stays its own
            self._internal_errors += 1
            self._log.warning(
                "call_event_hand_off.failed", error=f"{type(error).__name__}: {error}"
            )

    async def _attempt(
        self,
        entity: Entity,
        config: ToolCallConfig,
        tool: Tool[Any],
        args: object,
        context: ToolContext,
    ) -> ReportResult | ReportFailure:
        """One run of the work, its value checked: a sync tool's in its own thread."""
        limit = self._max_result_chars
        if config.runner is not None:
            call = IsolatedCall(config.call_id, config.session_id, tool.name, config.tool_input)
            return _settle(entity, await self._runners[config.runner].run(call, context), limit)
        if tool.is_async:
            if tool.takes_context:
                return _settle(entity, await tool.fn(args, context), limit)
            return _settle(entity, await tool.fn(args), limit)

        def work() -> ReportResult | ReportFailure:
            value = tool.fn(args, context) if tool.takes_context else tool.fn(args)
            return _settle(entity, value, limit)

        report: ReportResult | ReportFailure = await self._threads.run(
            work, label=f"{config.call_id} ({config.tool_name})"
        )
        return report

    def _post(self, message: InboxMessage) -> None:
        """Append to the inbox and wake the driver; callable from any thread."""
        self._ctx.inbox.append(message)
        if self._wake_requested:
            return
        if threading.get_ident() == self._loop_thread:
            self._notify()
            return
        self._wake_requested = True
        with contextlib.suppress(RuntimeError):  # the event loop is gone: the runtime closed
            anyio.from_thread.run_sync(self._set_wake, token=self._token)

    def _notify(self) -> None:
        if not self._wake_requested:
            self._wake_requested = True
            self._wake.set()

    def _set_wake(self) -> None:
        self._wake.set()

    def _flush(self) -> None:
        """Apply what is queued so a read sees every earlier submit and report."""
        self._check_loop_thread("status_threadsafe")
        if self._ctx.inbox:
            self._drain()
        elif esper.current_world != self._world:
            esper.switch_world(self._world)

    def _check_loop_thread(self, instead: str) -> None:
        self._check_open()
        if threading.get_ident() != self._loop_thread:
            raise WrongThreadError(
                f"call the runtime from its event loop's thread; from other threads use {instead}()"
            )

    def _resolve(self, call_id: str, session_id: str | None) -> Entity:
        _check_text("call_id", call_id)
        entity = self._ctx.index.by_id.get(CallId(call_id))
        if entity is None:
            raise UnknownCallError(call_id)
        if session_id is not None and self._config(entity).session_id != session_id:
            raise UnknownCallError(call_id)
        return entity

    def _config(self, entity: Entity) -> ToolCallConfig:
        return esper.component_for_entity(entity, ToolCallConfig)

    def _state(self, entity: Entity) -> ToolCallState:
        return esper.component_for_entity(entity, ToolCallState)

    def _check_open(self) -> None:
        if not self._opened or self._closed:
            state = "closed" if self._closed else "not started (use 'async with Runtime(...)')"
            raise RuntimeClosedError(f"the runtime is {state}")


def _settle(entity: Entity, value: Any, limit: int | None) -> ReportResult | ReportFailure:
    """The report of a value a tool returned: checked once, here, for every later reader."""
    if isinstance(value, ToolFailure):
        return ReportFailure(entity, CallError(ErrorKind.TOOL_ERROR, safe_text(value.message)))
    try:
        return ReportResult(entity, to_json(value, limit=limit))
    except ResultTooLarge as error:
        message = (
            f"the tool's result is too large: {error}; return less (a summary, a page, "
            "or where the full data was written)"
        )
        return ReportFailure(entity, CallError(ErrorKind.INVALID_RESULT, message))
    except (TypeError, ValueError) as error:
        message = f"the tool returned a value that is not JSON: {error}"
        return ReportFailure(entity, CallError(ErrorKind.INVALID_RESULT, message))


def _cancel_requested() -> bool:
    """Whether someone asked the current task to stop (asyncio counts the requests)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # not on asyncio: trust the exception
        return True
    return task is None or task.cancelling() > 0


def _failure(error: BaseException) -> CallError:
    if isinstance(error, CallCancelled):
        return CallError(ErrorKind.CANCELLED, str(error))
    text = safe_text(str(error))
    message = f"{type(error).__name__}: {text}" if text else type(error).__name__
    return CallError(ErrorKind.TOOL_ERROR, message)


def _parse_input(tool_input: Mapping[str, Any] | str | None) -> tuple[JsonObject, CallError | None]:
    if tool_input is None:
        return {}, None
    if isinstance(tool_input, str):
        try:
            tool_input = json.loads(tool_input)
        except json.JSONDecodeError as error:
            message = f"tool input must be a JSON object; this is not valid JSON: {error}"
            return {}, CallError(ErrorKind.INVALID_INPUT, message)
    if not isinstance(tool_input, Mapping):
        kind = type(tool_input).__name__
        return {}, CallError(
            ErrorKind.INVALID_INPUT, f"tool input must be a JSON object, got {kind}"
        )
    copy = dict(tool_input)
    if all(type(value) in _PLAIN for value in copy.values()) and all(
        type(key) is str for key in copy
    ):
        return copy, None
    try:
        return to_json(copy), None  # type: ignore[return-value]
    except (TypeError, ValueError) as error:
        return {}, CallError(ErrorKind.INVALID_INPUT, f"tool input is not JSON: {error}")


def _check_text(name: str, value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if not value:
        raise ValueError(f"{name} must not be empty")


def _check_seconds(name: str, value: object) -> None:
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")


def _nothing() -> None:
    return None
