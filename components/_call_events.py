"""What one change of one call tells the subscribers of the call's session."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from components._frozen import quick_init
from components._ids import CallId
from components._ids import SessionId
from components._json import Json
from components._snapshot import CallSnapshot
from components._status import CallStatus
from components._tool_call import CallError
from components._tool_call import ToolCallProgress


class CallEventKind(StrEnum):
    """What happened to a call; also the suffix of its ``tool_call.*`` log event."""

    QUEUED = "queued"
    STARTED = "started"
    PROGRESSED = "progressed"
    COMPLETED = "completed"
    FAILED = "failed"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"
    OVERDUE = "overdue"


@dataclass(slots=True, frozen=True)
class OverdueNews:
    """What an ``overdue`` event tells its owner, so the model decides on evidence."""

    ran_seconds: float
    """How long the call has run."""
    next_seconds: float | None
    """Seconds until it is overdue again if it still runs (the interval doubles each time)."""
    progress: Json = None
    """The newest payload the tool gave ``ctx.progress`` (None: none yet)."""
    log: str | None = None
    """The newest log or output line the tool wrote (None: none yet)."""


@quick_init
@dataclass(slots=True, frozen=True)
class CallEvent:
    """One change of one call, as told to the owning session's subscribers."""

    call_id: CallId
    session_id: SessionId
    kind: CallEventKind
    status: CallStatus
    at: float
    progress: ToolCallProgress | None = None
    error: CallError | None = None
    snapshot: CallSnapshot | None = None
    """The call as it ended: set on the event that makes it final, so a listener has the
    outcome without asking the runtime while the kernel is still delivering."""
    folded: int = 0
    """On a ``progressed`` event: the reports just before this one (seqs ``progress.seq -
    folded`` on) that a flood made in the same tick and that no event of their own tells."""
    overdue: OverdueNews | None = None
    """On an ``overdue`` event: how long the call ran, its progress and when it is next due."""
    disposition: str | None = None
    """How its owner runs the call (``CallSnapshot.disposition``)."""
