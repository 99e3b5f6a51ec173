"""Phase 5, introspect: release waiters, retire finished calls, answer queued status
queries, count ticks."""

from __future__ import annotations

import esper

from components import TickContext
from components import ToolCallConfig
from components import ToolCallState
from components import finished_call


class IntrospectionSystem(esper.Processor):
    """Waiters are released when their call turns final or their deadline passes.

    A call that turned final this tick leaves the world here, at the tick's end: its
    record (``components._finished``) is kept in ``TickContext.finished`` until retention
    (``Limits.retention_seconds`` from now) forgets it, so every system before this one
    saw it as it ended and none after it needs to. Queued status queries (asked from
    threads other than the event loop's)
    are resolved to entities here; the kernel reads the answer after the tick.
    """

    def process(self, ctx: TickContext) -> None:
        waiters = ctx.waiters
        release = ctx.effects.release
        if waiters.by_entity:
            for entity in ctx.finalized:
                release.extend(waiters.release_call(entity))
        finished = ctx.finished
        retention = ctx.limits.retention_seconds
        due = None if retention is None else ctx.now + retention
        for entity in ctx.finalized:
            config = esper.component_for_entity(entity, ToolCallConfig)
            state = esper.component_for_entity(entity, ToolCallState)
            finished.keep(entity, finished_call(config, state), due)
            esper.delete_entity(entity, immediate=True)
        ctx.finalized.clear()
        while (waiter := waiters.pop_due(ctx.now)) is not None:
            release.append(waiter)
        for query in ctx.queries:
            ctx.effects.answer.append((query, ctx.index.by_id.get(query.call_id)))
        ctx.queries.clear()
        ctx.stats.ticks += 1
