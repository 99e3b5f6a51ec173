"""Planning a transcript turn's tool calls: what needs no runtime is answered at once (a
tool the agent may not use, a cache hit); the rest goes to the shell to submit."""

from __future__ import annotations

from collections.abc import Callable

from agentos._model.messages import Block
from agentos._model.messages import tool_result
from agentos._turns.agent_config import AgentConfig
from agentos._turns.call_ledger import Batch
from agentos._turns.call_ledger import CallLedger
from agentos._turns.call_options import PlannedCall
from agentos._turns.call_options import ToolFacts
from agentos._turns.call_options import is_capability
from agentos._turns.call_options import options_for
from agentos._turns.decorations import Decorations
from agentos._turns.events import SubmitCalls
from components import Json


def plan(
    config: AgentConfig,
    may_call: Callable[[str], bool],
    ledger: CallLedger,
    batch: Batch,
    facts: ToolFacts,
) -> SubmitCalls:
    """Answer in ``batch.results`` what needs no runtime; return what the shell submits,
    each runtime call with how it runs."""
    to_run: list[Block] = []
    calls: dict[str, PlannedCall] = {}
    served: list[tuple[PlannedCall, Json]] = []
    scope = config.cache_scope()
    for use in batch.uses:
        tool_use_id, name = use["id"], use["name"]
        if is_capability(config, name):
            to_run.append(use)
            continue
        if not may_call(name):
            refusal = f"tool {name!r} is not available to this agent"
            batch.results[tool_use_id] = tool_result(tool_use_id, refusal, error=True)
            continue
        shape = Decorations.of_use(config, use, cache_scope=scope)
        cached = ledger.cached(tool_use_id, name, shape)
        if cached is not None:
            batch.results[tool_use_id], value = cached
            served.append((options_for(config, use, shape, facts), value))
            continue
        to_run.append(use)
        calls[tool_use_id] = options_for(config, use, shape, facts)
    return SubmitCalls(to_run, calls, served)
