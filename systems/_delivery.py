"""Phase 6, deliver: group this tick's call events by owning session.

Events are recorded only for sessions that have a subscriber, so a session
nobody listens to costs nothing here.
"""

from __future__ import annotations

import esper

from components import TickContext


class DeliverySystem(esper.Processor):
    def process(self, ctx: TickContext) -> None:
        deliver = ctx.effects.deliver
        for event in ctx.events:
            batch = deliver.get(event.session_id)
            if batch is None:
                batch = deliver[event.session_id] = []
            batch.append(event)
        ctx.events.clear()
