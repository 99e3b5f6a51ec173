"""Phase 2, schedule: admit pending calls under the global and per-session caps.

Sessions take turns (round-robin over a ring of sessions that have pending
calls and a free slot), so one busy session cannot starve the others. The cost
is one step per admitted call, however many calls wait.
"""

from __future__ import annotations

from collections import deque

import esper

from components import CallStatus, Entity, TickContext, ToolCallConfig, ToolCallState


class SchedulerSystem(esper.Processor):
    def process(self, ctx: TickContext) -> None:
        queues = ctx.queues
        per_session = ctx.limits.max_running_per_session
        for entity in ctx.submitted:
            config = esper.component_for_entity(entity, ToolCallConfig)
            if self._runs_on_parent_slot(ctx, config):
                queues.borrowed += 1
                ctx.admitted.append(entity)
                continue
            session = config.session_id
            waiting = queues.pending.get(session)
            if waiting is None:
                waiting = queues.pending[session] = deque()
            waiting.append(entity)
            if (
                session not in queues.in_ring
                and queues.running_by_session.get(session, 0) < per_session
            ):
                queues.ring.append(session)
                queues.in_ring.add(session)
        ctx.submitted.clear()
        self._admit(ctx)

    @staticmethod
    def _runs_on_parent_slot(ctx: TickContext, config: ToolCallConfig) -> bool:
        """A nested call never waits for a slot its own running parent holds."""
        if config.parent_call_id is None:
            return False
        parent = ctx.index.by_id.get(config.parent_call_id)
        if parent is None:
            return False
        parent_state = esper.component_for_entity(parent, ToolCallState)
        return parent_state.status is CallStatus.RUNNING

    @staticmethod
    def _admit(ctx: TickContext) -> None:
        queues = ctx.queues
        per_session = ctx.limits.max_running_per_session
        max_running = ctx.limits.max_running
        while queues.ring and queues.running_total < max_running:
            session = queues.ring.popleft()
            queues.in_ring.discard(session)
            waiting = queues.pending[session]
            entity: Entity | None = None
            while waiting:
                candidate = waiting.popleft()
                state = esper.component_for_entity(candidate, ToolCallState)
                if state.status is CallStatus.PENDING:
                    entity = candidate
                    break
            if entity is None:
                del queues.pending[session]
                continue
            queues.running_total += 1
            running = queues.running_by_session.get(session, 0) + 1
            queues.running_by_session[session] = running
            queues.slot_holders.add(entity)
            ctx.admitted.append(entity)
            if not waiting:
                del queues.pending[session]
            elif running < per_session:
                queues.ring.append(session)
                queues.in_ring.add(session)
