"""World-wide data the systems share (Bevy would call these resources).

Indexes and dirty sets exist so that a tick's cost follows what changed, not
how many entities the world holds: systems never scan the world.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from enum import StrEnum
from typing import Any

from components._call_events import CallEvent
from components._call_events import CallEventKind
from components._finished import FinishedCalls
from components._ids import CallId
from components._ids import Entity
from components._ids import SessionId
from components._messages import InboxMessage
from components._messages import StatusQuery
from components._messages import UpdateSession
from components._status import CallStatus
from components._tool_call import ToolCallConfig


@dataclass(slots=True)
class CallIndex:
    """Lookups by id and by session, and counts kept as statuses change: of the calls in the
    world and of the finished ones kept (``TickContext.finished``), by entity id."""

    by_id: dict[CallId, Entity] = field(default_factory=dict)
    by_session: dict[SessionId, dict[CallId, Entity]] = field(default_factory=dict)
    by_provider: dict[SessionId, dict[str, Entity | list[Entity]]] = field(default_factory=dict)
    """Per session, provider ids (``toolu_...``), which repeat across turns: every call that
    used one, oldest first; the one call, not a list of one, while an id is used once (most
    are). By session first, so no call keeps a ``(session, id)`` key of its own."""
    status_counts: dict[CallStatus, int] = field(
        default_factory=lambda: dict.fromkeys(CallStatus, 0)
    )

    def add(self, entity: Entity, config: ToolCallConfig) -> None:
        """Index a new call (it starts ``pending``)."""
        self.by_id[config.call_id] = entity
        session_calls = self.by_session.get(config.session_id)
        if session_calls is None:
            session_calls = self.by_session[config.session_id] = {}
        session_calls[config.call_id] = entity
        provider_id = config.provider_call_id
        if provider_id is not None:
            provider_ids = self.by_provider.get(config.session_id)
            if provider_ids is None:
                provider_ids = self.by_provider[config.session_id] = {}
            same_id = provider_ids.get(provider_id)
            if same_id is None:
                provider_ids[provider_id] = entity
            elif isinstance(same_id, list):
                same_id.append(entity)
            else:
                provider_ids[provider_id] = [same_id, entity]
        self.status_counts[CallStatus.PENDING] += 1

    def moved(self, old: CallStatus, new: CallStatus) -> None:
        """Count a call's move from ``old`` to ``new``."""
        counts = self.status_counts
        counts[old] -= 1
        counts[new] += 1

    def remove(
        self,
        entity: Entity,
        call_id: CallId,
        session_id: SessionId,
        provider_call_id: str | None,
        status: CallStatus,
    ) -> None:
        """Drop a call that retention forgets from every lookup and count."""
        self.status_counts[status] -= 1
        del self.by_id[call_id]
        session_calls = self.by_session[session_id]
        del session_calls[call_id]
        if not session_calls:
            del self.by_session[session_id]
        if provider_call_id is not None:
            provider_ids = self.by_provider[session_id]
            same_id = provider_ids[provider_call_id]
            if not isinstance(same_id, list):
                del provider_ids[provider_call_id]
                if not provider_ids:
                    del self.by_provider[session_id]
            else:
                same_id.remove(entity)
                if len(same_id) == 1:
                    provider_ids[provider_call_id] = same_id[0]

    def with_provider_id(self, session_id: SessionId, provider_call_id: str) -> list[Entity]:
        """The calls of ``session_id`` that used ``provider_call_id``, oldest first."""
        provider_ids = self.by_provider.get(session_id)
        same_id = None if provider_ids is None else provider_ids.get(provider_call_id)
        if same_id is None:
            return []
        return same_id if isinstance(same_id, list) else [same_id]


@dataclass(slots=True)
class SessionIndex:
    """Session entities by session id."""

    by_id: dict[SessionId, Entity] = field(default_factory=dict)

    def add(self, session: SessionId, entity: Entity) -> None:
        self.by_id[session] = entity

    def remove(self, session: SessionId) -> Entity | None:
        """Forget the session; returns its entity if it had one."""
        return self.by_id.pop(session, None)


@dataclass(slots=True)
class SchedulerQueues:
    """Pending calls per session, the round-robin ring, and slot accounting.

    ``ring`` holds each session that has pending calls and a free slot exactly
    once; a session at its cap leaves the ring and rejoins when a call ends.
    ``pending`` holds only sessions with a non-empty queue. Cancelled calls
    stay queued until they reach the front (the scheduler skips them).
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

    def enqueue(self, session: SessionId, entity: Entity, cap: int) -> None:
        """Queue a pending call at the back of its session's queue."""
        waiting = self.pending.get(session)
        if waiting is None:
            waiting = self.pending[session] = deque()
        waiting.append(entity)
        self.rejoin(session, cap)

    def next_ready(self) -> SessionId:
        """Take the session at the ring's head (the ring must not be empty)."""
        session = self.ring.popleft()
        self.in_ring.discard(session)
        return session

    def keep_turn(self, session: SessionId) -> None:
        """Put a session just taken back at the ring's head: it goes first next tick."""
        self.ring.appendleft(session)
        self.in_ring.add(session)

    def pop_pending(self, session: SessionId) -> Entity | None:
        """The next queued call of the session (maybe since cancelled), or None."""
        waiting = self.pending.get(session)
        if waiting is None:
            return None
        entity = waiting.popleft()
        if not waiting:
            del self.pending[session]
        return entity

    def take_slot(self, entity: Entity, session: SessionId) -> None:
        """Count ``entity`` as running in ``session``."""
        self.running_total += 1
        if self.running_total > self.peak_running:
            self.peak_running = self.running_total
        self.running_by_session[session] = self.running_by_session.get(session, 0) + 1
        self.slot_holders.add(entity)

    def release_slot(self, entity: Entity, session: SessionId, cap: int) -> None:
        """Free the slot ``entity`` holds (it must hold one); its session may rejoin."""
        self.slot_holders.discard(entity)
        self.running_total -= 1
        left = self.running_by_session[session] - 1
        if left:
            self.running_by_session[session] = left
        else:
            del self.running_by_session[session]
        self.rejoin(session, cap)


class DeadlineKind(StrEnum):
    HARD = "hard"
    OVERDUE = "overdue"
    RETENTION = "retention"


_DEADLINE_KINDS = {kind.value: kind for kind in DeadlineKind}


@dataclass(slots=True)
class Deadlines:
    """A min-heap of ``(when, seq, entity, kind)``; stale entries are skipped when due.

    ``kind`` is the plain text of its ``DeadlineKind``: a tuple of numbers and text is one
    the collector stops tracking. Retention is not here: ``FinishedCalls`` keeps its queue.
    """

    heap: list[tuple[float, int, Entity, str]] = field(default_factory=list)
    seq: int = 0

    def push(self, when: float, entity: Entity, kind: DeadlineKind) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (when, self.seq, entity, kind.value))

    def pop_due(self, now: float) -> tuple[Entity, DeadlineKind] | None:
        """The earliest deadline at or before ``now``, taken off the heap; None if none is due."""
        heap = self.heap
        if heap and heap[0][0] <= now:
            _, _, entity, kind = heapq.heappop(heap)
            return entity, _DEADLINE_KINDS[kind]
        return None

    def next_due(self) -> float | None:
        """When the earliest deadline comes due (stale or not); None if there is none."""
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
    """Waiters by call, and a min-heap of their deadlines.

    A waiter is in ``by_entity`` until it is released or withdrawn; heap
    entries of waiters that left are skipped when they come due.
    """

    by_entity: dict[Entity, list[Waiter]] = field(default_factory=dict)
    deadlines: list[tuple[float, int, Waiter]] = field(default_factory=list)
    seq: int = 0

    def add(self, waiter: Waiter) -> None:
        self.by_entity.setdefault(waiter.entity, []).append(waiter)
        if waiter.deadline is not None:
            self.seq += 1
            heapq.heappush(self.deadlines, (waiter.deadline, self.seq, waiter))

    def withdraw(self, waiter: Waiter) -> None:
        """The waiter stops waiting on its own (cancelled); a released one is left as it is."""
        if waiter.released:
            return
        waiter.released = True
        self._drop(waiter)

    def release_call(self, entity: Entity) -> list[Waiter]:
        """Mark and return the call's waiters: it turned final."""
        released = self.by_entity.pop(entity, None)
        if released is None:
            return []
        for waiter in released:
            waiter.released = True
        return released

    def pop_due(self, now: float) -> Waiter | None:
        """Mark, remove and return a waiter whose deadline passed; None when none is due."""
        due = self.deadlines
        while due and due[0][0] <= now:
            _, _, waiter = heapq.heappop(due)
            if waiter.released:
                continue
            waiter.released = True
            waiter.timed_out = True
            self._drop(waiter)
            return waiter
        return None

    def next_due(self) -> float | None:
        """When the earliest waiter deadline comes due (None if there is none)."""
        return self.deadlines[0][0] if self.deadlines else None

    def count(self) -> int:
        return sum(len(items) for items in self.by_entity.values())

    def _drop(self, waiter: Waiter) -> None:
        siblings = self.by_entity.get(waiter.entity)
        if siblings is not None and waiter in siblings:
            siblings.remove(waiter)
            if not siblings:
                del self.by_entity[waiter.entity]


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
    progress_events_per_tick: int = 10_000
    """``progressed`` events one tick raises over all calls (each call at most
    ``PROGRESS_PER_TICK``); past it, each further call's reports fold into one event."""
    session_caps: dict[SessionId, int] = field(default_factory=dict)
    """Per-session overrides of ``max_running_per_session``."""

    def session_cap(self, session: SessionId) -> int:
        return self.session_caps.get(session, self.max_running_per_session)

    def set_session_cap(self, session: SessionId, cap: int | None) -> None:
        """Give the session a cap of its own (None: back to the default)."""
        if cap is None:
            self.session_caps.pop(session, None)
        else:
            self.session_caps[session] = cap


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
    finished: FinishedCalls = field(default_factory=FinishedCalls)
    """Each call that has ended and that retention has not yet forgotten, by its entity id:
    it left the world at the end of the tick that ended it (``components._finished``)."""
    sessions: SessionIndex = field(default_factory=SessionIndex)
    queues: SchedulerQueues = field(default_factory=SchedulerQueues)
    deadlines: Deadlines = field(default_factory=Deadlines)
    waiters: Waiters = field(default_factory=Waiters)
    effects: Effects = field(default_factory=Effects)
    stats: TickStats = field(default_factory=TickStats)
    inbox: deque[InboxMessage] = field(default_factory=deque)
    quiet: dict[SessionId, UpdateSession] = field(default_factory=dict)
    """Each session's latest status, which no tick acts on: it wakes nobody, and is
    applied after the inbox, once it is empty (so after the session's own opening)."""
    batch: list[InboxMessage] = field(default_factory=list)
    events: list[CallEvent] = field(default_factory=list)
    subscribed: set[SessionId] = field(default_factory=set)
    unheard: dict[SessionId, frozenset[CallEventKind]] = field(default_factory=dict)
    """The kinds of event no listener of a subscribed session wants: none is made."""
    submitted: list[Entity] = field(default_factory=list)
    inputs: dict[Entity, object] = field(default_factory=dict)
    """The validated input (a pydantic model instance) of each call that will run, until its
    work starts and takes it: a call in flight or ended holds only its JSON input."""
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
