"""Bad input gets a clear, specific error and leaves every other call untouched."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentos import CallOptions
from agentos import CallStatus
from agentos import ErrorKind
from agentos import ManualClock
from agentos import Runtime
from agentos import ToolContext
from agentos import ToolFailure
from agentos import tool
from agentos.testing import Puppet
from agentos.testing import settle

pytestmark = pytest.mark.anyio


class Point(BaseModel):
    x: int
    y: int = 0


@tool
async def add(args: Point) -> int:
    return args.x + args.y


@tool
async def raises(args: Point) -> int:
    raise ValueError(f"x={args.x} is unlucky")


@tool
def raises_in_thread(args: Point) -> int:
    raise KeyError("missing")


@tool
async def exits(args: Point) -> int:
    raise SystemExit(3)


@tool
async def returns_failure(args: Point) -> ToolFailure:
    return ToolFailure("the service said no")


@tool
async def returns_garbage(args: Point) -> object:
    return {"when": object()}


@tool
async def returns_nan(args: Point) -> float:
    return float("nan")


@tool
async def bad_progress(args: Point, ctx: ToolContext) -> int:
    ctx.progress({"handle": object()})
    return 1


TOOLS = [add, raises, raises_in_thread, exits, returns_failure, returns_garbage]
TOOLS += [returns_nan, bad_progress]


@pytest.mark.parametrize(
    ("tool_name", "tool_input", "kind", "message"),
    [
        ("nope", {"x": 1}, ErrorKind.UNKNOWN_TOOL, "unknown tool 'nope' (known tools: add,"),
        (
            "add",
            '{"x": 1',
            ErrorKind.INVALID_INPUT,
            "must be a JSON object; this is not valid JSON",
        ),
        ("add", "[1, 2]", ErrorKind.INVALID_INPUT, "must be a JSON object, got list"),
        ("add", {}, ErrorKind.INVALID_INPUT, "invalid input for tool 'add': x: Field required"),
        ("add", {"x": "seven"}, ErrorKind.INVALID_INPUT, "x: Input should be a valid integer"),
        ("add", {"x": float("inf")}, ErrorKind.INVALID_INPUT, "tool input is not JSON"),
        ("add", {"x": {1, 2}}, ErrorKind.INVALID_INPUT, "tool input is not JSON"),
        ("raises", {"x": 13}, ErrorKind.TOOL_ERROR, "ValueError: x=13 is unlucky"),
        ("raises_in_thread", {"x": 1}, ErrorKind.TOOL_ERROR, "KeyError: 'missing'"),
        ("exits", {"x": 1}, ErrorKind.TOOL_ERROR, "SystemExit: 3"),
        ("returns_failure", {"x": 1}, ErrorKind.TOOL_ERROR, "the service said no"),
        ("returns_garbage", {"x": 1}, ErrorKind.INVALID_RESULT, "not JSON"),
        ("returns_nan", {"x": 1}, ErrorKind.INVALID_RESULT, "nan is not a JSON number"),
        ("bad_progress", {"x": 1}, ErrorKind.TOOL_ERROR, "progress payload is not JSON"),
    ],
)
async def test_bad_calls_settle_failed_with_a_specific_message(
    clock: ManualClock, tool_name: str, tool_input: Any, kind: ErrorKind, message: str
) -> None:
    puppet = Puppet()
    async with Runtime([*TOOLS, puppet.tool], clock=clock) as runtime:
        bystander = runtime.submit("puppet", {}, session_id="other")
        good = runtime.submit("add", {"x": 2, "y": 3})
        call = runtime.submit(tool_name, tool_input)
        snapshot = await runtime.wait(call)
        assert snapshot.status is CallStatus.FAILED
        assert snapshot.error is not None
        assert snapshot.error.kind is kind
        assert message in snapshot.error.message
        assert (await runtime.wait(good)).result == 5
        await settle(runtime)
        assert runtime.status(bystander).status is CallStatus.RUNNING


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"tool_name": 3}, TypeError, "tool_name must be a str, got int"),
        ({"session_id": ""}, ValueError, "session_id must not be empty"),
        ({"session_id": None}, TypeError, "session_id must be a str, got NoneType"),
        ({"options": CallOptions(timeout=-1)}, ValueError, "timeout must be a positive number of"),
        ({"options": CallOptions(timeout=float("nan"))}, ValueError, "timeout must be a positive"),
        ({"options": CallOptions(timeout="5")}, ValueError, "timeout must be a positive number"),  # type: ignore[arg-type]
        ({"options": CallOptions(overdue_after=0)}, ValueError, "overdue_after must be a positive"),
        ({"options": CallOptions(retries=11)}, ValueError, "retries must be an int from 0 to 10"),
        ({"options": {"timeout": 5}}, TypeError, "options must be a CallOptions, got dict"),
        ({"parent_call_id": 7}, TypeError, "parent_call_id must be a str"),
    ],
)
async def test_wrong_argument_types_raise_at_once(
    clock: ManualClock, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    async with Runtime([add], clock=clock) as runtime:
        arguments: dict[str, Any] = {"tool_name": "add", "tool_input": {"x": 1}, **kwargs}
        with pytest.raises(error, match=message):
            runtime.submit(**arguments)
        assert runtime.statistics().calls_by_status[CallStatus.PENDING] == 0


async def test_api_arguments_are_checked(clock: ManualClock) -> None:
    async with Runtime([add], clock=clock) as runtime:
        call = runtime.submit("add", {"x": 1})
        with pytest.raises(TypeError, match="call_id must be a str"):
            runtime.status(123)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="reason must be a str"):
            runtime.cancel(call, reason=5)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="timeout must be None or >= 0"):
            await runtime.wait(call, timeout=-1)
        assert (await runtime.wait(call)).result == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_running": 0}, "max_running must be a positive int"),
        ({"max_running_per_session": 1.5}, "max_running_per_session must be a positive int"),
        ({"max_threads": True}, "max_threads must be a positive int"),
        ({"retention_seconds": 0}, "retention_seconds must be a positive number"),
        ({"default_timeout": -3}, "default_timeout must be a positive number"),
    ],
)
def test_bad_runtime_settings(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Runtime([], **kwargs)


def test_tools_must_be_tools_with_unique_names() -> None:
    with pytest.raises(TypeError, match="expected a Tool"):
        Runtime([len])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="a tool named 'add' is already registered"):
        Runtime([add, add])
