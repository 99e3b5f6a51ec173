"""Phase 5, introspect: release waiters, retire finished calls, answer queued status
queries, count ticks."""

from __future__ import annotations

import esper

from components import TickContext, ToolCallConfig, ToolCallState, finished_call


class IntrospectionSystem(esper.Processor):
    """Waiters are released when their call turns final or their deadline passes.

    A call that turned final this tick leaves the world here, at the tick's end: its
    record (``components._finished``) is kept in ``TickContext.finished`` until retention
    forgets it, so every system before this one saw it as it ended and none later ones
    need to. Queued status queries (asked from threads other than the event loop's)
    are resolved to entities here; the kernel reads the answer after the tick.
    """

    def process(self, ctx: TickContext) -> None:
        waiters = ctx.waiters
        release = ctx.effects.release
        if waiters.by_entity:
            for entity in ctx.finalized:
                release.extend(waiters.release_call(entity))
        finished = ctx.finished
        for entity in ctx.finalized:
            components = esper.try_components(entity, ToolCallConfig, ToolCallState)
            if components is not None:  # else retention 0 forgot it already
                finished[entity] = finished_call(*components)
                esper.delete_entity(entity, immediate=True)
        ctx.finalized.clear()
        while (waiter := waiters.pop_due(ctx.now)) is not None:
            release.append(waiter)
        for query in ctx.queries:
            ctx.effects.answer.append((query, ctx.index.by_id.get(query.call_id)))
        ctx.queries.clear()
        ctx.stats.ticks += 1
