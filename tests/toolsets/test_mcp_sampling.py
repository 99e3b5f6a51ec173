"""An MCP server's sampling request is answered by the session's own model: its provider,
its budget, its usage; the call shows it; an agent file can refuse it. Against a real
server written with the ``mcp`` SDK, through sessions."""

from __future__ import annotations

import sys
from dataclasses import replace

import anyio
import pytest

from agentos import AgentConfig
from agentos import CallStatus
from agentos import Host
from agentos import McpServer
from agentos import ModelRequest
from agentos import ProgressKind
from agentos import Runtime
from agentos import ScriptedProvider
from agentos.testing import last_user_text
from agentos.testing import text
from agentos.testing import tool_calls
from tests.support.mcp_servers import SERVERS
from tests.support.mcp_stdio import TOOLS_SERVER
from tests.toolsets.conftest import WAIT
from tests.toolsets.conftest import hosting
from tests.toolsets.conftest import outcome

pytestmark = pytest.mark.anyio


def sampled(request: ModelRequest) -> bool:
    """A request that is the server's sampling, not the session's turn."""
    return request.system == "Be brief."


def model() -> ScriptedProvider:
    """Calls ``summarize`` when asked to, answers the server's sampling, then says done."""
    return ScriptedProvider(
        (sampled, lambda r: text(f"short: {last_user_text(r)}")),
        (
            lambda r: last_user_text(r) == "summarize it",
            lambda r: tool_calls(("summarize", {"text": "a long story"})),
        ),
        (lambda r: True, lambda r: text("done")),
    )


async def summary(host: Host, config: AgentConfig) -> str:
    """What ``summarize`` returned to the session's model."""
    session = await host.create_session(config)
    session.post("summarize it")
    with anyio.fail_after(WAIT):
        await session.wait_idle()
        await session.wait_settled()
    (call,) = host.runtime.list_calls(session.session_id)
    assert isinstance(call.result, dict), call
    return str(call.result["result"])


async def test_the_sessions_own_model_answers_and_the_session_pays() -> None:
    config = AgentConfig(name="files", model="claude-test", mcp_servers={"files": TOOLS_SERVER})
    provider = model()
    async with hosting(config, provider) as host:
        said = await summary(host, config)
        session = host.list()[0]
        statistics = host.get(session.session_id).statistics()
        calls = host.runtime.list_calls(session.session_id)
    assert said == "claude-test said: short: Summarize: a long story (endTurn)"
    asked = [r for r in provider.requests if sampled(r)]
    assert len(asked) == 1 and asked[0].model == "claude-test" and asked[0].max_tokens == 50
    assert statistics.requests == 3  # the turn's two, and the server's one
    lines = [str(e.payload) for e in calls[0].progress if e.kind is ProgressKind.LOG]
    assert lines[0] == "[sampling] MCP server files asks the session's model"
    assert lines[1].startswith("[sampling] claude-test answered")


async def test_a_session_past_its_budget_refuses_the_servers_request() -> None:
    config = AgentConfig(
        name="files", mcp_servers={"files": TOOLS_SERVER}, max_tokens_per_session=1
    )
    provider = ScriptedProvider(
        (sampled, lambda r: text("never asked")),
        (
            lambda r: last_user_text(r) == "summarize it",
            lambda r: replace(tool_calls(("summarize", {"text": "x"})), usage={"output_tokens": 5}),
        ),
        (lambda r: True, lambda r: text("done")),
    )
    async with hosting(config, provider) as host:
        said = await summary(host, config)
    assert said.startswith("refused: the model failed: the session has used 5 tokens")
    assert not [r for r in provider.requests if sampled(r)]


async def test_an_agent_file_can_refuse_sampling() -> None:
    refusing = TOOLS_SERVER.model_copy(update={"sampling": False})
    config = AgentConfig(name="files", mcp_servers={"files": refusing})
    async with hosting(config, model()) as host:
        said = await summary(host, config)
    assert said == "refused: Sampling not supported"


async def test_without_a_host_there_is_no_model_to_ask() -> None:
    server = McpServer.stdio("files", sys.executable, [str(SERVERS / "tools_server.py")])
    with anyio.fail_after(WAIT * 2):
        async with Runtime(toolsets=[server]) as runtime:
            done = await outcome(runtime, runtime.submit("summarize", {"text": "x"}))
    assert done.status is CallStatus.COMPLETED
    assert done.result == {
        "result": "refused: no host runs this call's session: nobody's model to ask"
    }
