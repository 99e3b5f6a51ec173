"""Read-only views of calls and of the runtime, handed to callers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

from components import (
    CallError,
    CallId,
    CallStatus,
    ConversationId,
    Json,
    JsonObject,
    SessionId,
    SessionStatus,
    ToolCallConfig,
    ToolCallProgress,
    ToolCallState,
    TurnId,
)


class CallSnapshot(NamedTuple):
    """One call as it was at one moment: an immutable copy. Times are epoch seconds.

    ``version`` grows with every visible change (status, progress, overdue);
    compare it with the one you saw last to know whether anything moved.
    (A named tuple rather than a frozen dataclass: it is built on every read,
    and this is three times cheaper to build.)
    """

    call_id: CallId
    session_id: SessionId
    tool_name: str
    tool_input: JsonObject
    status: CallStatus
    provider_call_id: str | None
    conversation_id: ConversationId | None
    turn_id: TurnId | None
    parent_call_id: CallId | None
    submitted_at: float
    started_at: float | None
    completed_at: float | None
    result: Json
    error: CallError | None
    progress: tuple[ToolCallProgress, ...]
    progress_dropped: int
    progress_seq: int
    version: int
    cancel_reason: str | None
    overdue: bool
    label: str | None = None
    deferred: bool = False

    @property
    def is_final(self) -> bool:
        return self.status.is_final


def snapshot_of(config: ToolCallConfig, state: ToolCallState) -> CallSnapshot:
    log = state.progress
    return CallSnapshot(
        config.call_id,
        config.session_id,
        config.tool_name,
        config.tool_input,
        state.status,
        config.provider_call_id,
        config.conversation_id,
        config.turn_id,
        config.parent_call_id,
        state.submitted_at,
        state.started_at,
        state.completed_at,
        state.result,
        state.error,
        () if log is None else tuple(log.entries),
        0 if log is None else log.dropped,
        state.progress_seq,
        state.version,
        state.cancel_reason,
        state.overdue,
        config.label,
        config.deferred,
    )


@dataclass(frozen=True, slots=True)
class CancelOutcome:
    """What a cancel did: ``cancelled`` is False when the call was already final."""

    call_id: CallId
    cancelled: bool
    previous_status: CallStatus


@dataclass(frozen=True, slots=True)
class SessionSnapshot:
    """A session entity as it was at one moment."""

    session_id: SessionId
    agent: str
    model: str
    parent_session_id: SessionId | None
    status: SessionStatus
    requests: int
    errors: int
    opened_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class SessionStatistics:
    """What one session has asked of the model so far: requests made (failed ones too)
    and the token counts of the answers, summed; the cache fields show what the
    prompt cache saved (reads) and cost (writes)."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


@dataclass(frozen=True, slots=True)
class CompleteOutcome:
    """What completing a deferred call did: ``applied`` is False when it was already final."""

    call_id: CallId
    applied: bool
    previous_status: CallStatus


@dataclass(frozen=True, slots=True)
class RuntimeStatistics:
    """Counts and costs of one runtime, read at one moment.

    ``nested_admissions``, ``events_dropped``, ``ticks``, ``messages_applied``,
    ``calls_forgotten``, ``hand_offs_here`` (follow-ups run in the finishing
    call's task) and ``hand_offs_spawned`` (given a task of their own) are
    totals since the runtime started; the rest describe the moment.
    """

    calls_by_status: Mapping[CallStatus, int]
    running: int
    pending: int
    ready_sessions: int
    nested_admissions: int
    inbox_length: int
    waiters: int
    sessions: int
    subscribers: int
    events_dropped: int
    ticks: int
    last_tick_us: float
    max_tick_us: float
    messages_applied: int
    calls_forgotten: int
    hand_offs_here: int
    hand_offs_spawned: int
    peak_running: int = 0
    """The most calls that ever ran at once."""
    timers_armed: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    """Deadlines that still apply, by kind (``hard``, ``overdue``, ``retention``):
    a final call has no hard or overdue timer, a live one no retention timer."""
    internal_errors: int = 0
    """Bugs caught at the boundary since the runtime started: a listener or hand-off
    that raised, a failure of the work group."""

    @staticmethod
    def freeze(counts: Mapping[CallStatus, int]) -> Mapping[CallStatus, int]:
        return MappingProxyType(dict(counts))
