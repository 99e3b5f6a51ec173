"""agentos as the client of a server written with fastmcp, a second MCP framework: its
elicitation reaches the person and its sampling the session's own model (both failed with
'not supported' before agentos declared them)."""

from __future__ import annotations

import pytest

from agentos import AgentConfig
from agentos import Answer
from agentos import AnswerAction
from agentos import Asked
from agentos import CallStatus
from agentos import McpServerConfig
from agentos import ScriptedProvider
from agentos.testing import last_user_text
from agentos.testing import text
from tests.support.fastmcp import fastmcp_python
from tests.support.mcp_servers import SERVERS
from tests.toolsets.conftest import hosting
from tests.toolsets.conftest import outcome

pytestmark = pytest.mark.anyio


@pytest.fixture
def agent() -> AgentConfig:
    server = McpServerConfig(command=fastmcp_python(), args=[str(SERVERS / "fastmcp_server.py")])
    return AgentConfig(name="asker", model="claude-test", tools=[], mcp_servers={"fm": server})


async def test_its_question_reaches_the_person_and_the_answer_comes_back(
    agent: AgentConfig,
) -> None:
    asked: list[Asked] = []

    async def person(question: Asked) -> Answer:
        asked.append(question)
        if len(asked) == 1:
            return Answer(AnswerAction.ACCEPT, {"name": "Ada"})
        return Answer(AnswerAction.DECLINE)

    async with hosting(agent, ScriptedProvider()) as host:
        host.runtime.ask_person = person
        session = await host.create_session(agent)
        accepted = await outcome(
            host.runtime, host.runtime.submit("ask_name", {}, session_id=session.session_id)
        )
        declined = await outcome(
            host.runtime, host.runtime.submit("ask_name", {}, session_id=session.session_id)
        )
    assert accepted.result == {"result": "accept Ada"}
    assert declined.result == {"result": "decline"}
    assert asked[0].question.message == "What is your name?"
    assert asked[0].question.source == "MCP server fm"
    form = asked[0].question.form
    assert form is not None and isinstance(form["properties"], dict)
    assert "name" in form["properties"]


async def test_its_sampling_is_answered_by_the_sessions_model(agent: AgentConfig) -> None:
    provider = ScriptedProvider((lambda r: True, lambda r: text(f"short: {last_user_text(r)}")))
    async with hosting(agent, provider) as host:
        session = await host.create_session(agent)
        call = host.runtime.submit(
            "summarize", {"text": "a long story"}, session_id=session.session_id
        )
        done = await outcome(host.runtime, call)
        requests = session.statistics().requests
    assert done.status is CallStatus.COMPLETED
    assert done.result == {"result": "claude-test said: short: Summarize: a long story"}
    assert requests == 1 and provider.requests[0].model == "claude-test"
