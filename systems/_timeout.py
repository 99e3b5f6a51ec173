"""Phase 4, timeout: hard timeouts, overdue events and retention of finished calls.

Deadlines live in one heap; an entry whose call has since moved on is simply
skipped when it comes due, so nothing has to be removed from the heap early.
A tick handles at most ``Limits.deadlines_per_tick`` of them; the kernel ticks
again at once while any is due, so 100,000 calls forgotten together never
make one long tick.
"""

from __future__ import annotations

import heapq

import esper

from components import (
    CallError,
    CallStatus,
    DeadlineKind,
    Entity,
    ErrorKind,
    TickContext,
    ToolCallConfig,
    ToolCallState,
)
from systems._lifecycle import record_overdue, transition


class TimeoutSystem(esper.Processor):
    def process(self, ctx: TickContext) -> None:
        heap = ctx.deadlines.heap
        now = ctx.now
        budget = ctx.limits.deadlines_per_tick
        while heap and heap[0][0] <= now and budget:
            budget -= 1
            _, _, entity, kind = heapq.heappop(heap)
            components = esper.try_components(entity, ToolCallConfig, ToolCallState)
            if components is None:
                continue
            config, state = components
            if kind is DeadlineKind.HARD:
                self._hard(ctx, entity, config, state)
            elif kind is DeadlineKind.OVERDUE:
                if not state.status.is_final and not state.overdue:
                    state.overdue = True
                    state.version += 1
                    record_overdue(ctx, config, state)
            elif state.status.is_final:
                self._forget(ctx, entity, config)

    @staticmethod
    def _hard(
        ctx: TickContext, entity: Entity, config: ToolCallConfig, state: ToolCallState
    ) -> None:
        if state.status is not CallStatus.RUNNING:
            return
        error = CallError(ErrorKind.TIMED_OUT, f"timed out after {config.timeouts.hard:g}s")
        transition(ctx, entity, config, state, CallStatus.FAILED, error=error, stop_work=True)

    @staticmethod
    def _forget(ctx: TickContext, entity: Entity, config: ToolCallConfig) -> None:
        """Retention ran out: the call leaves the world and every index."""
        index = ctx.index
        state = esper.component_for_entity(entity, ToolCallState)
        index.status_counts[state.status] -= 1
        del index.by_id[config.call_id]
        session_calls = index.by_session[config.session_id]
        del session_calls[config.call_id]
        if not session_calls:
            del index.by_session[config.session_id]
        if config.provider_call_id is not None:
            key = (config.session_id, config.provider_call_id)
            same_id = index.by_provider[key]
            same_id.remove(entity)
            if not same_id:
                del index.by_provider[key]
        esper.delete_entity(entity, immediate=True)
        ctx.effects.forget.append(entity)
        ctx.stats.calls_forgotten += 1
