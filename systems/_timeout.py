"""Phase 4, timeout: hard timeouts, overdue events and retention of finished calls.

An overdue deadline re-arms each time it fires while its call still runs, so the
owner hears again how long the call has taken; with ``TimeoutSettings.overdue_max``
the interval doubles each time (1, 2, 4, 8 ... times the first), so waiting on a
slow call costs a few turns rather than one per interval.

Deadlines live in one heap; an entry whose call has since moved on is simply
skipped when it comes due, so nothing has to be removed from the heap early.
Finished calls are forgotten from their own queue, oldest first
(``FinishedCalls.pop_due``). A tick handles at most ``Limits.deadlines_per_tick`` of
both; the kernel ticks again at once while any is due, so 100,000 calls forgotten
together never make one long tick.
"""

from __future__ import annotations

import esper

from components import CallError
from components import CallStatus
from components import DeadlineKind
from components import Entity
from components import ErrorKind
from components import FinishedCall
from components import TickContext
from components import ToolCallConfig
from components import ToolCallState
from components import finished_id
from components import finished_provider_id
from components import finished_session
from components import finished_status
from systems._calls import call_parts
from systems._lifecycle import record_overdue
from systems._lifecycle import transition


class TimeoutSystem(esper.Processor):
    def process(self, ctx: TickContext) -> None:
        deadlines = ctx.deadlines
        now = ctx.now
        budget = ctx.limits.deadlines_per_tick
        while budget and (due := deadlines.pop_due(now)) is not None:
            budget -= 1
            entity, kind = due
            components = call_parts(entity)
            if components is None:
                continue  # stale: the call has ended
            config, state = components
            if kind is DeadlineKind.HARD:
                self._hard(ctx, entity, config, state)
            else:
                self._overdue(ctx, entity, config, state)
        finished = ctx.finished
        while budget and (forgotten := finished.pop_due(now)) is not None:
            budget -= 1
            self._forget(ctx, *forgotten)

    @staticmethod
    def _hard(
        ctx: TickContext, entity: Entity, config: ToolCallConfig, state: ToolCallState
    ) -> None:
        if config.deferred and state.status is CallStatus.PENDING:
            reason = f"expired: nobody completed it within {config.timeouts.hard:g} s"
        elif state.status is CallStatus.RUNNING:
            reason = f"timed out after {config.timeouts.hard:g} s"
        else:
            return
        error = CallError(ErrorKind.TIMED_OUT, reason)
        transition(ctx, entity, config, state, CallStatus.FAILED, error=error, stop_work=True)

    @staticmethod
    def _overdue(
        ctx: TickContext, entity: Entity, config: ToolCallConfig, state: ToolCallState
    ) -> None:
        """Tell the owner, and re-arm: a call left running is overdue again after the next
        interval (the same, or doubled: ``TimeoutSettings.overdue_interval``). A call that
        waits on a question to a person is not overdue: its deadline is only moved on.

        Only one overdue deadline per call is ever in the heap, so once the
        call ends the pending one is skipped when due and nothing re-arms.
        """
        if state.status is not CallStatus.RUNNING or config.timeouts.overdue is None:
            return
        log = state.log
        if log is not None and log.question is not None:
            # It waits for a person, not for its work: nobody is told; look again later.
            again = config.timeouts.overdue_interval(state.overdue)
            if again is not None:
                ctx.deadlines.push(ctx.now + again, entity, DeadlineKind.OVERDUE)
            return
        if not state.overdue:
            state.version += 1
        state.overdue += 1
        interval = config.timeouts.overdue_interval(state.overdue)
        record_overdue(ctx, config, state, interval)
        if interval is not None:
            ctx.deadlines.push(ctx.now + interval, entity, DeadlineKind.OVERDUE)

    @staticmethod
    def _forget(ctx: TickContext, entity: Entity, record: FinishedCall) -> None:
        """Retention ran out: the finished call's record is gone, now its index entries."""
        ctx.index.remove(
            entity,
            finished_id(record),
            finished_session(record),
            finished_provider_id(record),
            finished_status(record),
        )
        ctx.effects.forget.append(entity)
        ctx.stats.calls_forgotten += 1
