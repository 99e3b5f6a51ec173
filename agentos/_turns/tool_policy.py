"""What happens to each tool call an agent makes: its disposition (run async, run and
wait, defer, refuse), how the turn waits for it, and the decorators around it (timeout,
retries, cache, truncate, label); a ``ToolPolicy`` names them by tool.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated
from typing import Any
from typing import Literal

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import model_validator


class Disposition(StrEnum):
    """What the session does with one tool call."""

    RUN_SYNC = "run_sync"
    """Runs as an entity; the turn waits for it."""
    RUN_ASYNC = "run_async"
    """Runs in the background; the turn may yield before it ends."""
    DEFER = "defer"
    """Stays pending with a continuation token until completed from outside."""
    RUN_ISOLATED = "run_isolated"
    """Delegated to the agent's isolated runner; still an entity with status and cancel."""


DECORATED = "decorated:"
"""How the disposition a decorated call shows begins: ``decorated:run_async`` is a call its
policy decorates (``Decorate``) and then runs ``run_async``."""


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


class Decorator(BaseModel):
    """Exactly one of: ``timeout`` (s), ``retries``, ``cache``, ``truncate`` (UTF-8 bytes),
    ``label``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    timeout: float | None = Field(None, gt=0)
    retries: int | None = Field(None, ge=0, le=10)
    cache: bool | None = None
    truncate: int | None = Field(None, gt=0)
    label: str | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _one_setting(self) -> Decorator:
        chosen = [name for name, value in self if value is not None]
        if len(chosen) != 1:
            raise ValueError(f"a decorator sets exactly one of {list(type(self).model_fields)}")
        return self

    @property
    def setting(self) -> str:
        return next(name for name, value in self if value is not None)


class Decorate(BaseModel):
    """Decorators around another disposition, outermost first.

    ``timeout``, ``retries`` and ``label`` shape the call itself (retries run
    the work again within the same call; ``retries`` outside ``timeout`` bounds
    each attempt, ``timeout`` outside ``retries`` the whole call); ``cache``
    answers a repeated call (same tool, same input) from an earlier completed
    result without running it, as a call of its own marked ``from_cache``;
    ``truncate`` shortens the result the model reads to at most that many bytes.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    decorate: list[Decorator] = Field(min_length=1)
    then: Disposition = Disposition.RUN_ASYNC

    @model_validator(mode="after")
    def _each_once(self) -> Decorate:
        settings = [decorator.setting for decorator in self.decorate]
        if len(settings) != len(set(settings)):
            raise ValueError(f"each decorator may appear once, got {settings}")
        return self

    def option(self, setting: str) -> Any:
        for decorator in self.decorate:
            if decorator.setting == setting:
                return getattr(decorator, setting)
        return None


PolicyRule = Disposition | Decorate
"""What a tool policy says of one tool: a disposition, or decorators around one."""


class ToolPolicy(BaseModel):
    """The default disposition, and rules by tool name."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    default: PolicyRule = Field(
        Disposition.RUN_ASYNC, description="The rule of a tool no rule names."
    )
    rules: dict[str, PolicyRule] = Field(default_factory=dict, description="Rules by tool name.")

    def rule(self, tool_name: str) -> PolicyRule:
        return self.rules.get(tool_name, self.default)

    def disposition(self, tool_name: str) -> Disposition:
        rule = self.rule(tool_name)
        return rule.then if isinstance(rule, Decorate) else rule
