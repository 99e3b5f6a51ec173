"""What a running tool sees of its call: ids, progress reporting, cancellation."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from collections.abc import Coroutine
from collections.abc import Sequence
from typing import Any

from agentos._errors import CallCancelled
from agentos._errors import UsageError
from agentos._kernel.checks import check_text
from agentos._kernel.interrupt import Interrupt
from agentos._kernel.json_values import safe_text
from agentos._kernel.json_values import to_json
from agentos._kernel.process import ProcessResult
from agentos._kernel.process import run_process
from agentos._kernel.questions import Asked
from agentos._kernel.questions import AskFunction
from components import PROGRESS_PER_TICK
from components import Answer
from components import CallId
from components import ConversationId
from components import Entity
from components import InboxMessage
from components import Json
from components import JsonObject
from components import ProgressBatch
from components import ProgressKind
from components import ProgressNote
from components import Question
from components import ReportProgress
from components import SessionId
from components import ToolCallConfig
from components import TurnId


class ToolContext:
    """Handed to a tool function; safe to use from its task or its worker thread.

    Reports go to the runtime's inbox and show in the call's state after the
    next tick. Payloads must be JSON values; anything else raises TypeError
    in the tool, which ends the call ``failed`` with that message. Reports
    made before the next tick are coalesced into one message, which carries the
    newest ``PROGRESS_PER_TICK`` and the count of older ones (a flood's, folded
    into one event), so a call's pending reports stay bounded.
    """

    __slots__ = (
        "_ask",
        "_cancel_event",
        "_cancel_reason",
        "_cancelled",
        "_config",
        "_entity",
        "_handle",
        "_lock",
        "_pending",
        "_post",
        "_post_unhurried",
        "_skipped",
        "_wall",
    )

    def __init__(
        self,
        entity: Entity,
        config: ToolCallConfig,
        post: Callable[[InboxMessage], None],
        post_unhurried: Callable[[InboxMessage], None],
        wall: Callable[[], float],
        ask: AskFunction,
        *,
        threaded: bool,
    ) -> None:
        self._entity = entity
        self._ask = ask
        self._config = config
        self._post = post
        self._post_unhurried = post_unhurried
        self._wall = wall
        self._cancelled = False
        self._cancel_reason: str | None = None
        self._cancel_event: threading.Event | None = None
        """Made when a sync tool first waits on it (``wait_cancelled``), under ``_lock``."""
        self._lock = threading.Lock() if threaded else None
        self._pending: deque[ProgressNote] | None = None
        self._skipped = 0
        self._handle: Interrupt | None = None

    @property
    def call_id(self) -> CallId:
        return self._config.call_id

    @property
    def provider_call_id(self) -> str | None:
        return self._config.provider_call_id

    @property
    def session_id(self) -> SessionId:
        return self._config.session_id

    @property
    def conversation_id(self) -> ConversationId | None:
        return self._config.conversation_id

    @property
    def turn_id(self) -> TurnId | None:
        return self._config.turn_id

    @property
    def parent_call_id(self) -> CallId | None:
        return self._config.parent_call_id

    @property
    def tool_name(self) -> str:
        return self._config.tool_name

    @property
    def trace_parent(self) -> str | None:
        """The W3C ``traceparent`` of the call's span when its session traces (pass it on
        to what the tool calls, as an MCP call does in ``_meta``); None otherwise."""
        return self._config.trace_parent

    def progress(self, payload: object, *, kind: ProgressKind = ProgressKind.PARTIAL) -> None:
        """Report structured progress (a partial result, a percentage, ...)."""
        self._report((kind, _json(payload), self._wall()))

    def _progress_before_end(self, payload: object) -> None:
        """``progress`` from a call whose end comes next (a sub-agent's answer): it waits in
        the inbox for the tick of that end instead of waking the driver for one of its own."""
        self._report((ProgressKind.PARTIAL, _json(payload), self._wall()), unhurried=True)

    def log(self, line: str) -> None:
        """Report one free-form log line."""
        self._report((ProgressKind.LOG, safe_text(str(line)), self._wall()))

    def heartbeat(self) -> None:
        """Say the call is alive without claiming it moved forward."""
        self._report((ProgressKind.HEARTBEAT, None, self._wall()))

    def ask(
        self,
        message: str,
        *,
        form: JsonObject | None = None,
        url: str | None = None,
        source: str | None = None,
    ) -> Coroutine[Any, Any, Answer]:
        """Ask a person and wait for the answer, the call still ``running`` meanwhile: its
        question shows on it (``CallSnapshot.question``) until answered. ``form`` is the
        JSON Schema of the answer's fields, or ``url`` a page the person opens instead;
        ``source`` says who asks. Declined at once, with the reason, when the runtime's
        host has nobody to ask, or the call's owner said nobody is there
        (``CallOptions.nobody_to_ask``); cancelling the call ends the wait. Async tools only: a sync
        tool's call fails with ``UsageError`` saying so."""
        if self._lock is not None:
            raise UsageError("ask is for async tools: a sync tool cannot wait for a person")
        check_text("message", message)
        if form is not None and not isinstance(to_json(form), dict):
            raise TypeError(f"form must be a JSON Schema object, got {type(form).__name__}")
        if url is not None:
            check_text("url", url)
        question = Question(message, form, url, source, self._wall())
        asked = Asked(self.call_id, self.session_id, self.tool_name, question)

        def report(answer: Answer | None) -> None:
            # A message of its own, not the batch: a flood of lines must not drop it.
            if answer is None:
                kind, payload = ProgressKind.QUESTION, question.to_json()
            else:
                kind, payload = ProgressKind.ANSWER, answer.to_json()
            self._post(ReportProgress(self._entity, kind, payload, self._wall()))

        return self._ask(asked, report, self._config.nobody_to_ask)

    def _report(self, note: ProgressNote, *, unhurried: bool = False) -> None:
        if self._lock is None:
            first = self._queue(note)
        else:
            with self._lock:
                first = self._queue(note)
        if first:
            batch = ProgressBatch(self._entity, self._take)
            if unhurried:
                self._post_unhurried(batch)
            else:
                self._post(batch)

    def _queue(self, note: ProgressNote) -> bool:
        """Add to the batch; True if this starts one (it must then be posted)."""
        pending = self._pending
        if pending is None:
            self._pending = deque((note,), maxlen=PROGRESS_PER_TICK)
            return True
        if len(pending) == PROGRESS_PER_TICK:
            self._skipped += 1
        pending.append(note)
        return False

    def _take(self) -> tuple[Sequence[ProgressNote], int]:
        """Called by the tick that applies the batch; the next report starts a new one."""
        if self._lock is None:
            return self._swap()
        with self._lock:
            return self._swap()

    def _swap(self) -> tuple[Sequence[ProgressNote], int]:
        pending, skipped = self._pending, self._skipped
        self._pending, self._skipped = None, 0
        return pending or (), skipped

    @property
    def cancelled(self) -> bool:
        """Whether the call was cancelled (by a caller or a timeout)."""
        return self._cancelled

    @property
    def cancel_reason(self) -> str | None:
        """Why the call was cancelled: the reason its canceller gave, or how it timed out
        (None until then). Pass it on to what the tool started (an MCP server hears it)."""
        return self._cancel_reason

    def check_cancelled(self) -> None:
        """For sync tools: raise ``CallCancelled`` once the call has been cancelled."""
        if self._cancelled:
            raise CallCancelled(f"tool call {self.call_id} was cancelled")

    def wait_cancelled(self, seconds: float) -> bool:
        """For sync tools: sleep up to ``seconds``, waking early on cancel; True if cancelled."""
        lock = self._lock
        if lock is None:
            raise UsageError("wait_cancelled is for sync tools; async tools are cancelled")
        with lock:
            event = self._cancel_event
            if event is None:
                event = self._cancel_event = threading.Event()
                if self._cancelled:
                    event.set()
        return event.wait(seconds)

    async def run_process(
        self,
        argv: Sequence[str],
        *,
        input: bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
    ) -> ProcessResult:
        """Run a subprocess in its own process group; cancelling the call kills the group.

        Each stdout line becomes an ``output`` progress entry as it arrives
        (bounded like all progress); the result still carries all of stdout.
        """
        return await run_process(argv, input=input, cwd=cwd, env=env, on_line=self._output)

    def _output(self, line: bytes) -> None:
        self._report((ProgressKind.OUTPUT, line.decode("utf-8", "replace"), self._wall()))

    def _cancel(self, reason: str | None = None) -> Interrupt | None:
        """Called by the kernel (on the event loop's thread): mark the call cancelled,
        and hand back the interrupt of its task (the kernel cancels it in a batch)."""
        self._cancelled = True
        self._cancel_reason = reason
        if self._lock is not None:
            with self._lock:
                if self._cancel_event is not None:
                    self._cancel_event.set()
        handle, self._handle = self._handle, None  # it keeps the CancelledError: no cycle
        return handle


def _json(payload: object) -> Json:
    try:
        return to_json(payload)
    except (TypeError, ValueError) as error:
        raise TypeError(f"progress payload is not JSON: {error}") from None
