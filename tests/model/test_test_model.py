"""``TestModel`` (``model = "test"``): every tool called once with arguments that fit its
schema, then every outcome quoted, late ones included; capabilities never called."""

from __future__ import annotations

import datetime
import enum
import json
import uuid
from typing import Annotated
from typing import Any
from typing import Literal

import anyio
import pytest
from pydantic import AnyUrl
from pydantic import BaseModel
from pydantic import Field

from agentos import AgentConfig
from agentos import Host
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import Runtime
from agentos import TestModel
from agentos import ToolFailure
from agentos import YieldOnTimeout
from agentos import tool
from agentos.board import NEW_THREAD_TOOL
from agentos.turns import CAPABILITIES
from agentos.turns import PLACEHOLDER_KEY
from agentos.turns import Message

pytestmark = pytest.mark.anyio


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Place(BaseModel):
    city: str = Field(min_length=12)
    zip_code: int = Field(ge=1000, le=9999)


class Tree(BaseModel):
    label: str
    children: list[Tree] = []


class Everything(BaseModel):
    name: str
    count: int = Field(gt=5, multiple_of=3)
    small: int = Field(le=-10)
    ratio: float = Field(ge=0.5, lt=2)
    narrow: float = Field(gt=0.25, lt=0.5)
    flag: bool
    colour: Colour
    mode: Literal["fast", "slow"]
    tags: list[str] = Field(min_length=2)
    code: Annotated[str, Field(min_length=3, max_length=4, pattern=r"^\w+$")]
    place: Place
    places: list[Place] = Field(min_length=1)
    maybe: Place | None
    either: int | str
    tree: Tree
    when: datetime.date
    at: datetime.datetime
    link: AnyUrl
    key: uuid.UUID
    anything: Any
    optional: str | None = None
    deflt: int = 7


@tool
def everything(args: Everything) -> str:
    """Takes every kind of field."""
    return f"{args.name} x{args.count}"


def _ask(*tools: dict[str, Any]) -> ModelRequest:
    return ModelRequest("test", "", [{"role": "user", "content": "go"}], list(tools))


async def test_the_arguments_it_makes_fit_a_pydantic_tools_schema() -> None:
    reply = await TestModel().complete(_ask({"name": "e", "input_schema": everything.input_schema}))
    (use,) = reply.tool_uses
    everything.validate(use["input"])  # raises if they do not fit
    assert reply.stop_reason == "tool_use"


@pytest.mark.parametrize(
    "schema",
    [
        {},
        {"type": "object", "properties": [], "required": "x"},
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}, "required": ["a"]},
        {"$ref": "#"},  # itself, forever
        {"$ref": "https://example.com/schema"},
        {"type": ["null", "integer"], "minimum": "three", "multipleOf": 0},
        {"type": "array", "minItems": 10**12, "items": True},
        {"type": "string", "minLength": 10**12},
        {"anyOf": "neither"},
        {"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}}, 3]},
        {"type": "number", "minimum": 5, "maximum": 1},
        {
            "type": "object",
            "required": ["a"],
            "properties": {"a": {"$ref": "#/definitions/A"}},
            "definitions": {"A": {"type": "integer", "exclusiveMinimum": True, "minimum": 3}},
        },
    ],
)
async def test_a_schema_it_cannot_read_still_gets_a_call(schema: dict[str, Any]) -> None:
    (use,) = (await TestModel().complete(_ask({"name": "odd", "input_schema": schema}))).tool_uses
    assert isinstance(use["input"], dict)
    json.dumps(use["input"])


async def test_it_waits_for_placeholders_and_quotes_results_errors_and_late_outcomes() -> None:
    tools = [{"name": n, "input_schema": {"type": "object"}} for n in ("a", "b", "c", "d")]
    first = await TestModel().complete(ModelRequest("test", "", [_user("go")], tools))
    ids = [use["id"] for use in first.tool_uses]
    assert [use["name"] for use in first.tool_uses] == ["a", "b", "c", "d"]
    assert len(set(ids)) == 4
    results = [
        _result(ids[0], "plain"),
        _result(ids[1], [{"type": "text", "text": "seen"}, {"type": "image", "source": {}}]),
        _result(ids[2], json.dumps({PLACEHOLDER_KEY: True, "tool_call_id": ids[2]})),
        _result(ids[3], json.dumps({PLACEHOLDER_KEY: True, "tool_call_id": ids[3]})),
    ]
    results[0]["is_error"] = True
    messages: list[Message] = [_user("go"), _assistant_blocks(first.content), _user(results)]

    async def reply() -> str:
        return (await TestModel().complete(ModelRequest("test", "", messages, tools))).text

    assert await reply() == "waiting for: c, d"
    messages += [
        _assistant("waiting for: c, d"),
        _user(f"[tool call {ids[3]} (d) finished: failed] error: d broke"),
    ]
    assert await reply() == "waiting for: c"
    messages += [
        _assistant("waiting for: c"),
        _user(f"[tool call {ids[2]} (c) finished: completed] result: 42"),
    ]
    assert (await reply()).splitlines() == [
        "a: error: plain",
        "b: seen",
        "[image]",
        "c: 42",
        "d: error: d broke",
    ]
    messages += [_assistant("..."), _user("again")]
    again = await TestModel().complete(ModelRequest("test", "", messages, tools))
    assert [use["name"] for use in again.tool_uses] == ["a", "b", "c", "d"]
    assert not set(ids) & {use["id"] for use in again.tool_uses}  # ids stay unique


def _user(content: Any) -> Message:
    return {"role": "user", "content": content}


def _assistant(said: str) -> Message:
    return _assistant_blocks([{"type": "text", "text": said}])


def _assistant_blocks(content: list[dict[str, Any]]) -> Message:
    return {"role": "assistant", "content": content}


def _result(use_id: str, content: object) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": use_id, "content": content}


class Words(BaseModel):
    text: str


class Nothing(BaseModel):
    pass


class Recording(TestModel):
    """A TestModel that keeps the tool names each request offered."""

    def __init__(self) -> None:
        super().__init__(skip=(*CAPABILITIES, NEW_THREAD_TOOL))
        self.offered: list[list[str]] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.offered.append([str(t["name"]) for t in request.tools])
        return await super().complete(request)


def _tools(gate: anyio.Event) -> list[Any]:
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

    return [slow, shout, broken]


QUOTED = ["broken: error: it broke", "shout: EXAMPLE", "slow: slow is done"]


async def test_it_calls_every_tool_once_and_quotes_every_outcome_late_ones_too() -> None:
    gate = anyio.Event()
    model = Recording()
    config = AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=20))
    async with Runtime(_tools(gate)) as runtime, Host(runtime, model) as host:
        session = await host.create_session(config)
        session.post("go")
        with anyio.fail_after(10):
            await session.wait_idle()
        # slow cannot have ended: its placeholder is waited for (the others may be too)
        assert session.replies[-1].startswith("waiting for: ")
        assert "slow" in session.replies[-1]
        gate.set()
        with anyio.fail_after(10):
            await session.wait_settled()
        assert session.replies[-1].splitlines() == QUOTED
        called = [call.tool_name for call in runtime.list_calls(session.session_id)]
        assert sorted(called) == ["broken", "shout", "slow"]  # once each, no capability
        offered = set(CAPABILITIES) - {"message_agent"}  # it has no sub-agents to message
        assert offered <= set(model.offered[0])  # they were offered, and skipped

        session.post("again")  # a new message: a new round
        with anyio.fail_after(10):
            await session.wait_settled()
        assert session.replies[-1].splitlines() == QUOTED
        assert len(runtime.list_calls(session.session_id)) == 6


async def test_on_a_board_it_calls_every_tool_once_and_quotes_every_outcome() -> None:
    gate = anyio.Event()
    gate.set()
    model = Recording()
    async with Runtime(_tools(gate)) as runtime, Host(runtime, model) as host:
        session = await host.create_session(AgentConfig(context_view="board"))
        session.post("go")
        with anyio.fail_after(10):
            await session.wait_settled()
        assert session.replies[-1].splitlines() == QUOTED
        assert len(runtime.list_calls(session.session_id)) == 3
        assert NEW_THREAD_TOOL in model.offered[0]


async def test_with_no_tools_it_says_so() -> None:
    async with Runtime() as runtime, Host(runtime, TestModel(skip=CAPABILITIES)) as host:
        session = await host.create_session()
        session.post("go")
        with anyio.fail_after(10):
            await session.wait_settled()
        assert session.replies[-1] == "this agent has no tools to call"
