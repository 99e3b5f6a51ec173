"""The tools a session's model is shown: the sessions of one agent config share one list
while the runtime's tools stay as they are; once a tool is added, every session's next
request shows it (the list is made again), while what an agent's ``tools`` leave out
stays out."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentos import AgentConfig
from agentos import ScriptedProvider
from agentos import tool
from agentos.testing import text
from tests.support.backends import running

pytestmark = pytest.mark.anyio


class Nothing(BaseModel):
    pass


@tool
def first(args: Nothing) -> str:
    """The tool the runtime starts with."""
    return "first"


@tool
def later(args: Nothing) -> str:
    """A tool added while sessions run."""
    return "later"


@tool
def hidden(args: Nothing) -> str:
    """A tool the narrow agent's ``tools`` leave out."""
    return "hidden"


def shown(model: ScriptedProvider) -> list[str]:
    """The tool names the newest request showed the model, capabilities left out."""
    return [t["name"] for t in model.requests[-1].tools if t["name"] in {"first", "later"}]


async def test_a_tool_added_later_reaches_every_sessions_next_request() -> None:
    model = ScriptedProvider((lambda r: True, lambda r: text("ok")))
    config = AgentConfig()
    narrow = AgentConfig(tools=["first"])
    async with running(model, first) as (runtime, host):
        before = await host.create_session(config)
        before.post("hello")
        await before.wait_idle()
        assert shown(model) == ["first"]
        twin = await host.create_session(config)
        twin.post("hello")
        await twin.wait_idle()
        assert model.requests[-1].tools is model.requests[-2].tools, "one list, shared"

        runtime.add_tool(later)
        runtime.add_tool(hidden)
        after = await host.create_session(config)
        after.post("hello")
        await after.wait_idle()
        assert shown(model) == ["first", "later"]
        assert "hidden" in [t["name"] for t in model.requests[-1].tools]
        before.post("and now?")
        await before.wait_idle()
        assert shown(model) == ["first", "later"], "a running session's next request too"

        narrowed = await host.create_session(narrow)
        narrowed.post("hello")
        await narrowed.wait_idle()
        names = [t["name"] for t in model.requests[-1].tools]
        assert "first" in names and "later" not in names and "hidden" not in names
