"""How an agent behaves: model, prompt, tools, and what happens to each tool call.

Loaded from JSON or TOML, or built in code. Validation errors name the field.
"""

from __future__ import annotations

import json
import tomllib
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentos._toolbox import CAPABILITIES


class Disposition(StrEnum):
    """What the session does with one tool call."""

    RUN_SYNC = "run_sync"
    """Runs as an entity; the turn waits for it."""
    RUN_ASYNC = "run_async"
    """Runs in the background; the turn may yield before it ends."""
    DEFER = "defer"
    """Stays pending with a continuation token until completed from outside."""


class ExecutionMode(StrEnum):
    SYNCHRONOUS = "synchronous"
    """Every call is run_sync: the plain blocking loop."""
    ASYNCHRONOUS = "asynchronous"


class YieldWhenAllDone(BaseModel):
    """Default: the turn goes on once every call of the batch is final."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["yield_when_all_done"] = "yield_when_all_done"


class YieldOnAnyProgress(BaseModel):
    """Yield a partial user turn as soon as one call of the batch is final."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["yield_on_any_progress"] = "yield_on_any_progress"


class YieldOnTimeout(BaseModel):
    """Yield after ``milliseconds`` even if nothing finished."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["yield_on_timeout"] = "yield_on_timeout"
    milliseconds: int = Field(gt=0, le=3_600_000)


YieldStrategy = Annotated[
    YieldWhenAllDone | YieldOnAnyProgress | YieldOnTimeout, Field(discriminator="kind")
]


class ToolPolicy(BaseModel):
    """The default disposition, and rules by tool name."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    default: Disposition = Disposition.RUN_ASYNC
    rules: dict[str, Disposition] = Field(default_factory=dict)

    def disposition(self, tool_name: str) -> Disposition:
        return self.rules.get(tool_name, self.default)


class AgentConfig(BaseModel):
    """Everything about one agent that is not its history."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "agent"
    model: str = "claude-sonnet-4-5"
    system_prompt: str = "You are a helpful assistant."
    tools: list[str] | None = Field(
        None, description="Names of the runtime's tools it may call (None: all)."
    )
    capabilities: list[str] = Field(default_factory=lambda: list(CAPABILITIES))
    execution_mode: ExecutionMode = ExecutionMode.ASYNCHRONOUS
    policy: ToolPolicy = Field(default_factory=ToolPolicy)
    async_yield_strategy: YieldStrategy = Field(default_factory=YieldWhenAllDone)
    max_running_per_session: int | None = Field(None, gt=0)
    call_timeout: float | None = Field(None, gt=0)
    max_tokens: int = Field(1024, gt=0)
    request_timeout: float = Field(
        600.0, gt=0, description="Longest wait for one model request, retries included."
    )
    max_steps_per_turn: int = Field(
        25, gt=0, description="Model requests one event may lead to before the turn ends."
    )

    @classmethod
    def from_file(cls, path: str | Path) -> AgentConfig:
        """Load from a ``.json`` or ``.toml`` file."""
        path = Path(path)
        text = path.read_text()
        if path.suffix == ".toml":
            return cls.model_validate(tomllib.loads(text))
        return cls.model_validate(json.loads(text))

    def disposition(self, tool_name: str) -> Disposition:
        if self.execution_mode is ExecutionMode.SYNCHRONOUS:
            return Disposition.RUN_SYNC
        return self.policy.disposition(tool_name)
