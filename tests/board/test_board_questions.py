"""A call of a board session asks a person (``ctx.ask``): during a turn the person prompted
the question reaches them; during a turn the board takes on its own (a result's, a timer's)
nobody is there, so it is declined at once, saying so, and the model reads why."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from agentos import AgentConfig
from agentos import Answer
from agentos import AnswerAction
from agentos import Asked
from agentos import CallStatus
from agentos import ManualClock
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import ScriptedProvider
from agentos import ToolContext
from agentos import tool
from agentos.testing import text
from agentos.testing import tool_calls
from tests.board.conftest import board_text
from tests.board.conftest import focus
from tests.support.backends import running
from tests.support.scripting import until

pytestmark = pytest.mark.anyio

ON_ITS_OWN = "nobody to ask: the board runs this turn on its own"


@tool
async def asker(ctx: ToolContext) -> str:
    """Asks which city, and says what it was told and why."""
    answer = await ctx.ask("Which city?", source="test")
    return f"{answer.action.value}: {answer.reason}"


def in_turn(*responses: ModelResponse) -> Callable[[ModelRequest], ModelResponse]:
    """The model's answers, one a request, in order; then it says it is done."""
    left = list(responses)
    return lambda request: left.pop(0) if left else text("Done.")


async def test_a_result_turns_question_is_declined_while_the_persons_turn_reaches_them(
    clock: ManualClock,
) -> None:
    """The person's turn starts ``asker``: the host's hook answers it. Its result wakes the
    board, whose own turn starts ``asker`` again: declined at once (the hook never hears
    of it), and the next board shows the model why."""
    seen: list[Asked] = []

    async def person(asked: Asked) -> Answer:
        seen.append(asked)
        return Answer(AnswerAction.ACCEPT)

    script = in_turn(tool_calls(("asker", {})), tool_calls(("asker", {})))
    provider = ScriptedProvider((lambda r: True, script))
    config = AgentConfig(context_view="board")
    async with running(provider, asker, clock=clock, ask_person=person) as (runtime, host):
        session = await host.create_session(config)
        session.post("go")
        await until(lambda: len(provider.requests) == 3, runtime)
        with anyio.fail_after(5):
            await session.wait_settled()
    board = session.board
    assert board is not None
    calls = [call for node in board.nodes.values() for call in node.calls]
    assert [(c.tool_name, c.status) for c in calls] == [("asker", CallStatus.COMPLETED)] * 2
    assert calls[0].outcome == "accept: None"
    assert str(calls[1].outcome).startswith(f"decline: {ON_ITS_OWN}")
    assert [asked.call_id for asked in seen] == [calls[0].call_id], "the person heard once"
    last = provider.requests[-1]
    assert [focus(r).author for r in provider.requests] == ["user", "agent", "agent"]
    assert ON_ITS_OWN in board_text(last)


async def test_a_timer_turns_question_is_declined_and_a_person_started_call_still_asks(
    clock: ManualClock,
) -> None:
    """The person's turn starts a slow call; running past its interval wakes the board,
    whose turn starts ``asker``: declined. A question the person's own call asks later,
    after that turn, still reaches the person (and waits for them)."""
    seen: list[str] = []

    async def person(asked: Asked) -> None:
        seen.append(asked.call_id)

    go = anyio.Event()

    @tool
    async def later(ctx: ToolContext) -> str:
        """Asks once told to."""
        await go.wait()
        answer = await ctx.ask("Still want it?")
        return answer.action.value

    script = in_turn(tool_calls(("later", {})), tool_calls(("asker", {})))
    provider = ScriptedProvider((lambda r: True, script))
    config = AgentConfig(context_view="board", call_overdue_after=10)
    async with running(provider, asker, later, clock=clock, ask_person=person) as (
        runtime,
        host,
    ):
        session = await host.create_session(config)
        session.post("go")
        await until(lambda: bool(runtime.list_calls(session.session_id)), runtime)
        clock.advance(11)
        await until(lambda: len(provider.requests) == 3, runtime)
        assert "has run" in (focus(provider.requests[1]).note or ""), "a timer's turn"
        board = session.board
        assert board is not None
        calls = {call.tool_name: call for node in board.nodes.values() for call in node.calls}
        assert str(calls["asker"].outcome).startswith(f"decline: {ON_ITS_OWN}")
        assert seen == []
        go.set()
        await until(lambda: bool(seen), runtime)
        held = runtime.status(calls["later"].call_id)
        assert seen == [held.call_id]
        assert held.question is not None and held.question.message == "Still want it?"
