"""Reading calls: status, waiting, resolving provider ids, looks, listings and statistics.

Every read applies the inbox first, so it sees every earlier submit and
report; none of them writes the world. Waiters are resources the API
registers directly (``components.Waiters``), released by the introspect phase.
"""

from __future__ import annotations

from types import MappingProxyType

import anyio
import esper

from agentos._errors import UnknownCallError
from agentos._kernel.checks import check_text
from agentos._kernel.parts import RuntimeCore
from agentos._kernel.snapshot import RuntimeStatistics
from components import CallId
from components import CallSnapshot
from components import CallStatus
from components import DeadlineKind
from components import SessionId
from components import ToolCallConfig
from components import ToolCallState
from components import Waiter
from components import finished_snapshot
from components import same_conversation
from components import snapshot_of


class CallReads:
    """The read side of ``Runtime``'s call API."""

    def __init__(self, core: RuntimeCore) -> None:
        self._core = core

    def status(self, call_id: str, *, session_id: str | None = None) -> CallSnapshot:
        self._core.flush_calls()
        return self._core.snapshot(self._core.resolve(call_id, session_id))

    def last_status(self, call_id: str) -> CallStatus | None:
        self._core.check_thread("status_threadsafe")
        entity = self._core.ctx.index.by_id.get(CallId(call_id))
        if entity is None or not self._core.opened or self._core.kernel.closed:
            return None
        self._core.kernel.enter()
        return self._core.snapshot(entity).status

    async def wait(
        self,
        call_id: str,
        timeout: float | None,  # noqa: ASYNC109 - measured on the runtime's clock
        session_id: str | None,
    ) -> CallSnapshot:
        if timeout is not None and not (isinstance(timeout, int | float) and timeout >= 0):
            raise ValueError(f"timeout must be None or >= 0 seconds, got {timeout!r}")
        self._core.flush_calls()
        entity = self._core.resolve(call_id, session_id)
        now = self._core.snapshot(entity)
        if now.is_final:
            return now
        released = anyio.Event()
        seen: list[CallSnapshot] = []

        def release() -> None:
            seen.append(self._core.snapshot(entity))
            released.set()

        deadline = None if timeout is None else self._core.clock.monotonic() + timeout
        waiter = Waiter(entity, deadline, release)
        self._core.ctx.waiters.add(waiter)
        if deadline is not None:
            self._core.kernel.wake()
        try:
            await released.wait()
        finally:
            self._core.ctx.waiters.withdraw(waiter)
        return seen[0]

    def resolve(
        self, call_id: str, *, session_id: str, conversation_id: str | None = None
    ) -> CallId:
        check_text("call_id", call_id)
        check_text("session_id", session_id)
        self._core.flush_calls()
        index = self._core.ctx.index
        if call_id in index.by_id:
            return CallId(call_id)
        best: tuple[bool, float] | None = None
        found: CallId | None = None
        for entity in index.with_provider_id(SessionId(session_id), call_id):
            call = self._core.snapshot(entity)
            if not same_conversation(call.conversation_id, conversation_id):
                continue
            started = call.started_at if call.started_at is not None else call.submitted_at
            rank = (not call.is_final, started)
            if best is None or rank >= best:
                best, found = rank, call.call_id
        if found is None:
            raise UnknownCallError(call_id)
        return found

    def owner(self, call_id: str) -> SessionId:
        self._core.flush_calls()
        return self._core.session_of(self._core.resolve(call_id, None))

    def look(self, call_id: str, observer: str) -> tuple[CallSnapshot, bool]:
        check_text("observer", observer)
        self._core.flush_calls()
        entity = self._core.resolve(call_id, None)
        snapshot = self._core.snapshot(entity)
        looks = self._core.kernel.looks
        seen = looks.get(entity)
        if seen is None:
            seen = looks[entity] = {}
        changed = seen.get(SessionId(observer)) != snapshot.version
        seen[SessionId(observer)] = snapshot.version
        return snapshot, changed

    def list_calls(self, session_id: str, *, include_final: bool = True) -> list[CallSnapshot]:
        check_text("session_id", session_id)
        self._core.flush_calls()
        calls = self._core.ctx.index.by_session.get(SessionId(session_id), {})
        finished = self._core.ctx.finished
        snapshots = []
        for entity in calls.values():
            record = finished.get(entity)
            if record is not None:
                if include_final:
                    snapshots.append(finished_snapshot(record))
                continue
            state = esper.component_for_entity(entity, ToolCallState)
            if include_final or not state.status.is_final:
                config = esper.component_for_entity(entity, ToolCallConfig)
                snapshots.append(snapshot_of(config, state))
        return snapshots

    def statistics(self) -> RuntimeStatistics:
        ctx, kernel, listeners = self._core.ctx, self._core.kernel, self._core.listeners
        counts = ctx.index.status_counts
        return RuntimeStatistics(
            calls_by_status=RuntimeStatistics.freeze(
                {
                    status: counts[status]
                    for status in CallStatus
                    if status is not CallStatus.ORPHANED
                }
            ),
            running=ctx.queues.running_total,
            pending=counts[CallStatus.PENDING],
            ready_sessions=len(ctx.queues.ring),
            nested_admissions=ctx.queues.nested_admissions,
            inbox_length=len(ctx.inbox),
            waiters=ctx.waiters.count(),
            sessions=len(ctx.index.by_session),
            subscribers=listeners.subscriber_count(),
            events_dropped=listeners.events_dropped,
            ticks=ctx.stats.ticks,
            last_tick_us=ctx.stats.last_tick_us,
            max_tick_us=ctx.stats.max_tick_us,
            messages_applied=ctx.stats.messages_applied,
            calls_forgotten=ctx.stats.calls_forgotten,
            hand_offs_here=kernel.hand_offs_here,
            hand_offs_spawned=kernel.hand_offs_spawned,
            peak_running=ctx.queues.peak_running,
            timers_armed=MappingProxyType(self._timers_armed()),
            internal_errors=kernel.internal_errors + listeners.failures + self._core.work.failures,
        )

    def _timers_armed(self) -> dict[str, int]:
        """Deadlines in the heap that still apply to their call (stale ones are skipped), and
        the finished calls retention will forget."""
        armed = dict.fromkeys((kind.value for kind in DeadlineKind), 0)
        if (
            self._core.opened
            and not self._core.kernel.closed
            and esper.current_world != self._core.kernel.world
        ):
            esper.switch_world(self._core.kernel.world)
        armed[DeadlineKind.RETENTION.value] = len(self._core.ctx.finished.queue)
        for _, _, entity, kind in self._core.ctx.deadlines.heap:
            state = esper.try_component(entity, ToolCallState)
            if state is None:  # the call has ended
                continue
            if kind == DeadlineKind.HARD:  # a deferred call's expiry runs while it waits
                config = esper.component_for_entity(entity, ToolCallConfig)
                live = state.status is CallStatus.RUNNING or (
                    config.deferred and state.status is CallStatus.PENDING
                )
            else:  # overdue: it re-arms each interval while the call runs
                live = state.status is CallStatus.RUNNING
            armed[kind] += live
        return armed
