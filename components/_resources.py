"""World-wide data the systems share (Bevy would call these resources).

Indexes and dirty sets exist so that a tick's cost follows what changed, not
how many entities the world holds: systems never scan the world.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from components._ids import CallId, Entity, SessionId
from components._messages import InboxMessage, StatusQuery
from components._status import CallStatus
from components._tool_call import CallError, ToolCallProgress


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
class CallEvent:
    """One change of one call, as told to the owning session's subscribers."""

    call_id: CallId
    session_id: SessionId
    kind: CallEventKind
    status: CallStatus
    at: float
    progress: ToolCallProgress | None = None
    error: CallError | None = None


@dataclass(slots=True)
class CallIndex:
    """Lookups by id and by session, and counts kept as statuses change."""

    by_id: dict[CallId, Entity] = field(default_factory=dict)
    by_session: dict[SessionId, dict[CallId, Entity]] = field(default_factory=dict)
    by_provider: dict[tuple[SessionId, str], list[Entity]] = field(default_factory=dict)
    """Provider ids (``toolu_...``) repeat across turns: every call that used one, oldest first."""
    status_counts: dict[CallStatus, int] = field(
        default_factory=lambda: dict.fromkeys(CallStatus, 0)
    )


@dataclass(slots=True)
class SessionIndex:
    """Session entities by session id."""

    by_id: dict[SessionId, Entity] = field(default_factory=dict)


@dataclass(slots=True)
class SchedulerQueues:
    """Pending calls per session, the round-robin ring, and slot accounting.

    ``ring`` holds each session that has pending calls and a free slot exactly
    once; a session at its cap leaves the ring and rejoins when a call ends.
    """

    pending: dict[SessionId, deque[Entity]] = field(default_factory=dict)
    ring: deque[SessionId] = field(default_factory=deque)
    in_ring: set[SessionId] = field(default_factory=set)
    running_total: int = 0
    running_by_session: dict[SessionId, int] = field(default_factory=dict)
    slot_holders: set[Entity] = field(default_factory=set)
    nested_admissions: int = 0
    """Calls admitted at once on a running parent's behalf, since the runtime started."""
    peak_running: int = 0
    """The highest ``running_total`` so far."""

    def rejoin(self, session: SessionId, cap: int) -> None:
        """Put the session at the ring's tail if it has pending calls and a free slot."""
        if (
            session in self.pending
            and session not in self.in_ring
            and self.running_by_session.get(session, 0) < cap
        ):
            self.ring.append(session)
            self.in_ring.add(session)


class DeadlineKind(StrEnum):
    HARD = "hard"
    OVERDUE = "overdue"
    RETENTION = "retention"


@dataclass(slots=True)
class Deadlines:
    """A min-heap of ``(when, seq, entity, kind)``; stale entries are skipped when due."""

    heap: list[tuple[float, int, Entity, DeadlineKind]] = field(default_factory=list)
    seq: int = 0

    def push(self, when: float, entity: Entity, kind: DeadlineKind) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (when, self.seq, entity, kind))

    def next_due(self) -> float | None:
        return self.heap[0][0] if self.heap else None


@dataclass(slots=True)
class Waiter:
    """Someone awaiting a call's final state, until ``deadline`` (monotonic)."""

    entity: Entity
    deadline: float | None
    notify: Callable[[], None]
    released: bool = False
    timed_out: bool = False


@dataclass(slots=True)
class Waiters:
    by_entity: dict[Entity, list[Waiter]] = field(default_factory=dict)
    deadlines: list[tuple[float, int, Waiter]] = field(default_factory=list)
    seq: int = 0


@dataclass(slots=True)
class Effects:
    """What a tick decided and the async shell performs right after it."""

    start: list[Entity] = field(default_factory=list)
    cancel: list[Entity] = field(default_factory=list)
    forget: list[Entity] = field(default_factory=list)
    release: list[Waiter] = field(default_factory=list)
    answer: list[tuple[StatusQuery, Entity | None]] = field(default_factory=list)
    deliver: dict[SessionId, list[CallEvent]] = field(default_factory=dict)

    def clear(self) -> None:
        self.start.clear()
        self.cancel.clear()
        self.forget.clear()
        self.release.clear()
        self.answer.clear()
        self.deliver.clear()


@dataclass(slots=True)
class Limits:
    max_running: int
    max_running_per_session: int
    retention_seconds: float | None
    messages_per_tick: int = 1_000
    """Inbox messages one tick applies; the rest wait for the next tick, so a burst
    of submits or reports is spread over ticks and other work moves in between."""
    deadlines_per_tick: int = 1_000
    """Due deadlines one tick handles (timeouts, overdue, retention); the rest next tick."""
    session_caps: dict[SessionId, int] = field(default_factory=dict)
    """Per-session overrides of ``max_running_per_session``."""

    def session_cap(self, session: SessionId) -> int:
        return self.session_caps.get(session, self.max_running_per_session)


@dataclass(slots=True)
class TickStats:
    ticks: int = 0
    last_tick_us: float = 0.0
    max_tick_us: float = 0.0
    messages_applied: int = 0
    calls_forgotten: int = 0


@dataclass(slots=True)
class TickContext:
    """Everything a system may read or write during one tick.

    ``now`` is monotonic seconds (deadlines), ``wall`` is epoch seconds
    (timestamps); both are read once per tick from the runtime's clock.
    ``log_info``/``log_debug`` say whether ``tool_call.*`` log lines would be
    kept, so their arguments are not built for nothing.
    """

    limits: Limits
    index: CallIndex = field(default_factory=CallIndex)
    sessions: SessionIndex = field(default_factory=SessionIndex)
    queues: SchedulerQueues = field(default_factory=SchedulerQueues)
    deadlines: Deadlines = field(default_factory=Deadlines)
    waiters: Waiters = field(default_factory=Waiters)
    effects: Effects = field(default_factory=Effects)
    stats: TickStats = field(default_factory=TickStats)
    inbox: deque[InboxMessage] = field(default_factory=deque)
    batch: list[InboxMessage] = field(default_factory=list)
    events: list[CallEvent] = field(default_factory=list)
    subscribed: set[SessionId] = field(default_factory=set)
    submitted: list[Entity] = field(default_factory=list)
    admitted: list[Entity] = field(default_factory=list)
    finalized: list[Entity] = field(default_factory=list)
    queries: list[StatusQuery] = field(default_factory=list)
    now: float = 0.0
    wall: float = 0.0
    admit: bool = True
    """False in ticks run for a cancel or a completion: the slots they free are
    filled by the driver's next tick, so cancelling 100,000 queued calls does
    not start (and cancel) each of them on the way."""
    log_info: bool = False
    log_debug: bool = False
    log: Any = None
    """Where ``tool_call.*`` lines go (set by the kernel; see ``agentos._log``)."""
