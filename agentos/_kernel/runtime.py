"""The public face of the kernel: ``Runtime``, hosting tool calls as entities of one world.

``Runtime`` checks what callers pass (``checks``), posts it to the inbox or
reads the world, and leaves the rest to its parts: the kernel (``kernel``:
the world, ticks, effects, the driver, hand-offs), the work (``work``: tasks,
threads, isolated runners, retries) and the listeners (``listeners``:
subscriber streams and callbacks).
"""

from __future__ import annotations

import math
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Self

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from agentos._errors import UnknownCallError, UsageError
from agentos._kernel.checks import (
    check_input,
    check_optional_texts,
    check_positive_int,
    check_seconds,
    check_text,
)
from agentos._kernel.clock import Clock, SystemClock
from agentos._kernel.isolation import IsolatedRunner
from agentos._kernel.json_values import safe_text, to_json
from agentos._kernel.kernel import Kernel
from agentos._kernel.listeners import EVENT_BUFFER as EVENT_BUFFER
from agentos._kernel.listeners import Listeners
from agentos._kernel.options import DEFAULT_OPTIONS, CallOptions
from agentos._kernel.reads import CallReads
from agentos._kernel.session_entities import SessionEntities
from agentos._kernel.snapshot import CancelOutcome, CompleteOutcome
from agentos._kernel.threadsafe import ThreadsafeCalls
from agentos._kernel.tools import Tool
from agentos._kernel.work import Work
from components import (
    CallError,
    CallEvent,
    CallId,
    CancelCall,
    CancelReply,
    CompleteCall,
    CompleteReply,
    ConversationId,
    ErrorKind,
    Limits,
    SessionId,
    SubmitCall,
    TickContext,
    TimeoutSettings,
    ToolCallConfig,
    TurnId,
    new_call_id,
)

DEFAULT_SESSION = SessionId("default")


class Runtime(CallReads, SessionEntities, ThreadsafeCalls, anyio.AsyncContextManagerMixin):
    """Hosts tool calls as entities of one esper world, moved by tick-driven systems.

    Use it as an async context manager, entered once. Call its methods from
    the event loop's thread; from other threads (a sync tool, a UI) use
    ``submit`` and the ``*_threadsafe`` methods, the others refuse at once.
    Leaving the context cancels every call that is not final and waits up to
    ``shutdown_grace`` seconds for the work to end.
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
        check_positive_int("max_running", max_running)
        check_positive_int("max_running_per_session", max_running_per_session)
        check_positive_int("max_threads", max_threads)
        if retention_seconds is not None:
            check_seconds("retention_seconds", retention_seconds)
        if default_timeout is not None:
            check_seconds("default_timeout", default_timeout)
        check_positive_int("max_result_chars", max_result_chars, optional=True)
        check_seconds("shutdown_grace", shutdown_grace)
        self._max_result_chars = max_result_chars
        self._shutdown_grace = shutdown_grace
        self._tools: dict[str, Tool[Any]] = {}
        self._runners: dict[str, IsolatedRunner] = {}
        for item in tools:
            self.add_tool(item)
        self._clock: Clock = clock or SystemClock()
        self._default_timeout = default_timeout
        self._ctx = TickContext(
            limits=Limits(max_running, max_running_per_session, retention_seconds)
        )
        self._listeners = Listeners(self._ctx)
        self._kernel = kernel = Kernel(self._ctx, self._clock, self._listeners)
        self._work = kernel.work = Work(
            kernel,
            self._tools,
            self._runners,
            max_threads=max_threads,
            max_result_chars=max_result_chars,
        )
        self._post = kernel.post
        self._opened = False

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
        check_text("name", name)
        if name in self._runners:
            raise ValueError(f"a runner named {name!r} is already registered")
        self._runners[name] = runner

    @property
    def tools(self) -> Mapping[str, Tool[Any]]:
        return dict(self._tools)

    @property
    def runners(self) -> Mapping[str, IsolatedRunner]:
        """The isolated runners registered with ``add_runner``, by name."""
        return dict(self._runners)

    @property
    def clock(self) -> Clock:
        """Where the runtime (and its sessions) read time: call and yield deadlines."""
        return self._clock

    @asynccontextmanager
    async def __asynccontextmanager__(self) -> AsyncGenerator[Self, None]:
        """Open the world, the work group and the driver; on the way out, close them
        in order: cancel the calls, end (or abandon) the work, stop the driver."""
        if self._opened:
            raise UsageError("a Runtime can be entered only once")
        self._opened = True
        kernel = self._kernel
        kernel.open()
        try:
            async with anyio.create_task_group() as group:
                await self._work.open()
                forget_clock = self._clock.on_advance(kernel.wake_on_clock)
                group.start_soon(kernel.drive)
                try:
                    yield self
                finally:
                    try:
                        self._cancel_everything("runtime closed")
                    finally:
                        kernel.closed = True
                        forget_clock()
                        await self._work.close(self._shutdown_grace)
                        group.cancel_scope.cancel()
        finally:
            self._listeners.close()
            kernel.close()

    def _cancel_everything(self, reason: str) -> None:
        self._flush()
        for call_id, entity in list(self._ctx.index.by_id.items()):
            if not self._state(entity).status.is_final:
                self._ctx.inbox.append(CancelCall(call_id, None, reason, CancelReply()))
        self._kernel.apply_now()

    def flush(self) -> bool:
        """Apply every message queued in the inbox now, as each read does first.

        Returns whether there was anything to apply. For tests and tools that
        step the runtime by hand (``agentos.testing.settle``); the driver
        applies the inbox by itself.
        """
        self._check_loop_thread("status_threadsafe")
        return self._kernel.flush()

    def pending_work(self) -> bool:
        """Whether anything is queued or undelivered: inbox messages not yet applied, or
        cancellations not yet delivered to their tasks."""
        return bool(self._ctx.inbox) or self._work.interrupting()

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
        options: CallOptions = DEFAULT_OPTIONS,
    ) -> CallId:
        """Queue a call and return its id at once; ``options`` say how it runs.

        Bad input never raises here: an unknown tool, malformed JSON or input
        the tool's model rejects settles the call ``failed`` with a message
        naming the problem. Wrong argument types for the method itself, and
        wrong ``options``, raise. ``conversation_id`` groups calls within a
        session for callers that hold several conversations in one: a provider id
        then resolves only inside its own (sessions of a ``Host`` leave it unset).
        """
        self._check_open()
        check_text("tool_name", tool_name)
        check_text("session_id", session_id)
        check_optional_texts(
            provider_call_id=provider_call_id,
            conversation_id=conversation_id,
            turn_id=turn_id,
            parent_call_id=parent_call_id,
        )
        if not isinstance(options, CallOptions):
            raise TypeError(f"options must be a CallOptions, got {type(options).__name__}")
        options.check()
        runner = options.runner
        if runner is not None and runner not in self._runners:
            known = ", ".join(sorted(self._runners)) or "none"
            raise ValueError(f"no isolated runner named {runner!r} (registered: {known})")
        tool = self._tools.get(tool_name)
        timeout = options.timeout
        if timeout is None:
            timeout = (
                self._default_timeout if tool is None or tool.timeout is None else tool.timeout
            )
        elif timeout == math.inf:
            timeout = None
        raw, args, rejection = check_input(self._tools, tool_name, tool_input)
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
            timeouts=TimeoutSettings(timeout, options.overdue_after),
            deferred=bool(options.deferred),
            runner=runner,
            retries=options.retries,
            label=options.label,
        )
        self._post(SubmitCall(config, self._clock.wall(), args, rejection))
        return call_id

    def cancel(
        self, call_id: str, reason: str = "cancelled by caller", *, session_id: str | None = None
    ) -> CancelOutcome:
        """Cancel a call now; says whether it took and what the status was before.

        A final call is left as it is (``cancelled=False``). A running call's
        work is interrupted; a tool that ignores that cannot hold the call,
        which is reported ``cancelled`` at once.
        """
        self._check_loop_thread("cancel_threadsafe")
        check_text("call_id", call_id)
        if not isinstance(reason, str):
            raise TypeError(f"reason must be a str, got {type(reason).__name__}")
        if session_id is not None:
            check_text("session_id", session_id)
        reply = CancelReply()
        sid = None if session_id is None else SessionId(session_id)
        self._ctx.inbox.append(CancelCall(CallId(call_id), sid, safe_text(reason), reply))
        self._kernel.apply_now()
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
        check_text("call_id", call_id)
        if error is not None and not isinstance(error, str):
            raise TypeError(f"error must be a str, got {type(error).__name__}")
        try:
            value = to_json(result, limit=self._max_result_chars)
        except (TypeError, ValueError) as problem:
            raise ValueError(f"the result is not JSON: {problem}") from None
        failure = None if error is None else CallError(ErrorKind.TOOL_ERROR, safe_text(error))
        reply = CompleteReply()
        self._ctx.inbox.append(CompleteCall(CallId(call_id), value, failure, reply))
        self._kernel.apply_now()
        if not reply.found or reply.previous_status is None:
            raise UnknownCallError(call_id)
        return CompleteOutcome(CallId(call_id), reply.applied, reply.previous_status)

    @asynccontextmanager
    async def subscribe(
        self, session_id: str
    ) -> AsyncIterator[MemoryObjectReceiveStream[CallEvent]]:
        """Receive every ``CallEvent`` of one session while the context is open."""
        self._check_open()
        check_text("session_id", session_id)
        async with self._listeners.subscribe(SessionId(session_id)) as receive:
            yield receive

    def on_call_events(
        self, session_id: str, callback: Callable[[CallEvent], object]
    ) -> Callable[[], None]:
        """Call ``callback`` with each of the session's call events, right after its tick.

        The cheapest way to listen (no stream, no task): the callback must be
        quick and must not call back into the runtime. Returns a function that
        stops the calls.
        """
        check_text("session_id", session_id)
        return self._listeners.add_callback(SessionId(session_id), callback)

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
        return self._kernel.hand_off(follow_up)
