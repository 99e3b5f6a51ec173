"""What an MCP server may not do to its host (issue 46): each hostile server here is a real
process, ``tests/support/mcp_servers/hostile_server.py``, misbehaving as its environment asks."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from pydantic import BaseModel
from pydantic import model_validator
from structlog.testing import capture_logs

from agentos import CallStatus
from agentos import ErrorKind
from agentos import McpServer
from agentos import Runtime
from agentos import Tool
from agentos import ToolDefinitionError
from agentos import ToolsetError
from agentos import tool
from tests.support.mcp_servers import SERVERS
from tests.toolsets.conftest import WAIT
from tests.toolsets.conftest import outcome

pytestmark = pytest.mark.anyio

HOSTILE = str(SERVERS / "hostile_server.py")


def hostile(name: str = "bad", **env: str) -> McpServer:
    return McpServer.stdio(name, sys.executable, [HOSTILE], env=env)


@asynccontextmanager
async def serving(*servers: McpServer, tools: tuple[Tool[Any], ...] = ()) -> AsyncIterator[Runtime]:
    with anyio.fail_after(WAIT * 2):
        async with Runtime(tools=tools, toolsets=servers) as runtime:
            yield runtime


async def test_a_schema_that_refers_to_itself_leaves_its_tool_out_with_a_warning() -> None:
    server = hostile()
    with capture_logs() as logs:
        async with serving(server) as runtime:
            assert "self_ref" not in runtime.tools
            assert {"echo", "big", "loop_on_a"} <= set(runtime.tools)
            done = await outcome(runtime, runtime.submit("echo", {"text": "still here"}))
            assert done.result == "still here"
    (problem,) = [p for p in server.problems if "self_ref" in p]
    assert problem == (
        "tool self_ref: the input schema cannot be used: its references never end "
        "(a $ref to itself)"
    )
    assert {"event": "mcp.tool_left_out", "problem": problem, "server": "bad"} in [
        {key: line.get(key) for key in ("event", "problem", "server")} for line in logs
    ]


async def test_an_input_whose_check_never_ends_fails_that_call_and_the_rest_go_on() -> None:
    """``loop_on_a``'s schema recurses only for an input with ``a``: that call fails, the
    calls beside it (and after it) complete."""
    async with serving(hostile()) as runtime:
        looping = runtime.submit("loop_on_a", {"a": 1}, session_id="one")
        beside = runtime.submit("echo", {"text": "beside"}, session_id="two")
        failed = await outcome(runtime, looping)
        assert failed.status is CallStatus.FAILED and failed.error is not None
        assert failed.error.kind is ErrorKind.INVALID_INPUT
        assert failed.error.message == (
            "invalid input for tool 'loop_on_a': its schema could not check it: "
            "its references never end (a $ref to itself)"
        )
        assert (await outcome(runtime, beside)).result == "beside"
        fine = await outcome(runtime, runtime.submit("loop_on_a", {}, session_id="one"))
        assert fine.status is CallStatus.COMPLETED


class Odd(BaseModel):
    n: int

    @model_validator(mode="after")
    def broken(self) -> Odd:
        raise TypeError("the check itself broke")


@tool
def odd(args: Odd) -> int:
    return args.n


@tool
def fine() -> str:
    return "fine"


async def test_a_python_tool_whose_input_check_raises_fails_only_its_call() -> None:
    """Any error while checking one call's input fails that call, not the runtime."""
    async with Runtime(tools=[odd, fine]) as runtime:
        failed = await outcome(runtime, runtime.submit("odd", {"n": 1}))
        assert failed.error is not None and failed.error.kind is ErrorKind.INVALID_INPUT
        assert failed.error.message == (
            "the input of tool 'odd' could not be checked: TypeError: the check itself broke"
        )
        assert (await outcome(runtime, runtime.submit("fine"))).result == "fine"


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "description": "x" * 300_000},
        {"type": "object", "properties": {"a": eval("{'x': " * 80 + "1" + "}" * 80)}},
    ],
    ids=["too_large", "too_deep"],
)
def test_a_schema_too_large_or_too_deep_is_refused_naming_the_tool(schema: dict[str, Any]) -> None:
    with pytest.raises(
        ToolDefinitionError, match=r"^tool huge: the input schema is (\S+ characters|nested)"
    ):
        Tool.from_schema(lambda args: None, name="huge", input_schema=schema)


SESSION_NAMES = "cancel_tool_call,get_tool_call_status,list_running_tool_calls,new_thread"


async def test_a_server_cannot_take_a_capabilitys_or_a_python_tools_name() -> None:
    @tool
    def mine() -> str:
        return "the Python tool"

    server = hostile(NAMES=f"{SESSION_NAMES},mine")
    with capture_logs() as logs:
        async with serving(server, tools=(mine,)) as runtime:
            for name in SESSION_NAMES.split(","):
                assert name not in runtime.tools
            assert runtime.tools["mine"].source is None
            done = await outcome(runtime, runtime.submit("mine"))
            assert done.result == "the Python tool"
    left_out = {p.split("'")[1]: p for p in server.problems if "left out" in p}
    assert left_out["cancel_tool_call"] == (
        "tool 'cancel_tool_call': left out, 'cancel_tool_call' is the name of the session's "
        "own cancel_tool_call; give the server a prefix (mcp_servers.bad.prefix) to use it"
    )
    assert "is the name of a Python tool" in left_out["mine"]
    assert set(left_out) >= {*SESSION_NAMES.split(","), "mine"}
    warned = [line["problem"] for line in logs if line["event"] == "mcp.tool_left_out"]
    assert sorted(warned) == sorted(server.problems)
    assert len(left_out) == 5


async def test_two_servers_with_one_tool_name_keep_the_first_and_warn() -> None:
    one, two = hostile("one"), hostile("two")
    async with serving(one, two) as runtime:
        owner = runtime.tools["echo"].source
        assert owner in ("one", "two")
        other = two if owner == "one" else one
        (problem,) = [p for p in other.problems if p.startswith("tool 'echo'")]
        assert problem.endswith(
            f"is the name of server {owner}'s tool; give the server a prefix "
            f"(mcp_servers.{other.name}.prefix) to use it"
        )
        done = await outcome(runtime, runtime.submit("echo", {"text": "once"}))
        assert done.result == "once"


async def test_an_answer_over_the_result_cap_fails_its_call_and_the_others_go_on() -> None:
    """A result line of 1 MB, with results capped at 100,000 characters: that call fails
    naming the size, unread; a call of the same server after it completes."""
    server = hostile()
    with anyio.fail_after(WAIT * 2):
        async with Runtime(toolsets=[server], max_result_chars=100_000) as runtime:
            huge = await outcome(runtime, runtime.submit("big", {"size": 1_000_000}))
            assert huge.status is CallStatus.FAILED and huge.error is not None
            assert huge.error.message == (
                "MCP server 'bad': the server's answer is over 265,536 bytes, "
                "more than agentos reads; it was skipped"
            )
            after = await outcome(runtime, runtime.submit("echo", {"text": "after"}))
            assert after.result == "after"
            fits = await outcome(runtime, runtime.submit("big", {"size": 90_000}))
            assert fits.result == "b" * 90_000


async def test_stderr_without_a_newline_is_kept_as_a_bounded_tail() -> None:
    """A server writes 3 MB to stderr with no newline, then exits: the error quotes the
    start of that line, not all of it (what is kept of a server's stderr is bounded)."""
    with pytest.raises(ToolsetError) as failed:
        async with serving(hostile(YELL_AND_EXIT="3000000")):
            pass
    message = str(failed.value)
    assert message.startswith("mcp_servers.bad: exited (code 3) before answering initialize: yyy")
    assert message.endswith("y...") and len(message) < 5_000


async def test_yelling_on_stderr_while_serving_leaves_the_calls_alone() -> None:
    async with serving(hostile()) as runtime:
        yelled = await outcome(runtime, runtime.submit("yell", {"size": 3_000_000}))
        assert yelled.result == "yelled"
        after = await outcome(runtime, runtime.submit("echo", {"text": "after"}))
        assert after.result == "after"


async def test_the_start_timeout_bounds_reading_a_long_tool_list() -> None:
    """20,000 tools take many seconds to check here; with a start timeout of 1 s the start
    fails at about 1 s, naming the timeout, instead of finishing whenever it finishes."""
    names = ",".join(f"t{index}" for index in range(20_000))
    server = McpServer.stdio(
        "bad", sys.executable, [HOSTILE], env={"NAMES": names}, start_timeout=1
    )
    with pytest.raises(ToolsetError) as failed:
        async with serving(server):
            pass
    assert (
        str(failed.value) == "mcp_servers.bad: did not answer initialize and tools/list within 1 s"
    )


async def test_a_tool_list_over_the_line_cap_fails_the_start_naming_its_size() -> None:
    """A 3 MB tool list (one line): refused unread, in words, with no wait."""
    with pytest.raises(ToolsetError) as failed:
        async with serving(hostile(NAMES="t1,t2,t3", PAD="400000")):
            pass
    assert str(failed.value) == (
        "mcp_servers.bad: the server's answer is over 2,065,536 bytes, more than agentos "
        "reads; it was skipped"
    )


async def test_a_server_whose_resources_cannot_be_listed_starts_with_its_tools() -> None:
    server = hostile(RESOURCES="broken")
    async with serving(server) as runtime:
        assert "echo" in runtime.tools
        assert not [name for name in runtime.tools if "resource" in name]
    assert any("resources/list failed" in problem for problem in server.problems)
