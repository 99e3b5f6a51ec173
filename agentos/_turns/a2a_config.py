"""An agent's remote A2A agent, as its agent file describes it: where its agent card is,
what to send with every request, and who answers when it needs input.

Data only: ``agentos._toolsets.a2a`` reads the card and talks to the agent. ``${VAR}`` in
``headers`` and ``token`` is read from the environment when the agent is reached, so a
secret is never part of the configuration a session stores.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import field_validator

from agentos._turns.mcp_config import TOOL_NAME
from agentos._turns.mcp_config import http_url


class A2aAgentConfig(BaseModel):
    """One remote A2A agent, called as one tool whose calls are its tasks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(
        description="Its agent card's URL (an http:// or https:// URL; a URL without a "
        "path means /.well-known/agent-card.json there)."
    )
    headers: dict[str, str] = Field(
        default_factory=dict, description="Sent with every request (${VAR} read)."
    )
    token: str | None = Field(
        None,
        min_length=1,
        description="A bearer token sent as Authorization (${VAR} read, e.g. '${A2A_TOKEN}').",
    )
    tool: str | None = Field(
        None,
        description="The tool's name (None: the entry's name in a2a_agents).",
    )
    description: str | None = Field(
        None,
        description="What the model reads of the tool (None: the card's description and skills).",
    )
    input: Literal["person", "model"] = Field(
        "person",
        description="Who answers when the agent needs input (input-required): 'person' asks "
        "the session's person and sends the answer on the same task; 'model' ends the call "
        "with the question and the task's ids, for the model to answer in a follow-up call.",
    )
    start_timeout: float = Field(
        30.0,
        gt=0,
        le=600,
        description="Longest wait for the agent card, and for the answer to a request that "
        "is not a stream (GetTask).",
    )
    poll_interval: float = Field(
        1.0,
        gt=0,
        le=60,
        description="Seconds between two reads of a task's status when the agent does not stream.",
    )
    answer_timeout: float = Field(
        300.0,
        gt=0,
        le=86400,
        description="Seconds the agent may be silent: with no first answer to a message the "
        "call fails; with no event on a task's stream agentos reads the task (GetTask; the "
        "call fails if that goes unanswered for start_timeout) and subscribes again.",
    )

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        return http_url(url)

    @field_validator("tool")
    @classmethod
    def _tool_name(cls, name: str | None) -> str | None:
        if name is not None and not TOOL_NAME.match(name):
            raise ValueError(f"{name!r}: a tool's name is letters, digits, _ and - (at most 64)")
        return name
