"""Seed 000's cache decorator, scoped by the agent's parameters (issue 45): the sessions of
one host share a cached result when their agents' parameters are alike, never when they
differ, and nothing is cached while a parameter is secret."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agentos import AgentConfig
from agentos import Decorate
from agentos import Decorator
from agentos import Disposition
from agentos import ManualClock
from agentos import ScriptedProvider
from agentos import ToolPolicy
from agentos import tool
from agentos.testing import last_tool_results
from agentos.testing import text
from agentos.testing import tool_calls
from tests.support.backends import running

pytestmark = pytest.mark.anyio

RAN: list[str] = []


class City(BaseModel):
    city: str


@tool
async def forecast(args: City) -> str:
    RAN.append(args.city)
    return f"sun in {args.city}"


def model() -> ScriptedProvider:
    """Every message asks for Oslo's forecast, then quotes it."""
    return ScriptedProvider(
        (lambda r: not last_tool_results(r), lambda r: tool_calls(("forecast", {"city": "Oslo"}))),
        (lambda r: True, lambda r: text(str(last_tool_results(r)[0]["content"]))),
    )


def agent(**parameters: Any) -> AgentConfig:
    cached = Decorate(decorate=[Decorator(cache=True)], then=Disposition.RUN_SYNC)
    return AgentConfig.model_validate(
        {"parameters": parameters, "policy": ToolPolicy(rules={"forecast": cached})}
    )


async def ask_each(clock: ManualClock, *agents: AgentConfig) -> list[bool]:
    """One session per agent on one host, each asked once, one after another: whether
    each one's call was answered from the cache."""
    RAN.clear()
    served = []
    async with running(model(), forecast, clock=clock) as (runtime, host):
        for config in agents:
            session = await host.create_session(config)
            session.post("weather?")
            with anyio.fail_after(5):
                await session.wait_idle()
            assert session.replies[-1] == "sun in Oslo"
            (call,) = runtime.list_calls(session.session_id)
            served.append(call.from_cache)
    assert len(RAN) == served.count(False), "a cache hit ran nothing"
    return served


async def test_sessions_with_the_same_parameters_share_a_cached_result(
    clock: ManualClock,
) -> None:
    assert await ask_each(clock, agent(tenant="acme"), agent(tenant="acme")) == [False, True]
    assert await ask_each(clock, agent(), agent()) == [False, True]


async def test_sessions_with_different_parameters_never_share_one(clock: ManualClock) -> None:
    served = await ask_each(
        clock, agent(tenant="acme"), agent(tenant="globex"), agent(), agent(tenant="acme", n=1)
    )
    assert served == [False, False, False, False]


async def test_a_call_made_under_a_secret_parameter_is_never_cached(clock: ManualClock) -> None:
    secret = {"value": "s3cr3t", "secret": True}
    served = await ask_each(clock, agent(token=secret), agent(token=secret))
    assert served == [False, False], "not served from the cache, and not kept in it"
    RAN.clear()
    async with running(model(), forecast, clock=clock) as (_, host):
        session = await host.create_session(agent(tenant="acme", token=secret))
        for _ in range(2):
            session.post("weather?")
            with anyio.fail_after(5):
                await session.wait_idle()
    assert RAN == ["Oslo", "Oslo"], "the same session asks twice: it runs twice"


def test_parameters_in_an_agent_file_and_a_secrets_value_is_never_stored(
    tmp_path: Path,
) -> None:
    path = tmp_path / "agent.toml"
    path.write_text(
        'name = "weather"\n'
        "[parameters]\n"
        'region = "eu"\n'
        "days = 3\n"
        'token = { value = "s3cr3t", secret = true }\n'
    )
    config = AgentConfig.from_file(path)
    assert {name: p.value for name, p in config.parameters.items()} == {
        "region": "eu",
        "days": 3,
        "token": "s3cr3t",
    }
    assert config.parameters["token"].secret and config.cache_scope() is None
    stored = config.model_dump(mode="json")
    assert "s3cr3t" not in str(stored) and "s3cr3t" not in repr(config)
    again = AgentConfig.model_validate(stored)
    assert again.parameters["token"].secret and again.cache_scope() is None
    assert again.parameters["region"].value == "eu"


def test_a_parameter_is_a_value_or_a_table_with_one() -> None:
    for bad, says in (
        ({"a": [1, 2]}, "a parameter is a text, a number or true/false"),
        ({"a": {"secret": False}}, "a parameter needs a value"),
        ({"a": {"value": 1, "hidden": True}}, "hidden"),
    ):
        with pytest.raises(ValueError, match=says):
            AgentConfig.model_validate({"parameters": bad})
