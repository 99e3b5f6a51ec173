"""How a call runs is the machine's decision (``options_for``), made with no runtime.

Each expectation is what ``Outbound.submit`` (before issue 48) passed to ``Runtime.submit``
for the same agent and ``tool_use``: the shell now only performs these options.
"""

from __future__ import annotations

import pytest

from agentos import AgentConfig
from agentos import CallOptions
from agentos import Decorate
from agentos import Decorator
from agentos import Disposition
from agentos import ExecutionMode
from agentos import ToolPolicy
from agentos.turns import Block
from agentos.turns import Decorations
from agentos.turns import ToolFacts
from agentos.turns import options_for

BACKGROUND = ToolFacts(takes_expected=lambda name: name == "slow")


def use(name: str, arguments: object) -> Block:
    return {"type": "tool_use", "id": "toolu_1", "name": name, "input": arguments}


def decorated(config: AgentConfig, name: str, arguments: object) -> Decorations:
    return Decorations.of(config.decorators(name), name, arguments)


def test_a_plain_call_runs_with_the_agents_defaults() -> None:
    config = AgentConfig(call_timeout=30, call_overdue_after=5, expected_seconds_cap=600)
    planned = options_for(config, use("weather", {"city": "Oslo"}), Decorations())
    assert (planned.tool_use_id, planned.name) == ("toolu_1", "weather")
    assert planned.arguments == {"city": "Oslo"}
    assert planned.disposition is Disposition.RUN_ASYNC and not planned.estimated
    assert planned.options == CallOptions(
        timeout=30, overdue_after=5, overdue_max=600, disposition="run_async"
    )


def test_the_models_estimate_is_taken_out_and_bounded() -> None:
    config = AgentConfig(call_overdue_after=5, expected_seconds_cap=60, expected_seconds_floor=2)
    planned = options_for(
        config, use("slow", {"n": 1, "expected_seconds": 900}), Decorations(), BACKGROUND
    )
    assert planned.arguments == {"n": 1}
    assert planned.options.overdue_after == 60 and planned.estimated
    tiny = options_for(config, use("slow", {"expected_seconds": 0.001}), Decorations(), BACKGROUND)
    assert tiny.options.overdue_after == 2 and tiny.estimated
    bad = options_for(config, use("slow", {"expected_seconds": "soon"}), Decorations(), BACKGROUND)
    assert bad.arguments == {} and bad.options.overdue_after == 5 and not bad.estimated


def test_a_tool_that_takes_no_estimate_keeps_its_own_field() -> None:
    config = AgentConfig(call_overdue_after=5)
    planned = options_for(config, use("own", {"expected_seconds": 3}), Decorations(), BACKGROUND)
    assert planned.arguments == {"expected_seconds": 3}
    assert planned.options.overdue_after == 5 and not planned.estimated


@pytest.mark.parametrize(
    ("arguments", "given"),
    [([1, 2], "[1, 2]"), ("raw", "raw"), ({1, 2}, repr({1, 2}))],
    ids=["list", "text", "not-json"],
)
def test_input_that_is_not_an_object_goes_to_the_runtime_as_text(
    arguments: object, given: str
) -> None:
    assert options_for(AgentConfig(), use("t", arguments), Decorations()).arguments == given


def test_decorations_shape_the_call_and_are_named_in_its_disposition() -> None:
    rule = Decorate(decorate=[Decorator(retries=2), Decorator(timeout=7), Decorator(label="L")])
    config = AgentConfig(call_timeout=30, policy=ToolPolicy(rules={"t": rule}))
    planned = options_for(config, use("t", {}), decorated(config, "t", {}))
    options = planned.options
    assert (options.timeout, options.attempt_timeout) == (30, 7), "retries wrap the timeout"
    assert (options.retries, options.label) == (2, "L")
    assert options.disposition == "decorated:run_async"
    outer = Decorate(decorate=[Decorator(timeout=7), Decorator(retries=1)])
    config = AgentConfig(call_timeout=30, policy=ToolPolicy(rules={"t": outer}))
    options = options_for(config, use("t", {}), decorated(config, "t", {})).options
    assert (options.timeout, options.attempt_timeout, options.retries) == (7, None, 1)


def test_a_deferred_call_lives_no_longer_than_its_token() -> None:
    config = AgentConfig(policy=ToolPolicy(default=Disposition.DEFER))
    planned = options_for(config, use("t", {}), Decorations(), ToolFacts(token_ttl=60))
    assert planned.disposition is Disposition.DEFER
    assert planned.options.deferred and planned.options.timeout == 60
    assert options_for(config, use("t", {}), Decorations()).options.timeout is None
    longer = config.model_copy(update={"call_timeout": 10})
    assert (
        options_for(longer, use("t", {}), Decorations(), ToolFacts(token_ttl=60)).options.timeout
        == 10
    )


def test_an_isolated_tool_names_its_runner_in_either_mode() -> None:
    policy = ToolPolicy(rules={"iso": Disposition.RUN_ISOLATED})
    for mode in ExecutionMode:
        config = AgentConfig(policy=policy, execution_mode=mode, isolated_runner="ray")
        planned = options_for(config, use("iso", {}), Decorations())
        assert planned.options.runner == "ray", mode
        assert options_for(config, use("plain", {}), Decorations()).options.runner is None
