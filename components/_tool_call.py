"""The components of a tool-call entity: what was asked, and where it is now.

Hot-path components are slotted dataclasses: cheap to build and to hold by the
hundred thousand. Validation happens at the JSON boundary, not here.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from dataclasses import field
from enum import StrEnum

from components._frozen import quick_init
from components._ids import CallId
from components._ids import ConversationId
from components._ids import SessionId
from components._ids import TurnId
from components._json import Json
from components._json import JsonObject
from components._status import CallStatus

PROGRESS_KEPT = 50
"""How many progress entries a call keeps; older ones are counted, not kept."""


PROGRESS_PER_TICK = 1_000
"""Reports of one call that one tick tells listeners one by one. Past it (a flood), the
older reports of that tick are folded into the first event told, which counts them."""


PROGRESS_SMALL = 4
"""Up to this many entries a log is a plain list (a call's first reports are few)."""


class ProgressKind(StrEnum):
    STARTED = "started"
    """The runtime's entry for the call's start (seq 1): counted when the call starts
    running, made from ``started_at`` when read until a report builds the log."""
    LOG = "log"
    PARTIAL = "partial"
    HEARTBEAT = "heartbeat"
    OUTPUT = "output"
    """One line a subprocess run with ``ctx.run_process`` wrote to its stdout."""
    QUESTION = "question"
    """The call asks a person (``ctx.ask``): the payload is the ``Question``'s JSON."""
    ANSWER = "answer"
    """The question was answered: the payload is the ``Answer``'s action and reason."""


class ErrorKind(StrEnum):
    """Why a call ended ``failed`` (or how it was cancelled)."""

    INVALID_INPUT = "invalid_input"
    UNKNOWN_TOOL = "unknown_tool"
    TOOL_ERROR = "tool_error"
    INVALID_RESULT = "invalid_result"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"


@dataclass(slots=True, frozen=True)
class CallError:
    kind: ErrorKind
    message: str


@dataclass(slots=True, frozen=True)
class TimeoutSettings:
    """Per-call deadlines, in seconds from the moment the call starts running.

    ``hard`` ends the call ``failed`` and cancels its work; ``overdue`` only
    raises an event for the owner, who decides whether waiting is worth it.
    """

    hard: float | None = None
    overdue: float | None = None
    attempt: float | None = None
    """Seconds each attempt may run (``retries`` outside ``timeout``): one past it fails
    timed out, and the next attempt, if any, starts."""
    overdue_max: float | None = None
    """The longest the overdue interval grows to: it doubles each time the call is overdue
    (1, 2, 4, 8 ... times ``overdue``), so waiting on a slow call costs few turns. None: it
    stays ``overdue``."""

    def overdue_interval(self, times: int) -> float | None:
        """Seconds until the next overdue event of a call already overdue ``times`` times."""
        first = self.overdue
        if first is None or self.overdue_max is None or times <= 0:
            return first
        return max(first, min(first * 2.0 ** min(times, 64), self.overdue_max))


NO_TIMEOUTS = TimeoutSettings()


@quick_init
@dataclass(slots=True, frozen=True)
class ToolCallConfig:
    """What was asked: fixed when the call is submitted."""

    call_id: CallId
    session_id: SessionId
    tool_name: str
    tool_input: JsonObject
    provider_call_id: str | None = None
    conversation_id: ConversationId | None = None
    turn_id: TurnId | None = None
    parent_call_id: CallId | None = None
    timeouts: TimeoutSettings = NO_TIMEOUTS
    deferred: bool = False
    """Never scheduled: it stays pending until completed from outside (``CompleteCall``)."""
    runner: str | None = None
    """Run by this registered isolated runner instead of the tool's own function."""
    retries: int = 0
    """Further attempts after a failure, within the same call."""
    label: str | None = None
    from_cache: bool = False
    """Answered from a cache (``SubmitCall.cached_result``): born completed, never run."""
    disposition: str | None = None
    """How its owner runs it (a session's ``run_isolated``, ``run_sync``, ...): opaque here,
    told to an isolated runner."""
    trace_parent: str | None = None
    """The W3C ``traceparent`` of the call's span, when its owner traces: opaque here, told
    to the tool (an MCP server hears it in ``_meta``)."""
    nobody_to_ask: str | None = None
    """Why nobody can answer the call's questions: each is declined at once, saying so."""


@quick_init
@dataclass(slots=True, frozen=True)
class ToolCallProgress:
    """One structured progress report; ``seq`` counts every report of the call."""

    seq: int
    at: float
    kind: ProgressKind
    payload: Json


@dataclass(slots=True)
class ProgressLog:
    """The newest ``PROGRESS_KEPT`` reports of a call, and how many were dropped.

    Built with a call's first report (a quiet call has none, see
    ``ToolCallState.progress``): a short log is a list (~100 bytes) and becomes a
    bounded deque (~800 bytes) only when it outgrows ``PROGRESS_SMALL``.
    """

    entries: list[ToolCallProgress] | deque[ToolCallProgress] = field(default_factory=list)
    dropped: int = 0
    partial: ToolCallProgress | None = None
    """The newest ``partial`` report (what ``ctx.progress`` gave), kept even once a flood of
    log lines pushed it out of ``entries``: it drives a progress bar."""
    line: ToolCallProgress | None = None
    """The newest ``log`` or ``output`` line, kept likewise: it is shown beside the bar."""
    question: ToolCallProgress | None = None
    """The ``question`` the call waits to have answered (None: it waits for none)."""

    def append(self, entry: ToolCallProgress) -> None:
        entries = self.entries
        if isinstance(entries, list) and len(entries) == PROGRESS_SMALL:
            self.entries = entries = deque(entries, maxlen=PROGRESS_KEPT)
        if len(entries) == PROGRESS_KEPT:
            self.dropped += 1
        entries.append(entry)
        self.note(entry)

    def note(self, entry: ToolCallProgress) -> None:
        """Keep ``entry`` as the newest of its kind if it is a progress payload or a line
        (a report only counted, never kept, is noted too)."""
        kind = entry.kind
        if kind is ProgressKind.PARTIAL:
            self.partial = entry
        elif kind is ProgressKind.LOG or kind is ProgressKind.OUTPUT:
            self.line = entry
        elif kind is ProgressKind.QUESTION:
            self.question = entry
        elif kind is ProgressKind.ANSWER:
            self.question = None


@dataclass(slots=True)
class ToolCallState:
    """Where the call is now. Only the lifecycle transition changes ``status``.

    Times are wall-clock seconds since the epoch. ``version`` grows with every
    change a reader could see (status or progress), so a reader can tell
    whether anything moved since it last looked. A call that reported nothing has
    no log: its ``started`` entry is made from ``started_at`` when read (see
    ``progress``), so most calls cost three objects fewer for the collector to walk.
    """

    status: CallStatus = CallStatus.PENDING
    submitted_at: float = 0.0
    started_at: float | None = None
    completed_at: float | None = None
    result: Json = None
    error: CallError | None = None
    log: ProgressLog | None = None
    """The kept reports, once there is more than the ``started`` entry."""
    progress_seq: int = 0
    version: int = 0
    cancel_reason: str | None = None
    overdue: int = 0
    """How many times the call has been overdue (0: never); each time its interval doubles."""

    @property
    def progress(self) -> ProgressLog | None:
        """The kept reports, oldest first (None before the call starts): the log, built
        on first need with the ``started`` entry. Writers go through here; a reader
        that only looks uses ``entries()`` and builds nothing."""
        log = self.log
        if log is None and self.started_at is not None:
            log = self.log = ProgressLog([started_entry(self.started_at)])
        return log

    def entries(self) -> tuple[tuple[ToolCallProgress, ...], int]:
        """The kept reports and how many were dropped, building no log."""
        log = self.log
        if log is not None:
            return tuple(log.entries), log.dropped
        if self.started_at is not None:
            return (started_entry(self.started_at),), 0
        return (), 0


def started_entry(at: float) -> ToolCallProgress:
    """The entry the runtime records when a call starts running: always the first (seq 1)."""
    return ToolCallProgress(1, at, ProgressKind.STARTED, None)
