"""The status vocabularies: a call's (with its one transition table) and a session's.

Stored statuses are the five a call can hold; ``orphaned`` is only ever
reported (the history mentions a call that the world does not hold).
A session's statuses are its turn machine's (``agentos._turns.transcript_machine``), which owns
their transitions.
"""

from __future__ import annotations

from enum import StrEnum


class CallStatus(StrEnum):
    """Where a tool call is in its life."""

    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    ORPHANED = "orphaned"

    @property
    def is_final(self) -> bool:
        return self in FINAL_STATUSES


STATUS_TEXT: dict[CallStatus, str] = {status: status.value for status in CallStatus}
"""Each status's plain text, as kept and stored (``.value`` is a property: a look-up here
costs a fifth of it, and a call's end reads it twice)."""

STORED_STATUSES: frozenset[CallStatus] = frozenset(
    {
        CallStatus.PENDING,
        CallStatus.RUNNING,
        CallStatus.COMPLETED,
        CallStatus.FAILED,
        CallStatus.CANCELLED,
    }
)
FINAL_STATUSES: frozenset[CallStatus] = frozenset(
    {CallStatus.COMPLETED, CallStatus.FAILED, CallStatus.CANCELLED, CallStatus.ORPHANED}
)

TRANSITIONS: dict[CallStatus, frozenset[CallStatus]] = {
    # pending -> completed is an outside completion of a deferred call.
    CallStatus.PENDING: frozenset(
        {CallStatus.RUNNING, CallStatus.COMPLETED, CallStatus.FAILED, CallStatus.CANCELLED}
    ),
    CallStatus.RUNNING: frozenset({CallStatus.COMPLETED, CallStatus.FAILED, CallStatus.CANCELLED}),
    CallStatus.COMPLETED: frozenset(),
    CallStatus.FAILED: frozenset(),
    CallStatus.CANCELLED: frozenset(),
    CallStatus.ORPHANED: frozenset(),
}
"""Every allowed move. Final statuses are absorbing; nothing moves to ``orphaned``."""


def can_transition(current: CallStatus, new: CallStatus) -> bool:
    """Whether the table allows ``current -> new``."""
    return new in TRANSITIONS[current]


class SessionStatus(StrEnum):
    """What a session is doing: its own status, not its calls'."""

    IDLE = "idle"
    REQUESTING = "requesting"
    """Waiting for the model (or for the calls it just made to be submitted)."""
    WAITING = "waiting"
    """Waiting for its calls, as the disposition and yield strategy say."""
    WAITING_EXTERNAL = "waiting_external"
    """Waiting only for deferred calls: someone outside must complete them."""
    STOPPED = "stopped"
    FAILED = "failed"
    """Ended by a bug in agentos or a provider; ``Session.errors`` says which."""
