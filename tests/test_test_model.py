"""``TestModel`` (``model = "test"``): every tool called once with arguments that fit its
schema, then every outcome quoted, late ones included; capabilities never called."""

from __future__ import annotations

import enum
from typing import Literal

import anyio
import pytest
from pydantic import BaseModel, Field

from agentos import (
    CAPABILITIES,
    AgentConfig,
    Host,
    ModelRequest,
    Runtime,
    TestModel,
    ToolFailure,
    YieldOnTimeout,
    tool,
)

pytestmark = pytest.mark.anyio


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Place(BaseModel):
    city: str = Field(min_length=12)
    zip_code: int = Field(ge=1000, le=9999)


class Everything(BaseModel):
    name: str
    count: int = Field(gt=5, multiple_of=3)
    ratio: float = Field(ge=0.5, lt=2)
    flag: bool
    colour: Colour
    mode: Literal["fast", "slow"]
    tags: list[str] = Field(min_length=2)
    place: Place
    maybe: Place | None
    optional: str | None = None
    deflt: int = 7


@tool
def everything(args: Everything) -> str:
    """Takes every kind of field."""
    return f"{args.name} x{args.count}"


async def test_the_arguments_it_makes_fit_a_pydantic_tools_schema() -> None:
    definition = {"name": "everything", "input_schema": everything.input_schema}
    request = ModelRequest("test", "", [{"role": "user", "content": "go"}], [definition])
    (use,) = (await TestModel().complete(request)).tool_uses
    everything.validate(use["input"])  # raises if they do not fit


class Words(BaseModel):
    text: str


class Nothing(BaseModel):
    pass


async def test_it_calls_every_tool_once_and_quotes_every_outcome_late_ones_too() -> None:
    gate = anyio.Event()

    @tool
    async def slow(args: Nothing) -> str:
        """Waits for the test."""
        await gate.wait()
        return "slow is done"

    @tool
    def shout(args: Words) -> str:
        """Capitals."""
        return args.text.upper()

    @tool
    def broken(args: Nothing) -> ToolFailure:
        """Always fails."""
        return ToolFailure("it broke")

    model = TestModel(skip=CAPABILITIES)
    config = AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=20))
    async with Runtime([slow, shout, broken]) as runtime, Host(runtime, model) as host:
        session = await host.create_session(config)
        session.post("go")
        with anyio.fail_after(10):
            await session.wait_idle()
        assert session.replies[-1] == "waiting for: slow"
        gate.set()
        with anyio.fail_after(10):
            await session.wait_settled()
        assert session.replies[-1].splitlines() == [
            "broken: error: it broke",
            "shout: EXAMPLE",
            "slow: slow is done",
        ]
        called = [call.tool_name for call in runtime.list_calls(session.session_id)]
        assert sorted(called) == ["broken", "shout", "slow"]  # once each, no capability


async def test_with_no_tools_it_says_so() -> None:
    async with Runtime() as runtime, Host(runtime, TestModel(skip=CAPABILITIES)) as host:
        session = await host.create_session()
        session.post("go")
        with anyio.fail_after(10):
            await session.wait_settled()
        assert session.replies[-1] == "this agent has no tools to call"
