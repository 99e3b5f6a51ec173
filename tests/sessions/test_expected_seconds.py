"""The expected-duration argument (issue 12, "Timers and retries"): the model says how long
a background call should take; past that, and every interval after, it is asked again."""

from __future__ import annotations

import math
import sys
from typing import Any

import anyio
import pytest
from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import ValidationError

from agentos import AgentConfig
from agentos import CallEvent
from agentos import CallEventKind
from agentos import CallId
from agentos import CallSnapshot
from agentos import CallStatus
from agentos import Decorate
from agentos import Decorator
from agentos import Disposition
from agentos import ExecutionMode
from agentos import LocalProcessRunner
from agentos import ManualClock
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import Session
from agentos import Tool
from agentos import ToolPolicy
from agentos import tool
from agentos.testing import Puppet
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.turns import CAPABILITIES
from tests.support.backends import running

pytestmark = pytest.mark.anyio


class StrictInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    city: str


@tool
async def strict(args: StrictInput) -> str:
    """A tool whose input forbids any field it does not name."""
    return f"sunny in {args.city}"


class OwnInput(BaseModel):
    expected_seconds: int


@tool
async def own(args: OwnInput) -> int:
    """A tool with a field of the same name: the field is the tool's."""
    return args.expected_seconds


def properties(request: ModelRequest) -> dict[str, dict[str, Any]]:
    """Each tool's schema properties, by tool name, as the model was shown them."""
    return {
        str(definition["name"]): dict(definition["input_schema"].get("properties", {}))
        for definition in request.tools
    }


async def first_request(config: AgentConfig) -> ModelRequest:
    provider = ScriptedProvider()
    tools = [Puppet("a").tool, Puppet("b").tool, strict, own]
    async with running(provider, *tools) as (runtime, host):
        runtime.add_runner("local", LocalProcessRunner([sys.executable, "-c", "pass"]))
        session = await host.create_session(config, session_id="s")
        session.post("hello")
        with anyio.fail_after(5):
            await session.wait_idle()
    return provider.requests[0]


async def test_a_background_tools_schema_offers_expected_seconds() -> None:
    """run_async (the default), run_isolated and decorate-then-async tools get the argument,
    required (issue 24.10: every call states its estimate); its number must be above zero
    and at most the cap; the tool's own field of that name is left as the tool wrote it;
    capabilities get nothing."""
    config = AgentConfig(
        expected_seconds_cap=120,
        policy=ToolPolicy(
            rules={
                "a": Disposition.RUN_ISOLATED,
                "b": Decorate(decorate=[Decorator(label="b")]),
            }
        ),
    )
    request = await first_request(config)
    shown = properties(request)
    for name in ("a", "b", "strict"):
        argument = shown[name]["expected_seconds"]
        assert (argument["type"], argument["exclusiveMinimum"], argument["maximum"]) == (
            "number",
            0,
            120,
        )
    assert shown["own"]["expected_seconds"]["type"] == "integer"
    offered = [name for name in CAPABILITIES if name != "message_agent"]  # no sub-agents
    assert not any("expected_seconds" in shown[name] for name in offered)
    (strict_definition,) = [d for d in request.tools if d["name"] == "strict"]
    assert strict_definition["input_schema"]["required"] == ["city", "expected_seconds"]
    for name in ("a", "b"):
        (definition,) = [d for d in request.tools if d["name"] == name]
        assert definition["input_schema"]["required"][-1] == "expected_seconds"
    assert strict.input_schema["properties"].keys() == {"city"}, "the tool's schema is not changed"
    assert strict.input_schema["required"] == ["city"]


@pytest.mark.parametrize(
    "config",
    [
        AgentConfig(execution_mode=ExecutionMode.SYNCHRONOUS),
        AgentConfig(policy=ToolPolicy(default=Disposition.RUN_SYNC)),
        AgentConfig(policy=ToolPolicy(default=Disposition.DEFER)),
        AgentConfig(
            policy=ToolPolicy(
                default=Decorate(decorate=[Decorator(label="x")], then=Disposition.RUN_SYNC)
            )
        ),
    ],
    ids=["synchronous", "run_sync", "defer", "decorate-then-sync"],
)
async def test_a_tool_the_turn_waits_for_has_no_expected_seconds(config: AgentConfig) -> None:
    shown = properties(await first_request(config))
    assert not any("expected_seconds" in fields for name, fields in shown.items() if name != "own")


async def one_call(tool_: Tool[Any], arguments: dict[str, Any]) -> tuple[Session, CallSnapshot]:
    """A turn in which the model calls ``tool_`` once with ``arguments``, run to its end."""
    provider = ScriptedProvider(
        (lambda r: "go" in last_user_text(r), lambda r: tool_calls((tool_.name, arguments))),
        (lambda r: bool(last_tool_results(r)), lambda r: text("done")),
    )
    async with running(provider, tool_) as (runtime, host):
        session = await host.create_session(AgentConfig(), session_id="s")
        session.post("go")
        with anyio.fail_after(5):
            await session.wait_idle()
        (call,) = runtime.list_calls("s")
    return session, call


async def test_the_tool_never_sees_expected_seconds_but_the_history_keeps_it() -> None:
    """A tool whose input forbids extra fields completes; the runtime's input is stripped,
    the tool_use in the history is what the model wrote."""
    session, call = await one_call(strict, {"city": "Warsaw", "expected_seconds": 5})
    assert call.status is CallStatus.COMPLETED and call.result == "sunny in Warsaw"
    assert call.tool_input == {"city": "Warsaw"}
    (use,) = [b for b in session.history[1]["content"] if b["type"] == "tool_use"]
    assert use["input"] == {"city": "Warsaw", "expected_seconds": 5}


async def test_a_tools_own_field_of_that_name_reaches_the_tool() -> None:
    _, call = await one_call(own, {"expected_seconds": 7})
    assert (call.status, call.result, call.tool_input) == (
        CallStatus.COMPLETED,
        7,
        {"expected_seconds": 7},
    )


async def requested(provider: ScriptedProvider, runtime: Runtime, count: int) -> None:
    """Until the model has been asked ``count`` times."""
    with anyio.fail_after(5):
        while provider.answered < count:
            await settle(runtime)
    await settle(runtime)


async def the_call(runtime: Runtime, session: Session) -> CallId:
    with anyio.fail_after(5):
        while not runtime.list_calls(session.session_id):
            await settle(runtime)
    await settle(runtime)
    (call,) = runtime.list_calls(session.session_id)
    return call.call_id


async def overdue_at(
    due: float, clock: ManualClock, runtime: Runtime, provider: ScriptedProvider, call: CallId
) -> None:
    """The call is not overdue just before ``due`` seconds, and is at ``due`` (a turn asks)."""
    clock.advance(due - 0.01)
    await settle(runtime)
    assert not runtime.status(call).overdue and provider.answered == 1
    clock.advance(0.01)
    await requested(provider, runtime, 2)
    assert runtime.status(call).overdue


@pytest.mark.parametrize(
    ("given", "default", "cap", "due"),
    [
        (20, None, 3600, 20.0),
        (20, 50, 3600, 20.0),
        (2.5, None, 3600, 2.5),
        (5000, None, 100, 100.0),
        (None, 50, 3600, 50.0),
        ("soon", 50, 3600, 50.0),
        (-1, 50, 3600, 50.0),
        (0, 50, 3600, 50.0),
        (math.nan, 50, 3600, 50.0),
        (True, 50, 3600, 50.0),
        (math.inf, 50, 100, 100.0),
        ("soon", None, 3600, None),
    ],
    ids=[
        "given",
        "given-over-default",
        "fraction",
        "capped",
        "default",
        "text",
        "negative",
        "zero",
        "nan",
        "bool",
        "infinite-capped",
        "bad-no-default",
    ],
)
async def test_expected_seconds_is_the_overdue_interval(
    clock: ManualClock, given: object, default: float | None, cap: float, due: float | None
) -> None:
    """The call is overdue at the model's estimate (clamped to the cap), not before; a bad
    value is ignored for ``call_overdue_after``, and without one the call is never overdue."""
    puppet = Puppet()
    arguments: dict[str, object] = {"label": "slow"}
    if given is not None:
        arguments["expected_seconds"] = given
    provider = ScriptedProvider(
        (lambda r: "slow" in last_user_text(r), lambda r: tool_calls(("puppet", arguments))),
    )
    config = AgentConfig(call_overdue_after=default, expected_seconds_cap=cap)
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(config, session_id="s")
        session.post("slow")
        call = await the_call(runtime, session)
        assert runtime.status(call).tool_input == {"label": "slow"}
        if due is None:
            assert runtime.statistics().timers_armed["overdue"] == 0
            clock.advance(10_000)
            await settle(runtime)
            assert not runtime.status(call).overdue and provider.answered == 1
        else:
            await overdue_at(due, clock, runtime, provider, call)
        runtime.cancel(call)
        await settle(runtime)


async def test_an_overdue_call_left_running_is_asked_about_again_until_cancelled(
    clock: ManualClock,
) -> None:
    """overdue -> a turn -> left running -> re-armed for twice the interval -> overdue again
    -> the model cancels it -> disarmed: no overdue event, no turn after that."""
    puppet = Puppet()
    overdue: list[CallId] = []

    def count(event: CallEvent) -> None:
        if event.kind is CallEventKind.OVERDUE:
            overdue.append(event.call_id)

    def cancel(request: ModelRequest) -> ModelResponse:
        (use,) = request.messages[1]["content"]  # the model's first answer: the puppet call
        return tool_calls(("cancel_tool_call", {"tool_call_id": use["id"]}))

    turns = iter(["leave", "cancel"])
    provider = ScriptedProvider(
        (
            lambda r: "slow" in last_user_text(r),
            lambda r: tool_calls(("puppet", {"label": "slow", "expected_seconds": 20})),
        ),
        (
            lambda r: "is overdue" in last_user_text(r),
            lambda r: text("still waiting") if next(turns) == "leave" else cancel(r),
        ),
        (lambda r: bool(last_tool_results(r)), lambda r: text("cancelled it")),
    )
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        runtime.on_call_events("s", count)
        session = await host.create_session(AgentConfig(), session_id="s")
        session.post("slow")
        call = await the_call(runtime, session)
        clock.advance(20)
        await requested(provider, runtime, 2)
        assert overdue == [call] and provider.requests[1].messages[-1]["role"] == "user"
        assert runtime.status(call).status is CallStatus.RUNNING, "left running"
        assert runtime.statistics().timers_armed["overdue"] == 1, "re-armed"
        clock.advance(39)
        await settle(runtime)
        assert overdue == [call] and provider.answered == 2, "not before twice the interval"
        clock.advance(1)
        await requested(provider, runtime, 4)  # the overdue turn, then the cancel's answer
        with anyio.fail_after(5):
            await session.wait_idle()
        assert overdue == [call, call]
        assert runtime.status(call).status is CallStatus.CANCELLED
        assert runtime.statistics().timers_armed["overdue"] == 0, "disarmed"
        clock.advance(200)
        await settle(runtime)
        assert overdue == [call, call] and provider.answered == 4


def test_the_cap_must_be_above_zero() -> None:
    with pytest.raises(ValidationError, match="expected_seconds_cap"):
        AgentConfig(expected_seconds_cap=0)


@pytest.mark.parametrize(
    ("given", "floor", "due"), [(1e-9, 1.0, 1.0), (0.5, 2.0, 2.0), (3, 2.0, 3.0)]
)
async def test_an_estimate_below_the_floor_counts_as_the_floor(
    clock: ManualClock, given: float, floor: float, due: float
) -> None:
    """A model that says ``expected_seconds: 1e-9`` is not asked about its call nonstop: the
    call is overdue at the floor, and not before."""
    puppet = Puppet()
    provider = ScriptedProvider(
        (
            lambda r: "slow" in last_user_text(r),
            lambda r: tool_calls(("puppet", {"label": "slow", "expected_seconds": given})),
        ),
    )
    config = AgentConfig(expected_seconds_floor=floor)
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(config, session_id="s")
        session.post("slow")
        call = await the_call(runtime, session)
        await overdue_at(due, clock, runtime, provider, call)
        runtime.cancel(call)
        await settle(runtime)


def test_the_floor_must_be_above_zero_and_not_above_the_cap() -> None:
    with pytest.raises(ValidationError, match="expected_seconds_floor"):
        AgentConfig(expected_seconds_floor=0)
    with pytest.raises(ValidationError, match="is above expected_seconds_cap"):
        AgentConfig(expected_seconds_floor=20, expected_seconds_cap=10)
