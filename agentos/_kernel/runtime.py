"""The public face of the kernel: ``Runtime``, hosting tool calls as entities of one world.

``Runtime`` checks what callers pass (``checks``), posts it to the inbox or
reads the world, and leaves the rest to the parts it holds, each built with one
``RuntimeCore`` (``parts``): its opening and closing (``lifespan``), new calls
(``submission``), the reads (``reads``), cancel and complete (``control``), session
entities (``session_entities``) and calls from other threads (``threadsafe``); below
them the kernel (``kernel``: the world, ticks, effects, the driver, hand-offs), the
work (``work``: tasks, threads, isolated runners, retries) and the listeners
(``listeners``: subscriber streams and callbacks). The tools it may run are its base's
(``tool_hosting``). Its public methods that a part answers are one-line delegations.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Mapping
from contextlib import AbstractContextManager
from contextlib import asynccontextmanager
from typing import Any
from typing import Self
from typing import TypeVar

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from agentos._kernel.checks import check_positive_int
from agentos._kernel.checks import check_seconds
from agentos._kernel.checks import check_text
from agentos._kernel.clock import Clock
from agentos._kernel.clock import SystemClock
from agentos._kernel.control import CallControl
from agentos._kernel.kernel import Kernel
from agentos._kernel.lifespan import lifespan
from agentos._kernel.listeners import EVENT_BUFFER as EVENT_BUFFER
from agentos._kernel.listeners import Listeners
from agentos._kernel.options import DEFAULT_OPTIONS
from agentos._kernel.options import CallOptions
from agentos._kernel.parts import RuntimeCore
from agentos._kernel.questions import AskPerson
from agentos._kernel.questions import checked_answer
from agentos._kernel.reads import CallReads
from agentos._kernel.session_entities import SessionEntities
from agentos._kernel.snapshot import CancelOutcome
from agentos._kernel.snapshot import CompleteOutcome
from agentos._kernel.snapshot import RuntimeStatistics
from agentos._kernel.snapshot import SessionSnapshot
from agentos._kernel.submission import CallSubmission
from agentos._kernel.threadsafe import ThreadsafeCalls
from agentos._kernel.tool_hosting import ToolHosting
from agentos._kernel.tools import Tool
from agentos._kernel.toolsets import Toolset
from agentos._kernel.work import Work
from components import Answer
from components import CallEvent
from components import CallEventKind
from components import CallId
from components import CallSnapshot
from components import CallStatus
from components import Limits
from components import SessionId
from components import TickContext

DEFAULT_SESSION = SessionId("default")

_T = TypeVar("_T")


class Runtime(ToolHosting, anyio.AsyncContextManagerMixin):
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
        toolsets: Iterable[Toolset] = (),
        clock: Clock | None = None,
        max_running: int = 256,
        max_running_per_session: int = 16,
        max_threads: int = 32,
        retention_seconds: float | None = 600.0,
        default_timeout: float | None = None,
        max_result_chars: int | None = 1_000_000,
        shutdown_grace: float = 5.0,
    ) -> None:
        """``toolsets``: where more tools come from while the runtime is open (MCP servers);
        entering the runtime starts them all, and fails with ``ToolsetError`` if one cannot.
        ``max_result_chars``: a result whose JSON text is longer fails its call
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
        self._shutdown_grace = shutdown_grace
        super().__init__(tools, toolsets, max_result_chars)
        self._clock: Clock = clock or SystemClock()
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
        self._core = core = RuntimeCore(self._ctx, kernel, self._work, self._listeners, self._clock)
        self._reads = CallReads(core)
        self._entities = SessionEntities(core)
        self._control = CallControl(core, max_result_chars)
        self._threadsafe = ThreadsafeCalls(core, self._control.cancel, self._control.complete)
        self._submission = CallSubmission(core, self._tools, self._runners, default_timeout)

    # ----------------------------------------------------------------- lifecycle

    @property
    def clock(self) -> Clock:
        """Where the runtime (and its sessions) read time: call and yield deadlines."""
        return self._clock

    @asynccontextmanager
    async def __asynccontextmanager__(self) -> AsyncGenerator[Self, None]:
        """Open the runtime; leaving closes it in order (see ``lifespan``)."""
        async with lifespan(self._core, self._toolsets, self._control, self._shutdown_grace):
            yield self

    def flush(self) -> bool:
        """Apply every message queued in the inbox now, as each read does first.

        Returns whether there was anything to apply. For tests and tools that
        step the runtime by hand (``agentos.testing.settle``); the driver
        applies the inbox by itself.
        """
        self._core.check_loop_thread("status_threadsafe")
        return self._kernel.flush()

    def batch(self, *, share_tick: bool = False) -> AbstractContextManager[None]:
        """Submits this task makes inside are applied together as the block ends, in this
        task, with no hop to the driver (see ``Kernel.batch``).

        ``share_tick``: if a tick is coming anyway (the driver's, or a running call's
        report), leave the submits to it, so a busy runtime applies many tasks' batches in
        one tick; a session submits a reply's calls so. A read still sees them at once.
        """
        self._core.check_loop_thread("submit_threadsafe")
        return self._kernel.batch(share_tick)

    def pending_work(self) -> bool:
        """Whether anything is queued or undelivered: inbox messages not yet applied, or
        cancellations not yet delivered to their tasks."""
        return bool(self._ctx.inbox or self._ctx.quiet) or self._work.interrupting()

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
        ids = (session_id, provider_call_id, conversation_id, turn_id, parent_call_id)
        return self._submission.submit(tool_name, tool_input, *ids, options)

    def record_cached(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        result: object,
        *,
        session_id: str = DEFAULT_SESSION,
        provider_call_id: str | None = None,
        turn_id: str | None = None,
        label: str | None = None,
    ) -> CallId:
        """A call answered from a cache: an entity born ``completed`` with ``result`` and
        marked ``from_cache``, so every call a model made can be looked at like any other."""
        return self._submission.record_cached(
            tool_name,
            tool_input,
            result,
            session_id=session_id,
            provider_call_id=provider_call_id,
            turn_id=turn_id,
            label=label,
        )

    def cancel(
        self, call_id: str, reason: str = "cancelled by caller", *, session_id: str | None = None
    ) -> CancelOutcome:
        """Cancel a call now; says whether it took and what the status was before.

        A final call is left as it is (``cancelled=False``). A running call's
        work is interrupted; a tool that ignores that cannot hold the call,
        which is reported ``cancelled`` at once.
        """
        return self._control.cancel(call_id, reason, session_id=session_id)

    def complete(
        self, call_id: str, result: object = None, *, error: str | None = None
    ) -> CompleteOutcome:
        """Give a deferred call its outcome from outside: a result, or an error message.

        Completing twice is harmless (``applied`` is False the second time);
        a call that was not submitted ``deferred`` cannot be completed so, and
        answers like an unknown id.
        """
        return self._control.complete(call_id, result, error=error)

    def answer(self, call_id: str, answer: Answer, *, session_id: str | None = None) -> bool:
        """Answer the question a running call asks (``ctx.ask``); False when it asks none
        (answered already, or ended). ``UnknownCallError`` for a call it does not hold
        (with ``session_id``: one of another session too); ``TypeError`` or
        ``ValueError`` for an answer no asker can read, or content that does not fit the
        question's form (naming the field; the question stays). The form's defaults fill
        what the person left out."""
        self._core.check_loop_thread("from_thread")
        checked = checked_answer(answer)  # refused before the call is looked up
        return self._work.questions.answer(
            self._reads.status(call_id, session_id=session_id), checked
        )

    @property
    def ask_person(self) -> AskPerson | None:
        """Who answers the questions calls ask (``Host(ask_person=...)``): an ``Answer``, or
        None to leave it to ``answer``; with no hook a question is declined at once."""
        return self._work.questions.ask_person

    @ask_person.setter
    def ask_person(self, hook: AskPerson | None) -> None:
        self._work.questions.set_hook(hook)

    @asynccontextmanager
    async def subscribe(
        self, session_id: str
    ) -> AsyncIterator[MemoryObjectReceiveStream[CallEvent]]:
        """Receive every ``CallEvent`` of one session while the context is open."""
        self._core.check_open()
        check_text("session_id", session_id)
        async with self._listeners.subscribe(SessionId(session_id)) as receive:
            yield receive

    def on_call_events(
        self,
        session_id: str,
        callback: Callable[[CallEvent], object],
        *,
        kinds: Collection[CallEventKind] | None = None,
    ) -> Callable[[], None]:
        """Call ``callback`` with each of the session's call events, right after its tick
        (``kinds``: only events of these kinds; one that no listener wants is not made).

        The cheapest way to listen (no stream, no task): the callback must be
        quick and must not call back into the runtime. Returns a function that
        stops the calls.
        """
        check_text("session_id", session_id)
        return self._listeners.add_callback(SessionId(session_id), callback, kinds)

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

    # ------------------------------------------------------------------ the parts

    def status(self, call_id: str, *, session_id: str | None = None) -> CallSnapshot:
        """The call as it is now. With ``session_id``, only that session's calls are visible."""
        return self._reads.status(call_id, session_id=session_id)

    def last_status(self, call_id: str) -> CallStatus | None:
        """The call's status as the last tick left it (None: no such call, or the runtime is
        closed). It applies nothing queued, so an ``on_call_events`` callback may read it
        while a tick delivers, and raises nothing but ``WrongThreadError``."""
        return self._reads.last_status(call_id)

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
        return await self._reads.wait(call_id, timeout, session_id)

    def resolve(
        self, call_id: str, *, session_id: str, conversation_id: str | None = None
    ) -> CallId:
        """The internal id of the call ``call_id`` names: an internal id, or a provider id.

        A provider id (``toolu_...``) is looked up within ``session_id`` (and
        ``conversation_id`` when given: a call submitted without one belongs to all of
        its session's conversations). Provider ids repeat across turns: the
        call still in flight wins, then the latest started.
        """
        return self._reads.resolve(call_id, session_id=session_id, conversation_id=conversation_id)

    def owner(self, call_id: str) -> SessionId:
        """The session a call belongs to (cheaper than a whole ``status``)."""
        return self._reads.owner(call_id)

    def look(self, call_id: str, observer: str) -> tuple[CallSnapshot, bool]:
        """``status`` plus whether anything moved since ``observer`` last looked at the call.

        The first look counts as a change. Looks are remembered per observing
        session for as long as the call is in the world.
        """
        return self._reads.look(call_id, observer)

    def list_calls(self, session_id: str, *, include_final: bool = True) -> list[CallSnapshot]:
        """The session's calls in submission order (only non-final ones if asked)."""
        return self._reads.list_calls(session_id, include_final=include_final)

    def statistics(self) -> RuntimeStatistics:
        """Counts and costs of the runtime as they are now."""
        return self._reads.statistics()

    def open_session(
        self, session_id: str, *, agent: str, model: str, parent: str | None = None
    ) -> None:
        """Make the session an entity of the world (a second open changes nothing)."""
        return self._entities.open_session(session_id, agent=agent, model=model, parent=parent)

    def close_session(self, session_id: str) -> None:
        """Forget the session entity and its cap (its host unloaded it); a later open is new.
        Its calls are not touched: they end and are forgotten as any call is."""
        return self._entities.close_session(session_id)

    def update_session(self, session_id: str, *, status: str, requests: int, errors: int) -> None:
        """Record what a session is doing on its entity (applied by the next tick)."""
        return self._entities.update_session(
            session_id, status=status, requests=requests, errors=errors
        )

    def session(self, session_id: str) -> SessionSnapshot:
        """The session entity; LookupError if it was never opened."""
        return self._entities.session(session_id)

    def set_session_cap(self, session_id: str, cap: int | None) -> None:
        """Let one session run up to ``cap`` calls at once (None: back to the default)."""
        return self._entities.set_session_cap(session_id, cap)

    def sessions(self) -> list[SessionId]:
        """Every session that has a call in the world."""
        return self._entities.sessions()

    def status_threadsafe(self, call_id: str, timeout: float | None = 10.0) -> CallSnapshot:
        """``status`` for code running in another thread (a sync tool, a UI thread), answered
        by the next tick; ``TimeoutError`` if no answer comes within ``timeout`` seconds."""
        return self._threadsafe.status_threadsafe(call_id, timeout)

    def cancel_threadsafe(
        self, call_id: str, reason: str = "cancelled by caller", *, session_id: str | None = None
    ) -> CancelOutcome:
        """``cancel`` for code running in another thread (a sync tool, a UI thread): runs
        ``cancel`` on the event loop's thread and waits for its answer."""
        return self._threadsafe.cancel_threadsafe(call_id, reason, session_id=session_id)

    def complete_threadsafe(
        self, call_id: str, result: object = None, *, error: str | None = None
    ) -> CompleteOutcome:
        """``complete`` for code running in another thread."""
        return self._threadsafe.complete_threadsafe(call_id, result, error=error)

    def from_thread(self, action: Callable[[], _T]) -> _T:
        """Run ``action`` on the event loop's thread and return what it returns (or raise
        what it raises), from another thread: how the ``*_threadsafe`` methods, and those
        of what is built on a runtime (a ``Session``), cross over."""
        return self._threadsafe.from_thread(action)

    def check_thread(self, instead: str) -> None:
        """``WrongThreadError`` naming ``instead`` unless called on the event loop's thread;
        for what is built on a runtime (a ``Session``) to guard its methods the same way."""
        self._core.check_thread(instead)
