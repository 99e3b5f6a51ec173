"""What reaches a tick from outside it: commands from the API, reports from tools.

Everything here is appended to the inbox by code that is not a tick (API calls,
tool coroutines, worker threads) and applied by the ingest phase. Reply slots
are filled by a tick and read by the caller once the tick has run.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

from components._ids import CallId
from components._ids import Entity
from components._ids import SessionId
from components._json import Json
from components._session import SessionConfig
from components._status import CallStatus
from components._status import SessionStatus
from components._tool_call import CallError
from components._tool_call import ProgressKind
from components._tool_call import ToolCallConfig


@dataclass(slots=True)
class SubmitCall:
    """A new call. ``rejection`` set means it fails at once (bad input, unknown tool); a
    ``config.from_cache`` call completes at once with ``cached_result``."""

    config: ToolCallConfig
    submitted_at: float
    args: object = None
    rejection: CallError | None = None
    cached_result: Json = None


@dataclass(slots=True)
class CancelReply:
    found: bool = False
    took: bool = False
    previous_status: CallStatus | None = None


@dataclass(slots=True)
class CancelCall:
    call_id: CallId
    session_id: SessionId | None
    reason: str
    reply: CancelReply


@dataclass(slots=True)
class CompleteReply:
    found: bool = False
    applied: bool = False
    previous_status: CallStatus | None = None


@dataclass(slots=True)
class CompleteCall:
    """The outside world's result for a deferred call (``error`` set: it failed)."""

    call_id: CallId
    result: Json
    error: CallError | None
    reply: CompleteReply


@dataclass(slots=True)
class SetSessionCap:
    """Let one session run up to ``cap`` calls at once (None: the runtime's default)."""

    session_id: SessionId
    cap: int | None


@dataclass(slots=True)
class OpenSession:
    config: SessionConfig


@dataclass(slots=True)
class CloseSession:
    """The session leaves the world (unloaded from its host); its calls stay until retention."""

    session_id: SessionId


@dataclass(slots=True)
class UpdateSession:
    session_id: SessionId
    status: SessionStatus
    requests: int
    errors: int
    at: float
    """Wall-clock time of the change (it may be applied a while later)."""


@dataclass(slots=True)
class ReportProgress:
    entity: Entity
    kind: ProgressKind
    payload: Json
    at: float


ProgressNote = tuple[ProgressKind, Json, float]
"""One report as a tool made it: kind, payload, wall time."""


@dataclass(slots=True)
class ProgressBatch:
    """A call's reports since the last batch, coalesced by its reporter.

    ``take`` hands over the newest reports (at most ``PROGRESS_PER_TICK``) and
    how many older ones were skipped, and starts the next batch; so a tool
    that reports a million times costs one message per tick, not a million.
    """

    entity: Entity
    take: Callable[[], tuple[Sequence[ProgressNote], int]]


@dataclass(slots=True)
class ReportResult:
    entity: Entity
    result: Json


@dataclass(slots=True)
class ReportFailure:
    entity: Entity
    error: CallError


@dataclass(slots=True)
class StatusQuery:
    """A status read queued from outside the event loop's thread.

    The introspection phase resolves the id; after the tick the kernel calls
    ``answer`` with the entity (None for an unknown id) while the world is
    consistent, and the asking thread wakes.
    """

    call_id: CallId
    answer: Callable[[Entity | None], None]


InboxMessage = (
    SubmitCall
    | CancelCall
    | CompleteCall
    | OpenSession
    | SetSessionCap
    | CloseSession
    | UpdateSession
    | ReportProgress
    | ProgressBatch
    | ReportResult
    | ReportFailure
    | StatusQuery
)
