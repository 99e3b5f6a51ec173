"""Phase 5, introspect: release waiters, answer queued status queries, count ticks."""

from __future__ import annotations

import esper

from components import TickContext


class IntrospectionSystem(esper.Processor):
    """Waiters are released when their call turns final or their deadline passes.

    Queued status queries (asked from threads other than the event loop's)
    are resolved to entities here; the kernel reads the answer after the tick.
    """

    def process(self, ctx: TickContext) -> None:
        waiters = ctx.waiters
        release = ctx.effects.release
        if waiters.by_entity:
            for entity in ctx.finalized:
                release.extend(waiters.release_call(entity))
        ctx.finalized.clear()
        while (waiter := waiters.pop_due(ctx.now)) is not None:
            release.append(waiter)
        for query in ctx.queries:
            ctx.effects.answer.append((query, ctx.index.by_id.get(query.call_id)))
        ctx.queries.clear()
        ctx.stats.ticks += 1
