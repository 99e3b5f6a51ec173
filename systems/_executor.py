"""Phase 3, execute: start admitted calls.

The system moves each admitted call to ``running``, arms its deadlines and
asks the kernel to start the work. Interrupting work is asked for by the
lifecycle transition whenever the runtime (not the work) ends a running call.
"""

from __future__ import annotations

import esper

from components import CallStatus
from components import DeadlineKind
from components import TickContext
from components import ToolCallConfig
from components import ToolCallState
from systems._lifecycle import transition


class ExecutorSystem(esper.Processor):
    def process(self, ctx: TickContext) -> None:
        for entity in ctx.admitted:
            config = esper.component_for_entity(entity, ToolCallConfig)
            state = esper.component_for_entity(entity, ToolCallState)
            if not transition(ctx, entity, config, state, CallStatus.RUNNING):
                continue
            timeouts = config.timeouts
            if timeouts.hard is not None:
                ctx.deadlines.push(ctx.now + timeouts.hard, entity, DeadlineKind.HARD)
            if timeouts.overdue is not None:
                ctx.deadlines.push(ctx.now + timeouts.overdue, entity, DeadlineKind.OVERDUE)
            ctx.effects.start.append(entity)
        ctx.admitted.clear()
