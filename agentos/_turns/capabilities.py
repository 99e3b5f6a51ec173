"""What the system toolbox offers the model: capability names, inputs and definitions.

Kept apart from the toolbox, which answers them over a runtime, so that an
agent's configuration can name its capabilities without importing the runtime.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field

MAX_WAIT_SECONDS = 300.0
"""The longest ``get_tool_call_status`` waits; larger ``timeout_seconds`` are clamped."""
MAX_REASON_LENGTH = 1000
MESSAGE_AGENT = "message_agent"
"""The capability only an agent with sub-agents (``agents``) is offered."""


class GetToolCallStatusInput(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    tool_call_id: str = Field(description="The call's id: the tool_use id or the internal id.")
    include_progress: bool = Field(True, description="Include the call's progress reports.")
    wait_for_completion: bool = Field(
        False, description="Wait until the call is final or timeout_seconds pass."
    )
    timeout_seconds: float = Field(
        5.0,
        description=f"How long to wait, 0 to {MAX_WAIT_SECONDS:g} (larger values are clamped).",
    )


class ListRunningToolCallsInput(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class CancelToolCallInput(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    tool_call_id: str = Field(description="The call's id: the tool_use id or the internal id.")
    reason: str = Field(
        "cancelled by the model",
        max_length=MAX_REASON_LENGTH,
        description="Why; recorded on the call.",
    )


class MessageAgentInput(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    tool_call_id: str = Field(
        description="The sub-agent's call: the tool_use id or the internal id."
    )
    text: str = Field(
        min_length=1, max_length=100_000, description="What to tell it, as its user would."
    )


@dataclass(frozen=True, slots=True)
class Capability:
    name: str
    description: str
    input_model: type[BaseModel]

    def definition(self) -> dict[str, Any]:
        """The tool definition a model is given (Anthropic Messages format)."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_model.model_json_schema(),
        }


CAPABILITIES = {
    capability.name: capability
    for capability in (
        Capability(
            "get_tool_call_status",
            "Look at one of your tool calls: status (pending, running, completed, failed, "
            "cancelled, orphaned), progress, result. changed_since_last_look=false means "
            "nothing moved since you last looked: looking again at once gains nothing.",
            GetToolCallStatusInput,
        ),
        Capability(
            "list_running_tool_calls",
            "List your tool calls that have not finished, with their latest progress.",
            ListRunningToolCallsInput,
        ),
        Capability(
            "cancel_tool_call",
            "Cancel one of your tool calls. Says whether it took and what the status was; "
            "a call that already finished is left as it is.",
            CancelToolCallInput,
        ),
        Capability(
            MESSAGE_AGENT,
            "Tell one of your running sub-agents something (a call of an agent tool): it "
            "reads it at its next turn, and its own calls go on.",
            MessageAgentInput,
        ),
    )
}


SESSION_TOOL_NAMES = frozenset({*CAPABILITIES, "new_thread"})
"""The names a session answers itself, its capabilities and the board's ``new_thread``:
no toolset's tool may take one (the model would see the name twice)."""


@functools.cache
def definitions(names: tuple[str, ...]) -> tuple[dict[str, Any], ...]:
    """Built once per set of names: JSON schemas are costly to make for every session."""
    return tuple(CAPABILITIES[name].definition() for name in names)
