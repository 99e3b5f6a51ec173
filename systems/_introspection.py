"""Phase 5, introspect: release waiters, answer queued status queries, count ticks."""

from __future__ import annotations

import heapq

import esper

from components import TickContext, Waiter


class IntrospectionSystem(esper.Processor):
    """Waiters are released when their call turns final or their deadline passes.

    Queued status queries (asked from threads other than the event loop's)
    are resolved to entities here; the kernel reads the answer after the tick.
    """

    def process(self, ctx: TickContext) -> None:
        waiters = ctx.waiters
        for entity in ctx.finalized:
            released = waiters.by_entity.pop(entity, None)
            if released:
                for waiter in released:
                    self._release(ctx, waiter, timed_out=False)
        ctx.finalized.clear()
        due = waiters.deadlines
        while due and due[0][0] <= ctx.now:
            _, _, waiter = heapq.heappop(due)
            if waiter.released:
                continue
            self._release(ctx, waiter, timed_out=True)
            siblings = waiters.by_entity.get(waiter.entity)
            if siblings is not None:
                siblings.remove(waiter)
                if not siblings:
                    del waiters.by_entity[waiter.entity]
        for query in ctx.queries:
            ctx.effects.answer.append((query, ctx.index.by_id.get(query.call_id)))
        ctx.queries.clear()
        ctx.stats.ticks += 1

    @staticmethod
    def _release(ctx: TickContext, waiter: Waiter, *, timed_out: bool) -> None:
        waiter.released = True
        waiter.timed_out = timed_out
        ctx.effects.release.append(waiter)
