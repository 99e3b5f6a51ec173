"""An agent's MCP servers and import paths, through sessions: which tools a session's model
sees and may call, an MCP call looked at with ``get_tool_call_status``, an image the
model reads as an image, and the errors for what an agent names that nobody gives."""

from __future__ import annotations

import anyio
import pytest

from agentos import AgentConfig
from agentos import Host
from agentos import ModelRequest
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import ToolImportError
from agentos import UsageError
from agentos import YieldOnTimeout
from agentos import agent_tools
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.turns import Caller
from tests.support.mcp_stdio import TOOLS_SERVER
from tests.toolsets.conftest import WAIT
from tests.toolsets.conftest import hosting

pytestmark = pytest.mark.anyio

FILES = AgentConfig(name="files", mcp_servers={"files": TOOLS_SERVER})


def answering(prompt: str, *calls: tuple[str, dict[str, object]]) -> ScriptedProvider:
    """A model that makes ``calls`` when told ``prompt``, and says "done" after."""
    return ScriptedProvider(
        (lambda r: last_user_text(r) == prompt, lambda r: tool_calls(*calls)),
        (lambda r: True, lambda r: text("done")),
    )


def offered(request: ModelRequest) -> dict[str, dict[str, object]]:
    return {str(d["name"]): dict(d["input_schema"]) for d in request.tools}


async def test_the_model_sees_the_servers_tools_and_reads_their_progress() -> None:
    provider = answering("go", ("slow", {"steps": 2}))
    config = FILES.model_copy(update={"async_yield_strategy": YieldOnTimeout(milliseconds=50)})
    async with hosting(config, provider) as host, host.runtime.subscribe("s") as events:
        session = await host.create_session(config, session_id="s")
        session.post("go")
        with anyio.fail_after(WAIT):
            await session.wait_idle()
        schemas = offered(provider.requests[0])
        assert {"echo", "slow", "get_tool_call_status"} <= set(schemas)
        assert "expected_seconds" in schemas["slow"]["properties"]  # type: ignore[operator]
        (running,) = session.outstanding()
        with anyio.fail_after(WAIT):
            while len(host.runtime.status(running.call_id).progress) < 3:  # started, 2 steps
                await events.receive()
        assert running.provider_call_id is not None
        status = await host.toolbox.get_tool_call_status(Caller("s"), running.provider_call_id)
        assert status["status"] == "running"
        assert "step 2 of 2" in str(status)
        host.runtime.submit("release")
        with anyio.fail_after(WAIT):
            await session.wait_settled()
        assert "finished 2 steps" in str(provider.requests[-1].messages)


async def test_an_image_reaches_the_model_as_an_image_block() -> None:
    provider = answering("look", ("picture", {}))
    async with hosting(FILES, provider) as host:
        session = await host.create_session(FILES)
        session.post("look")
        with anyio.fail_after(WAIT):
            await session.wait_settled()
        (result,) = last_tool_results(provider.requests[-1])
        caption, image = result["content"]
        assert caption == {"type": "text", "text": "a tiny picture"}
        assert image["type"] == "image" and image["source"]["media_type"] == "image/png"


async def test_an_agent_without_the_server_neither_sees_nor_calls_its_tools() -> None:
    provider = answering("go", ("echo", {"text": "hi"}))
    async with hosting(FILES, provider) as host:
        other = AgentConfig(name="other", tools=[])
        session = await host.create_session(other)
        session.post("go")
        with anyio.fail_after(WAIT):
            await session.wait_settled()
        assert "echo" not in offered(provider.requests[0])
        (refused,) = last_tool_results(provider.requests[-1])
        assert refused["is_error"] is True
        assert refused["content"] == "tool 'echo' is not available to this agent"


async def test_an_agent_naming_a_server_the_runtime_lacks_is_refused() -> None:
    async with Runtime() as runtime, Host(runtime, answering("go")) as host:
        with pytest.raises(UsageError, match=r"mcp_servers\.files: this runtime has no toolset"):
            await host.create_session(FILES)


def test_import_paths_give_a_modules_tools_or_one_of_them() -> None:
    config = AgentConfig(
        tools=["weather", "agentos.demo.tools:fetch_calendar", "tests.support.tools"]
    )
    from agentos.demo.tools import TOOLS

    found = agent_tools(config, [t for t in TOOLS if t.name == "weather"])
    assert [t.name for t in found.tools] == ["weather", "fetch_calendar", "shout", "count"]


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("nope_no_such_module", "tools[0]: 'nope_no_such_module' is neither a tool here"),
        ("no.such.module", "tools[0]: 'no.such.module': cannot import no.such.module"),
        ("agentos.demo.tools:nothing", "agentos.demo.tools has no attribute 'nothing'"),
        ("agentos.demo.tools:scripted_model", "is the function 'scripted_model', not a tool"),
        ("json", "the module json has no tools at its top level"),
        (
            "tests.support.tools_broken",
            "importing tests.support.tools_broken failed: RuntimeError: broken",
        ),
    ],
)
def test_an_import_path_that_gives_no_tools_is_named(spec: str, problem: str) -> None:
    with pytest.raises(ToolImportError) as raised:
        agent_tools(AgentConfig(tools=[spec]))
    assert problem in str(raised.value)


def test_two_tools_with_one_name_are_an_error() -> None:
    config = AgentConfig(tools=["tests.support.tools", "tests.support.tools_again"])
    with pytest.raises(
        ToolImportError, match=r"tools\[1\]: 'tests.support.tools_again' gives a tool"
    ):
        agent_tools(config)


async def test_a_session_may_call_the_tools_its_import_paths_give() -> None:
    config = AgentConfig(tools=["tests.support.tools:shout"])
    provider = answering("go", ("shout", {"text": "hi"}), ("count", {}))
    async with hosting(config, provider) as host:
        session = await host.create_session(config)
        session.post("go")
        with anyio.fail_after(WAIT):
            await session.wait_settled()
        assert set(offered(provider.requests[0])) - {"get_tool_call_status"} >= {"shout"}
        assert "count" not in offered(provider.requests[0])
        shouted, refused = last_tool_results(provider.requests[-1])
        assert shouted["content"] == "HI"
        assert refused["is_error"] is True
