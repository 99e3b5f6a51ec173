"""How one of the model's calls runs, decided by the machine before the shell submits it.

``options_for`` is pure: from the agent, the ``tool_use`` block, the call's decorations and
two facts the shell knows of its tools (whether the tool takes our ``expected_seconds``,
how long a continuation token lives) it decides the runtime input, the disposition and
every ``CallOptions`` field but the trace parent (the shell's span gives that).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentos._kernel.options import CallOptions
from agentos._model.messages import Block
from agentos._turns.agent_config import AgentConfig
from agentos._turns.capabilities import CAPABILITIES
from agentos._turns.decorations import Decorations
from agentos._turns.expected import estimate
from agentos._turns.expected import take_expected_seconds
from agentos._turns.tool_policy import DECORATED
from agentos._turns.tool_policy import Decorate
from agentos._turns.tool_policy import Disposition
from agentos._turns.tool_policy import ExecutionMode


@dataclass(slots=True)
class PlannedCall:
    """One use the runtime runs, as the machine decided it."""

    tool_use_id: str
    name: str
    arguments: dict[str, Any] | str
    """The input the tool gets: the model's, without our ``expected_seconds``."""
    disposition: Disposition
    options: CallOptions
    decorations: Decorations
    estimated: bool
    """The overdue interval is the model's own estimate, not the agent's default."""


@dataclass(frozen=True, slots=True)
class ToolFacts:
    """What a machine knows of its shell's tools to decide how a call runs."""

    takes_expected: Callable[[str], bool] = lambda name: False
    """Whether the model gives this tool's calls an ``expected_seconds`` of ours."""
    token_ttl: float | None = None
    """How long a deferred call's continuation token lives (None: for ever)."""


NO_FACTS = ToolFacts()


def is_capability(config: AgentConfig, name: str) -> bool:
    """A use the system toolbox answers at once, not a runtime call."""
    return name in config.capabilities and name in CAPABILITIES


_OPTIONS: dict[tuple[object, ...], tuple[AgentConfig, Disposition, CallOptions]] = {}
"""``options_for``'s decisions by agent, tool, the decorations that shape options, token
life and overdue interval: the same options object for calls the same in all of these,
which ``Runtime.submit`` then checks once. The agent is kept beside its decision, so an
id reused by another agent never finds it."""
_OPTIONS_KEPT = 1024


def options_for(
    config: AgentConfig, use: Block, decorations: Decorations, facts: ToolFacts = NO_FACTS
) -> PlannedCall:
    """How ``use`` runs: its timeout (a deferred call's at most its token's life), overdue
    interval (the model's bounded estimate, else the agent's), runner, retries and label."""
    name, original = str(use["name"]), use.get("input", {})
    takes_expected = facts.takes_expected(name)
    arguments, overdue_after = (
        stripped(config, original, config.call_overdue_after)
        if takes_expected
        else (original, config.call_overdue_after)
    )
    shaping = decorations.timeout, decorations.retries, decorations.attempt_timeout
    key = (id(config), name, *shaping, decorations.label, facts.token_ttl, overdue_after)
    decided = _OPTIONS.get(key)
    if decided is None or decided[0] is not config:
        if len(_OPTIONS) >= _OPTIONS_KEPT:
            _OPTIONS.clear()
        decided = _OPTIONS[key] = _decided(config, name, decorations, facts, overdue_after)
    return PlannedCall(
        str(use["id"]),
        name,
        _as_tool_input(arguments),
        decided[1],
        decided[2],
        decorations,
        takes_expected and estimate(original),
    )


def _decided(
    config: AgentConfig,
    name: str,
    decorations: Decorations,
    facts: ToolFacts,
    overdue_after: float | None,
) -> tuple[AgentConfig, Disposition, CallOptions]:
    rule = config.policy.rule(name)  # read once: a call's every option comes from it
    decorated = isinstance(rule, Decorate)
    chosen = rule.then if isinstance(rule, Decorate) else rule
    disposition = (
        Disposition.RUN_SYNC if config.execution_mode is ExecutionMode.SYNCHRONOUS else chosen
    )
    deferred = disposition is Disposition.DEFER
    timeout = decorations.timeout or config.call_timeout
    if deferred and facts.token_ttl is not None:
        timeout = min(timeout or math.inf, facts.token_ttl)
    options = CallOptions(
        timeout=timeout,
        overdue_after=overdue_after,
        overdue_max=config.expected_seconds_cap,  # waiting backs off: 1, 2, 4 ...
        deferred=deferred,
        runner=(  # the policy's word: synchronous mode waits, but still isolates
            config.isolated_runner if chosen is Disposition.RUN_ISOLATED else None
        ),
        retries=decorations.retries,
        attempt_timeout=decorations.attempt_timeout,
        label=decorations.label,
        disposition=(  # what readers see: decorated ones say so
            f"{DECORATED}{disposition.value}" if decorated else disposition.value
        ),
    )
    return config, disposition, options


def stripped(
    config: AgentConfig, arguments: object, default: float | None
) -> tuple[object, float | None]:
    """``arguments`` without the model's ``expected_seconds`` (for a tool that takes it)
    and the overdue interval it asks for, bounded (``default`` when it gives none)."""
    return take_expected_seconds(
        arguments,
        default=default,
        cap=config.expected_seconds_cap,
        floor=config.expected_seconds_floor,
    )


def _as_tool_input(arguments: object) -> dict[str, Any] | str:
    """What the model sent as a call's input, for the runtime to check: an object passes,
    anything else fails the call saying the arguments must be a JSON object."""
    if isinstance(arguments, dict | str):
        return arguments
    try:
        return json.dumps(arguments)
    except (TypeError, ValueError):
        return repr(arguments)
