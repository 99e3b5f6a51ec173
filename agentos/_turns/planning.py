"""Planning a transcript turn's tool calls: what needs no runtime is answered at once (a
tool the agent may not use, a cache hit); the rest goes to the shell to submit."""

from __future__ import annotations

from collections.abc import Callable

from agentos._model.messages import Block, tool_result
from agentos._turns.agent_config import AgentConfig
from agentos._turns.call_ledger import Batch, CallLedger
from agentos._turns.capabilities import CAPABILITIES
from agentos._turns.decorations import Decorations
from agentos._turns.events import SubmitCalls
from components import Json


def plan(
    config: AgentConfig, may_call: Callable[[str], bool], ledger: CallLedger, batch: Batch
) -> SubmitCalls:
    """Answer in ``batch.results`` what needs no runtime; return what the shell submits."""
    to_run: list[Block] = []
    decorations: dict[str, Decorations] = {}
    served: list[tuple[Block, Json]] = []
    scope = config.cache_scope()
    for use in batch.uses:
        tool_use_id, name = use["id"], use["name"]
        if name in config.capabilities and name in CAPABILITIES:
            to_run.append(use)
            continue
        if not may_call(name):
            refusal = f"tool {name!r} is not available to this agent"
            batch.results[tool_use_id] = tool_result(tool_use_id, refusal, error=True)
            continue
        shape = Decorations.of(
            config.decorators(name), name, use.get("input", {}), cache_scope=scope
        )
        cached = ledger.cached(tool_use_id, name, shape)
        if cached is not None:
            batch.results[tool_use_id], value = cached
            served.append((use, value))
            continue
        to_run.append(use)
        decorations[tool_use_id] = shape
    return SubmitCalls(to_run, decorations, served)
