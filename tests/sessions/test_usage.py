"""Issue 28, part 2: what a session's model requests used and cost, its limits, and what the
store keeps of them across a restart."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentos import AgentConfig
from agentos import Host
from agentos import ModelPrices
from agentos import ModelResponse
from agentos import Runtime
from agentos import ScriptedProvider
from agentos.testing import last_user_text
from tests.support.backends import Backend
from tests.support.backends import running
from tests.support.backends import say

pytestmark = pytest.mark.anyio

USAGE = {
    "input_tokens": 100,
    "output_tokens": 20,
    "cache_read_input_tokens": 300,
    "cache_creation_input_tokens": 50,
}


def metered() -> ScriptedProvider:
    """Every answer says what it heard, and reports ``USAGE``."""
    return ScriptedProvider(
        (
            lambda r: True,
            lambda r: ModelResponse(
                content=[{"type": "text", "text": f"heard {last_user_text(r)}"}], usage=USAGE
            ),
        )
    )


async def test_usage_is_summed_and_priced_with_the_cache_ratio() -> None:
    provider = metered()
    async with running(provider) as (_, host):
        priced = await host.create_session(AgentConfig(model="claude-sonnet-4-5-20250929"))
        unknown = await host.create_session(AgentConfig(model="someone-elses-model"))
        own = ModelPrices(input=1, output=2, cache_write=3, cache_read=4)
        overridden = await host.create_session(AgentConfig(model="claude-opus-4-5", prices=own))
        for session in (priced, unknown, overridden):
            await say(session, "one")
            await say(session, "two")
    spent = priced.statistics()
    assert (spent.requests, spent.input_tokens, spent.output_tokens) == (2, 200, 40)
    assert spent.tokens == 2 * 470
    assert spent.cost_usd == pytest.approx(2 * (100 * 3 + 20 * 15 + 50 * 3.75 + 300 * 0.3) / 1e6)
    assert spent.cache_hit_ratio == pytest.approx(300 / 450)
    assert unknown.statistics().cost_usd is None, "no price known: tokens only"
    assert overridden.statistics().cost_usd == pytest.approx(
        2 * (100 * 1 + 20 * 2 + 50 * 3 + 300 * 4) / 1e6
    )


async def test_a_session_past_its_limit_asks_the_model_nothing_more() -> None:
    provider = metered()
    async with running(provider) as (_, host):
        by_tokens = await host.create_session(AgentConfig(max_tokens_per_session=900))
        by_cost = await host.create_session(AgentConfig(max_cost_per_session=0.0005))
        for session in (by_tokens, by_cost):
            await say(session, "one")  # 470 tokens, about $0.00088: past the cost limit
            await say(session, "two")
            await say(session, "three")
        assert by_tokens.status == "failed", "kept, its turn failed: a higher limit goes on"
    assert by_tokens.replies == ["heard one", "heard two"], "940 tokens after two: no third"
    assert by_tokens.statistics().requests == 2
    (refused,) = by_tokens.errors
    assert refused.kind == "budget" and "max_tokens_per_session is 900" in refused.message
    assert by_cost.replies == ["heard one"]
    assert all(e.kind == "budget" for e in by_cost.errors) and len(by_cost.errors) == 2
    assert "max_cost_per_session is $0.0005" in by_cost.errors[0].message


def test_a_cost_limit_needs_a_price() -> None:
    with pytest.raises(ValidationError, match="max_cost_per_session needs the prices"):
        AgentConfig(model="someone-elses-model", max_cost_per_session=1.0)
    AgentConfig(
        model="someone-elses-model",
        max_cost_per_session=1.0,
        prices=ModelPrices(input=1, output=1, cache_write=1, cache_read=1),
    )


async def test_usage_outlives_a_restart(backend: Backend) -> None:
    """The store keeps each session's requests and token counts with its turns: a resumed
    session goes on counting (and its limit goes on holding) from there."""
    config = AgentConfig(max_tokens_per_session=1000)
    async with (
        await backend.open() as store,
        Runtime([]) as runtime,
        Host(runtime, metered(), store=store) as host,
    ):
        await say(await host.create_session(config, session_id="s"), "one")
        await say(host.get("s"), "two")
    async with await backend.open() as store:
        stored = await store.load_session("s")
        assert stored is not None and stored.usage == {
            "requests": 2,
            **{k: 2 * v for k, v in USAGE.items()},
        }
        assert [s.usage for s in await store.list_sessions()] == [stored.usage]
        async with running(metered(), store=store) as (runtime, host):
            session = await host.resume("s")
            await say(session, "three")
            await say(session, "four")
    spent = session.statistics()
    assert (spent.requests, spent.tokens) == (3, 3 * 470), "the fourth was past the limit"
    assert session.errors[-1].kind == "budget"
