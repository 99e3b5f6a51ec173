"""Read-only views of calls and of the runtime, handed to callers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from types import MappingProxyType

from components import CallId
from components import CallStatus
from components import SessionId
from components import SessionStatus


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
    cost_usd: float | None = None
    """What those tokens cost at the model's prices (None: its prices are not known)."""

    @property
    def tokens(self) -> int:
        """Every token counted: input, output, and prompt-cache reads and writes."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_input_tokens
            + self.cache_creation_input_tokens
        )

    @property
    def cache_hit_ratio(self) -> float | None:
        """The share of prompt tokens read from the cache (None before any prompt)."""
        prompt = self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens
        return self.cache_read_input_tokens / prompt if prompt else None


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
