"""MCP servers' tools are agentos calls in every way: tested against real servers written
with the ``mcp`` SDK (``tests/support/mcp_servers``), over stdio as a subprocess."""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream
from structlog.testing import capture_logs

from agentos import CallEvent
from agentos import CallOptions
from agentos import CallSnapshot
from agentos import CallStatus
from agentos import ErrorKind
from agentos import McpServer
from agentos import ProgressKind
from agentos import Runtime
from agentos import ToolsetError
from tests.support.asgi import free_port
from tests.support.asgi import served
from tests.support.mcp_servers import SERVERS
from tests.toolsets.conftest import WAIT
from tests.toolsets.conftest import outcome
from tests.toolsets.conftest import serving

pytestmark = pytest.mark.anyio

TOOLS_SERVER = str(SERVERS / "tools_server.py")
SILENT_SERVER = str(SERVERS / "silent_server.py")


def tools_server(
    name: str = "files", *, env: dict[str, str] | None = None, **options: Any
) -> McpServer:
    return McpServer.stdio(name, sys.executable, [TOOLS_SERVER], env=env, **options)


async def wait_progress(
    events: MemoryObjectReceiveStream[CallEvent], runtime: Runtime, call_id: str, count: int
) -> CallSnapshot:
    """Wait until the call has ``count`` progress entries from its tool (not ``started``)."""

    def partial(snapshot: CallSnapshot) -> int:
        return sum(1 for entry in snapshot.progress if entry.kind is ProgressKind.PARTIAL)

    with anyio.fail_after(WAIT):
        while partial(snapshot := runtime.status(call_id)) < count:
            assert not snapshot.status.is_final, snapshot
            await events.receive()
    return snapshot


async def test_the_servers_tools_are_listed_with_its_schemas_and_descriptions() -> None:
    async with serving(tools_server()) as (runtime, _):
        tools = runtime.tools
        assert {"echo", "slow", "boom", "die", "picture", "grow"} <= set(tools)
        echo = tools["echo"]
        assert echo.source == "files" and echo.description == "Say the text back."
        assert echo.input_schema["properties"]["text"]["type"] == "string"
        assert echo.input_schema["required"] == ["text"]


async def test_a_call_returns_the_servers_structured_result() -> None:
    async with serving(tools_server()) as (runtime, _):
        done = await outcome(runtime, runtime.submit("echo", {"text": "hello"}))
        assert (done.status, done.result) == (CallStatus.COMPLETED, {"result": "hello"})


async def test_input_that_does_not_fit_the_servers_schema_fails_before_it_is_sent() -> None:
    async with serving(tools_server()) as (runtime, _):
        done = await outcome(runtime, runtime.submit("echo", {"text": 7}))
        assert done.status is CallStatus.FAILED and done.error is not None
        assert "text: 7 is not of type 'string'" in done.error.message


async def test_progress_notifications_are_the_calls_progress() -> None:
    async with serving(tools_server()) as (runtime, events):
        call_id = runtime.submit("slow", {"steps": 3})
        running = await wait_progress(events, runtime, call_id, 3)
        assert running.status is CallStatus.RUNNING
        payloads = [e.payload for e in running.progress if e.kind is ProgressKind.PARTIAL]
        assert payloads[-1] == {
            "progress": 3.0,
            "total": 3.0,
            "percent": 100.0,
            "text": "step 3 of 3",
        }
        assert [p["percent"] for p in payloads if isinstance(p, dict)] == [33.3, 66.7, 100.0]
        await outcome(runtime, runtime.submit("release"))
        done = await outcome(runtime, call_id)
        assert done.result == {"result": "finished 3 steps"}


async def test_a_cancel_reaches_the_servers_tool_and_the_server_goes_on() -> None:
    async with serving(tools_server()) as (runtime, events):
        call_id = runtime.submit("slow", {"steps": 1})
        await wait_progress(events, runtime, call_id, 1)
        assert runtime.cancel(call_id).cancelled
        assert runtime.status(call_id).status is CallStatus.CANCELLED  # at once
        seen = await outcome(runtime, runtime.submit("cancels_seen", {"at_least": 1}))
        assert seen.result == {"result": 1}
        echoed = await outcome(runtime, runtime.submit("echo", {"text": "still here"}))
        assert echoed.result == {"result": "still here"}


async def test_a_timeout_cancels_the_servers_tool_like_any_other() -> None:
    async with serving(tools_server()) as (runtime, _):
        call_id = runtime.submit("slow", {"steps": 1}, options=CallOptions(timeout=0.2))
        done = await outcome(runtime, call_id)
        assert done.status is CallStatus.FAILED and "timed out" in str(done.error)
        seen = await outcome(runtime, runtime.submit("cancels_seen", {"at_least": 1}))
        assert seen.result == {"result": 1}


async def test_a_tool_error_fails_the_call_with_the_servers_message() -> None:
    async with serving(tools_server()) as (runtime, _):
        done = await outcome(runtime, runtime.submit("boom"))
        assert done.status is CallStatus.FAILED and done.error is not None
        assert done.error.message == "Error executing tool boom: the boom tool always fails"


async def test_images_are_kept_as_typed_blocks() -> None:
    async with serving(tools_server()) as (runtime, _):
        done = await outcome(runtime, runtime.submit("picture"))
        assert isinstance(done.result, dict) and done.result["type"] == "tool_content"
        content = done.result["content"]
        assert isinstance(content, list)
        text, image = content
        assert text == {"type": "text", "text": "a tiny picture"}
        assert isinstance(image, dict) and image["type"] == "image"
        assert image["source"]["media_type"] == "image/png"  # type: ignore[index,call-overload]


async def test_a_server_that_dies_fails_its_running_calls_and_starts_again_when_needed() -> None:
    async with serving(tools_server()) as (runtime, events):
        waiting = runtime.submit("slow", {"steps": 1})
        await wait_progress(events, runtime, waiting, 1)
        died = await outcome(runtime, runtime.submit("die"))
        lost = await outcome(runtime, waiting)
        for done in (died, lost):
            assert done.status is CallStatus.FAILED and done.error is not None
            assert done.error.message == "MCP server 'files' exited (code 3)"
        again = await outcome(runtime, runtime.submit("echo", {"text": "back"}))
        assert again.result == {"result": "back"}


async def test_fifty_concurrent_calls_each_see_their_own_progress() -> None:
    async with serving(tools_server(), max_running_per_session=51) as (runtime, events):
        calls = {runtime.submit("slow", {"steps": 1 + n % 5}): 1 + n % 5 for n in range(50)}
        for call_id, steps in calls.items():
            snapshot = await wait_progress(events, runtime, call_id, steps)
            totals = {
                entry.payload["total"]  # type: ignore[index,call-overload]
                for entry in snapshot.progress
                if entry.kind is ProgressKind.PARTIAL
            }
            assert totals == {float(steps)}
        await outcome(runtime, runtime.submit("release"))
        for call_id, steps in calls.items():
            assert (await outcome(runtime, call_id)).result == {"result": f"finished {steps} steps"}


async def test_a_new_list_is_read_when_the_server_says_it_changed() -> None:
    async with serving(tools_server()) as (runtime, _):
        version = runtime.tools_version
        assert "grown" not in runtime.tools
        await outcome(runtime, runtime.submit("grow"))
        with anyio.fail_after(WAIT):
            await runtime.tools_changed(version)
        assert "grown" in runtime.tools
        done = await outcome(runtime, runtime.submit("grown"))
        assert done.result == {"result": "grown"}


async def test_a_tool_a_new_list_names_as_a_capability_is_left_out_with_a_warning() -> None:
    """Issue 46, point 2, through a list change: the server adds ``cancel_tool_call`` after
    it started; the session keeps answering that name, the server's next tool comes in."""
    server = tools_server()
    with capture_logs() as logs:
        async with serving(server) as (runtime, _):
            await outcome(runtime, runtime.submit("grow_as", {"name": "cancel_tool_call"}))
            version = runtime.tools_version
            await outcome(runtime, runtime.submit("grow"))
            with anyio.fail_after(WAIT):
                while "grown" not in runtime.tools:
                    version = await runtime.tools_changed(version)
            assert "cancel_tool_call" not in runtime.tools
    problem = (
        "tool 'cancel_tool_call': left out, 'cancel_tool_call' is the name of the session's "
        "own cancel_tool_call; give the server a prefix (mcp_servers.files.prefix) to use it"
    )
    assert problem in server.problems
    warned = [line for line in logs if line.get("problem") == problem]
    assert warned and warned[0]["event"] == "mcp.tool_left_out"
    assert warned[0]["log_level"] == "warning"


async def test_a_call_whose_tool_is_removed_while_it_waits_fails_and_the_rest_go_on() -> None:
    """The server drops ``echo`` while a call of it waits for its session's slot: that call
    fails ``unknown_tool`` when its turn comes, and every other call runs as before."""
    async with serving(tools_server(), max_running_per_session=1) as (runtime, _):
        holding = runtime.submit("slow", {"steps": 0}, session_id="held")
        waiting = runtime.submit("echo", {"text": "late"}, session_id="held")
        behind = runtime.submit("echo", {"text": "also late"}, session_id="held")
        version = runtime.tools_version
        await outcome(runtime, runtime.submit("shrink", {"name": "echo"}, session_id="other"))
        with anyio.fail_after(WAIT):
            await runtime.tools_changed(version)
        assert "echo" not in runtime.tools
        assert runtime.status(waiting).status is CallStatus.PENDING
        await outcome(runtime, runtime.submit("release", session_id="other"))
        assert (await outcome(runtime, holding)).result == {"result": "finished 0 steps"}
        for call_id in (waiting, behind):
            lost = await outcome(runtime, call_id)
            assert lost.status is CallStatus.FAILED and lost.error is not None
            assert lost.error.kind is ErrorKind.UNKNOWN_TOOL
            assert lost.error.message == "tool 'echo' was removed before the call could start"
        assert (await outcome(runtime, runtime.submit("grow"))).status is CallStatus.COMPLETED


async def test_an_allow_list_and_a_prefix_choose_and_name_the_tools() -> None:
    server = tools_server(tools=["echo"], prefix="files_")
    async with serving(server) as (runtime, _):
        assert [name for name, t in runtime.tools.items() if t.source == "files"] == ["files_echo"]
        done = await outcome(runtime, runtime.submit("files_echo", {"text": "hi"}))
        assert done.result == {"result": "hi"}


async def test_an_allow_list_naming_a_tool_the_server_lacks_is_an_error() -> None:
    with pytest.raises(ToolsetError, match=r"mcp_servers\.files\.tools: the server has no tool"):
        async with serving(tools_server(tools=["echo", "nope"])):
            pass


async def test_a_tool_with_a_bad_schema_is_left_out_and_the_rest_are_kept() -> None:
    server = tools_server(env={"BAD_SCHEMA": "1"})
    async with serving(server) as (runtime, _):
        assert "bad_schema" not in runtime.tools and "echo" in runtime.tools
        (problem,) = server.problems
        assert problem.startswith("tool bad_schema: the input schema is not a valid JSON schema")


async def test_environment_variables_are_read_when_the_server_starts() -> None:
    server = McpServer.stdio("files", sys.executable, [TOOLS_SERVER], env={"X": "${NOT_SET_X}"})
    with pytest.raises(ToolsetError, match=r"mcp_servers\.files\.env: \$\{NOT_SET_X\} is not set"):
        async with serving(server):
            pass


async def test_a_server_that_never_answers_initialize_fails_the_start_and_is_stopped(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "pid"
    server = McpServer.stdio(
        "silent",
        sys.executable,
        [SILENT_SERVER, str(pid_file)],
        start_timeout=0.5,
    )
    with pytest.raises(ToolsetError) as raised:
        async with serving(server):
            pass
    assert str(raised.value) == (
        "mcp_servers.silent: did not answer initialize and tools/list within 0.5 s"
    )
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


async def test_a_server_that_exits_at_start_says_why() -> None:
    crash = "import sys; sys.stderr.write('no config here\\n'); sys.exit(4)"
    server = McpServer.stdio("broken", sys.executable, ["-c", crash])
    with pytest.raises(ToolsetError) as raised:
        async with serving(server):
            pass
    assert str(raised.value) == (
        "mcp_servers.broken: exited (code 4) before answering initialize: no config here"
    )


async def test_a_command_that_does_not_exist_is_named() -> None:
    with pytest.raises(ToolsetError, match=r"mcp_servers\.gone\.command: cannot start"):
        async with serving(McpServer.stdio("gone", "/no/such/program")):
            pass


async def test_one_failing_server_stops_the_others_it_started_with(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    good = tools_server(env={"PID_FILE": str(pid_file)})
    broken = McpServer.stdio("broken", sys.executable, ["-c", "import sys; sys.exit(1)"])
    with pytest.raises(ToolsetError, match=r"^mcp_servers\.broken: exited \(code 1\)"):
        async with serving(good, broken):
            pass
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


async def test_the_server_is_stopped_with_the_runtime() -> None:
    async with serving(tools_server()) as (runtime, _):
        pid = (await outcome(runtime, runtime.submit("pid"))).result
    assert isinstance(pid, dict) and isinstance(pid["result"], int)
    with pytest.raises(ProcessLookupError):
        os.kill(pid["result"], 0)


# ------------------------------------------------------------------ streamable HTTP


def http_server(port: int) -> AbstractAsyncContextManager[Callable[[], Awaitable[None]]]:
    """The test server's streamable HTTP app on 127.0.0.1:``port`` (``served``)."""
    from tests.support.mcp_servers.tools_server import app

    return served(app.streamable_http_app(), port)


async def test_an_http_servers_tools_are_calls_with_progress_and_cancel() -> None:
    port = free_port()
    async with http_server(port):
        server = McpServer.http("web", f"http://127.0.0.1:{port}/mcp")
        async with serving(server) as (runtime, events):
            assert runtime.tools["echo"].source == "web"
            echoed = await outcome(runtime, runtime.submit("echo", {"text": "over http"}))
            assert echoed.result == {"result": "over http"}
            call_id = runtime.submit("slow", {"steps": 2})
            await wait_progress(events, runtime, call_id, 2)
            assert runtime.cancel(call_id).cancelled
            seen = await outcome(runtime, runtime.submit("cancels_seen", {"at_least": 1}))
            assert seen.result == {"result": 1}


async def test_an_http_server_that_drops_is_reached_again() -> None:
    port = free_port()
    server = McpServer.http("web", f"http://127.0.0.1:{port}/mcp", start_timeout=10)
    async with http_server(port) as stop, serving(server) as (runtime, _):
        first = await outcome(runtime, runtime.submit("echo", {"text": "one"}))
        assert first.result == {"result": "one"}
        await stop()
        down = await outcome(runtime, runtime.submit("echo", {"text": "two"}))
        assert down.status is CallStatus.FAILED and "MCP server 'web'" in str(down.error)
        async with http_server(port):
            again = await outcome(runtime, runtime.submit("echo", {"text": "three"}))
            assert again.result == {"result": "three"}


def test_one_server_object_serves_one_runtime_after_another() -> None:
    """An ``McpServer`` is a description: each runtime (each event loop) starts it anew."""
    server = tools_server()

    async def use() -> object:
        async with serving(server) as (runtime, _):
            return (await outcome(runtime, runtime.submit("echo", {"text": "again"}))).result

    assert [anyio.run(use), anyio.run(use)] == [{"result": "again"}] * 2
