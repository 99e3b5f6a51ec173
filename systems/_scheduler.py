"""Phase 2, schedule: admit pending calls under the global and per-session caps.

Sessions take turns (round-robin over a ring of sessions that have pending
calls and a free slot), so one busy session cannot starve the others. The cost
is one step per admitted call, however many calls wait.

A nested call whose parent is running is admitted at once, over the caps if
need be: it must never wait for the slot its own parent holds. The parent may
be another session's call (a sub-agent's calls are nested under the call that
runs the sub-agent); such a call passes the global cap only, never its own
session's, so a child in synchronous mode still runs one call at a time. A
nested call still counts as running, so nothing else is admitted from the
queue until the counts are back under the caps.
"""

from __future__ import annotations

import esper

from components import CallStatus
from components import Entity
from components import TickContext
from components import ToolCallConfig
from components import ToolCallState
from systems._calls import call_parts

SKIPS_PER_TICK = 10_000
"""Cancelled queued calls one tick may step over; the rest wait for the next tick."""


class SchedulerSystem(esper.Processor):
    def process(self, ctx: TickContext) -> None:
        queues = ctx.queues
        for entity in ctx.submitted:
            config = esper.component_for_entity(entity, ToolCallConfig)
            session = config.session_id
            if self._nested_may_start(ctx, config):
                queues.nested_admissions += 1
                queues.take_slot(entity, session)
                ctx.admitted.append(entity)
                continue
            queues.enqueue(session, entity, ctx.limits.session_cap(session))
        ctx.submitted.clear()
        if ctx.admit:
            self._admit(ctx)

    @staticmethod
    def _nested_may_start(ctx: TickContext, config: ToolCallConfig) -> bool:
        """Its parent runs, and (if that is another session's call) its own session has a
        free slot."""
        if config.parent_call_id is None:
            return False
        parent = ctx.index.by_id.get(config.parent_call_id)
        if parent is None:
            return False
        running = call_parts(parent)
        if running is None or running[1].status is not CallStatus.RUNNING:
            return False  # (None: it has ended and left the world)
        session = config.session_id
        if running[0].session_id == session:
            return True
        return ctx.queues.running_by_session.get(session, 0) < ctx.limits.session_cap(session)

    @staticmethod
    def _admit(ctx: TickContext) -> None:
        queues = ctx.queues
        max_running = ctx.limits.max_running
        skips = SKIPS_PER_TICK
        while queues.ring and queues.running_total < max_running and skips > 0:
            session = queues.next_ready()
            cap = ctx.limits.session_cap(session)
            if queues.running_by_session.get(session, 0) >= cap:
                continue  # over its cap through nested calls: rejoins when one ends
            entity: Entity | None = None
            while (candidate := queues.pop_pending(session)) is not None:
                # Cancelled while queued (and maybe already forgotten): skip it.
                state = esper.try_component(candidate, ToolCallState)
                if state is not None and state.status is CallStatus.PENDING:
                    entity = candidate
                    break
                skips -= 1
                if not skips:
                    break
            if entity is None:
                if session in queues.pending:  # out of skips: the session keeps its turn
                    queues.keep_turn(session)
                    break
                continue
            queues.take_slot(entity, session)
            ctx.admitted.append(entity)
            queues.rejoin(session, cap)
