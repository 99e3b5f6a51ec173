"""``agentos.a2a.app``'s tasks in its own process, the host's clock and calls the test's:
a question nobody answers in time is declined and the task goes on; a flood of questions
past what a task holds is declined; a task's answer is its own turn's; a context runs one
task at a time (issue 50)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from a2a.helpers import get_message_text
from a2a.types.a2a_pb2 import CancelTaskRequest
from a2a.types.a2a_pb2 import GetTaskRequest
from a2a.types.a2a_pb2 import StreamResponse
from a2a.types.a2a_pb2 import SubscribeToTaskRequest
from a2a.types.a2a_pb2 import Task
from a2a.types.a2a_pb2 import TaskState
from pydantic import BaseModel

from agentos import AgentConfig
from agentos import Answer
from agentos import Asked
from agentos import Disposition
from agentos import JsonObject
from agentos import ManualClock
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import ScriptedProvider
from agentos import ToolContext
from agentos import ToolPolicy
from agentos import tool
from agentos.testing import Puppet
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import text
from agentos.testing import tool_calls
from tests.ui.a2a.in_process import Served
from tests.ui.a2a.in_process import served
from tests.ui.a2a.running import everything
from tests.ui.a2a.running import message
from tests.ui.a2a.running import said
from tests.ui.a2a.running import state
from tests.ui.cli.asking_tools import where

pytestmark = pytest.mark.anyio

ASKED = TaskState.TASK_STATE_INPUT_REQUIRED
COMPLETED = TaskState.TASK_STATE_COMPLETED
FLOOD = 101
"""One more question than a task holds."""
DEFERRING = AgentConfig(name="worker", policy=ToolPolicy(rules={"puppet": Disposition.DEFER}))
"""The agent whose puppet's calls someone outside completes."""
EXTERNAL = "the turn waits for deferred calls that only someone outside can complete"


async def defers_again_and_fails(agent: Served, context_id: str) -> None:
    """A new task in ``context_id`` whose turn defers a puppet's call fails, saying that the
    turn waits for a call only someone outside can complete."""
    again = message("hold", context_id=context_id)
    (*_, ended) = await everything(agent.client.send_message(again))
    assert state(ended) == TaskState.TASK_STATE_FAILED and said(ended) == EXTERNAL


def results(request: ModelRequest) -> ModelResponse:
    """The model says what its calls returned, one line each."""
    return text("\n".join(str(r.get("content")) for r in last_tool_results(request)))


def model() -> ScriptedProvider:
    """``hello``: an answer; ``weather?``: ask where; ``hold``: a puppet's call; ``both``: the
    two at once; ``flood``: ask ``FLOOD`` times at once; then it says what came back."""

    def said(words: str) -> Callable[[ModelRequest], bool]:
        return lambda request: last_user_text(request) == words

    return ScriptedProvider(
        (lambda request: bool(last_tool_results(request)), results),
        (said("hello"), lambda request: text("first answer")),
        (said("weather?"), lambda request: tool_calls(("where", {}))),
        (said("hold"), lambda request: tool_calls(("puppet", {}))),
        (said("both"), lambda request: tool_calls(("where", {}), ("puppet", {}))),
        (said("flood"), lambda request: tool_calls(*[("yes_or_no", {})] * FLOOD)),
    )


@asynccontextmanager
async def unanswered(
    tmp_path: Path, puppet: Puppet
) -> AsyncIterator[tuple[Served, Task, AsyncIterator[StreamResponse]]]:
    """Served with a 30 s ask timeout: a task that asks where and holds a puppet's call,
    followed until its question has gone unanswered for 30 s of the runtime's clock (the
    task is working again): the agent, the task as it asked, and the rest of its stream."""
    clock = ManualClock()
    tools = [where, puppet.tool]
    async with served(tmp_path, model(), tools, clock=clock, ask_timeout=30) as agent:
        client = agent.client
        with anyio.fail_after(30):
            asked = await everything(client.send_message(message("both")))
            assert state(asked[-1]) == ASKED and said(asked[-1]).startswith("Which city?")
            task = asked[0].task
            followed = client.subscribe(SubscribeToTaskRequest(id=task.id))
            assert state(await anext(followed)) == ASKED
            clock.advance(30)  # counted from when the task showed the question
            async for event in followed:
                if "asks no more" in said(event):
                    break
            assert state(event) == TaskState.TASK_STATE_WORKING
            assert said(event).endswith(
                "asks no more: declined, the A2A client did not answer within 30 s"
            )
            yield agent, task, followed


async def test_a_question_nobody_answers_in_time_is_declined_and_the_task_goes_on(
    tmp_path: Path,
) -> None:
    puppet = Puppet()
    async with unanswered(tmp_path, puppet) as (agent, task, followed):
        client = agent.client
        task_id, context_id = task.id, task.context_id
        with anyio.fail_after(30):
            late = message("Paris", task_id=task_id, context_id=context_id)
            told = await everything(client.send_message(late))  # with the turn's own lines
            (refused,) = [event for event in told if "asks nothing now" in said(event)]
            assert state(refused) == TaskState.TASK_STATE_WORKING
            (call_id,) = puppet.calls
            puppet.complete(call_id, "held")
            rest = await everything(followed)
            assert state(rest[-1]) == COMPLETED
            assert said(rest[-1]) == (
                "decline: null (the A2A client did not answer within 30 s)\nheld"
            )
            # the task was forgotten: the context takes another
            (*_, again) = await everything(
                client.send_message(message("hello", context_id=context_id))
            )
            assert state(again) == COMPLETED and said(again) == "first answer"


async def test_a_question_whose_call_ends_is_withdrawn_and_the_task_goes_on(
    tmp_path: Path,
) -> None:
    clock = ManualClock()
    async with served(tmp_path, model(), [where], clock=clock, call_timeout=10) as agent:
        with anyio.fail_after(30):
            asked = await everything(agent.client.send_message(message("weather?")))
            assert state(asked[-1]) == ASKED
            followed = agent.client.subscribe(SubscribeToTaskRequest(id=asked[0].task.id))
            assert state(await anext(followed)) == ASKED
            clock.advance(10)  # the call times out, its question with it
            rest = await everything(followed)
            (going_on,) = [event for event in rest if "asks no more" in said(event)]
            assert state(going_on) == TaskState.TASK_STATE_WORKING
            assert said(going_on).startswith("where (") and said(going_on).endswith(
                ") asks no more: its call has ended"
            )
            assert state(rest[-1]) == COMPLETED


class Nothing(BaseModel):
    pass


async def test_a_question_past_the_most_a_task_holds_is_declined(tmp_path: Path) -> None:
    flooded = anyio.Event()

    async def yes_or_no(args: Nothing, ctx: ToolContext) -> str:
        answer = await ctx.ask("Yes?")
        if "already wait" in (answer.reason or ""):
            flooded.set()
        return f"{answer.action.value}: {answer.reason}"

    asker = tool(yes_or_no, name="yes_or_no")
    async with served(tmp_path, model(), [asker], streaming=False, max_running=FLOOD) as agent:
        client = agent.client
        with anyio.fail_after(60):
            (first,) = await everything(client.send_message(message("flood")))
            task = first.task
            assert task.status.state == ASKED
            await flooded.wait()  # every question is asked: the last one was declined
            for _ in range(FLOOD - 1):
                decline = message("decline", task_id=task.id, context_id=task.context_id)
                (now,) = await everything(client.send_message(decline))
                task = now.task
            assert task.status.state == COMPLETED
            lines = get_message_text(task.status.message).splitlines()
            assert lines.count("decline: the A2A client said decline") == FLOOD - 1
            (flood,) = [line for line in lines if "already wait" in line]
            assert flood == (
                "decline: 100 questions of this task already wait for its A2A client: it is "
                "asked no more until one is answered"
            )


async def test_questions_whose_calls_ended_unread_leave_room_for_the_next(
    tmp_path: Path,
) -> None:
    """While the task shows one question, as many more as it holds are asked and their
    calls time out before the task reads them: the next two questions still wait for the
    client, each in its turn, rather than one being declined for want of room."""
    clock = ManualClock()
    gate, late = anyio.Event(), anyio.Event()

    async def brief(args: Nothing, ctx: ToolContext) -> str:
        await gate.wait()
        return (await ctx.ask("Quick?")).action.value

    async def last(args: Nothing, ctx: ToolContext) -> str:
        await late.wait()
        answer = await ctx.ask("Last?")
        return f"last: {answer.action.value}: {answer.reason}"

    tools = [where, tool(brief, name="brief", timeout=10), tool(last, name="last")]
    briefs = FLOOD - 2  # with the question shown, as many as a task holds
    calls: list[tuple[str, JsonObject]] = [("where", {}), *[("brief", {})] * briefs]
    calls += [("last", {}), ("last", {})]
    scripted = ScriptedProvider(
        (lambda request: bool(last_tool_results(request)), results),
        (lambda request: True, lambda request: tool_calls(*calls)),
    )
    async with served(
        tmp_path, scripted, tools, clock=clock, streaming=False, max_running=FLOOD + 1
    ) as agent:
        client, runtime = agent.client, agent.host.runtime
        with anyio.fail_after(60):
            (first,) = await everything(client.send_message(message("go")))
            task = first.task
            assert get_message_text(task.status.message).startswith("Which city?")
            handed: list[str] = []
            all_handed, lasts_handed = anyio.Event(), anyio.Event()
            asking = runtime.ask_person
            assert asking is not None

            async def counted(asked: Asked) -> Answer | None:
                handed.append(asked.question.message)
                if len(handed) == briefs:
                    all_handed.set()  # the test wakes once this ask has handed it
                if len(handed) == briefs + 2:
                    lasts_handed.set()
                return await asking(asked)

            runtime.ask_person = counted
            gate.set()
            await all_handed.wait()
            clock.advance(10)  # the briefs time out, their questions never read
            for call in runtime.list_calls(task.context_id):
                if call.tool_name == "brief":
                    assert (await runtime.wait(call.call_id)).status.is_final
            late.set()
            await lasts_handed.wait()
            for answer in ("Paris", "accept"):
                (now,) = await everything(client.send_message(message(answer, task_id=task.id)))
                assert now.task.status.state == ASKED
                assert get_message_text(now.task.status.message).startswith("Last?")
            (done,) = await everything(client.send_message(message("accept", task_id=task.id)))
            assert done.task.status.state == COMPLETED
            lines = get_message_text(done.task.status.message).splitlines()
            assert lines.count("last: accept: None") == 2


async def test_a_stopped_sessions_task_fails_rather_than_answer_with_an_older_reply(
    tmp_path: Path,
) -> None:
    puppet = Puppet()
    async with served(tmp_path, model(), [puppet.tool]) as agent:
        client = agent.client
        with anyio.fail_after(30):
            (*_, answered) = await everything(client.send_message(message("hello")))
            assert said(answered) == "first answer"
            context_id = answered.status_update.context_id
            events = client.send_message(message("hold", context_id=context_id))
            async for event in events:
                if said(event).endswith(" started"):
                    break
            agent.host.stop(context_id)
            (*_, ended) = await everything(events)
            assert state(ended) == TaskState.TASK_STATE_FAILED
            assert said(ended) == "the session was stopped before the turn ended"


async def test_a_turn_left_waiting_on_deferred_calls_fails_rather_than_answer_with_an_older_reply(
    tmp_path: Path,
) -> None:
    puppet = Puppet()
    async with served(tmp_path, model(), [puppet.tool], config=DEFERRING) as agent:
        client = agent.client
        with anyio.fail_after(30):
            (*_, answered) = await everything(client.send_message(message("hello")))
            context_id = answered.status_update.context_id
            await defers_again_and_fails(agent, context_id)


async def test_a_deferred_call_of_an_earlier_task_leaves_a_later_tasks_answer_its_own(
    tmp_path: Path,
) -> None:
    """The session still waits for the first task's deferred call: the second task, which
    the model answers, completes with that answer; a third that defers again fails."""
    puppet = Puppet()
    scripted = ScriptedProvider(
        (lambda request: last_user_text(request) == "hello", lambda request: text("mine")),
        (lambda request: True, lambda request: tool_calls(("puppet", {}))),
    )
    async with served(tmp_path, scripted, [puppet.tool], config=DEFERRING) as agent:
        client = agent.client
        with anyio.fail_after(30):
            (*_, deferred) = await everything(client.send_message(message("hold")))
            assert state(deferred) == TaskState.TASK_STATE_FAILED
            context_id = deferred.status_update.context_id
            later = message("hello", context_id=context_id)
            (*_, answered) = await everything(client.send_message(later))
            assert state(answered) == COMPLETED and said(answered) == "mine"
            await defers_again_and_fails(agent, context_id)


async def test_a_task_cancelled_after_its_question_timed_out_stays_cancelled(
    tmp_path: Path,
) -> None:
    puppet = Puppet()
    async with unanswered(tmp_path, puppet) as (agent, task, followed):
        with anyio.fail_after(30):
            cancelled = await agent.client.cancel_task(CancelTaskRequest(id=task.id))
            assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
            (call_id,) = puppet.calls
            await agent.host.runtime.wait(call_id)
            assert puppet.calls[call_id].cancelled
            await everything(followed)
            fetched = await agent.client.get_task(GetTaskRequest(id=task.id))
            assert fetched.status.state == TaskState.TASK_STATE_CANCELED
            assert get_message_text(fetched.status.message) == "the A2A client cancelled the task"


async def test_a_context_runs_one_task_at_a_time(tmp_path: Path) -> None:
    puppet = Puppet()
    async with served(tmp_path, model(), [puppet.tool]) as agent:
        client = agent.client
        with anyio.fail_after(30):
            events = client.send_message(message("hold"))
            first = (await anext(events)).task
            async for event in events:
                if said(event).endswith(" started"):
                    break
            other = message("hello", context_id=first.context_id)
            (*_, refused) = await everything(client.send_message(other))
            assert state(refused) == TaskState.TASK_STATE_REJECTED
            assert said(refused) == (
                f"context {first.context_id} is busy with task {first.id}: send to that task, "
                "or start this one when it has ended"
            )
            assert refused.status_update.task_id != first.id
            (call_id,) = puppet.calls
            assert not puppet.calls[call_id].cancelled
            puppet.complete(call_id, "held")
            (*_, done) = await everything(events)
            assert state(done) == COMPLETED and said(done) == "held"
            (*_, later) = await everything(client.send_message(other))  # it has ended
            assert state(later) == COMPLETED and said(later) == "first answer"


DAYS_FORM: JsonObject = {
    "type": "object",
    "properties": {"days": {"type": "integer"}, "city": {"type": "string"}},
    "required": ["days"],
}


async def test_a_whole_number_answered_to_an_integer_field_is_an_integer(tmp_path: Path) -> None:
    """A2A's data parts carry every number as a float: ``3`` arrives as ``3.0``, which an
    integer field would refuse forever."""

    async def how_long(args: Nothing, ctx: ToolContext) -> str:
        answer = await ctx.ask("How many days?", form=DAYS_FORM)
        content = answer.content or {}
        return f"{type(content['days']).__name__} {json.dumps(content, sort_keys=True)}"

    asker = tool(how_long, name="how_long")
    scripted = ScriptedProvider(
        (lambda request: bool(last_tool_results(request)), results),
        (lambda request: True, lambda request: tool_calls(("how_long", {}))),
    )
    async with served(tmp_path, scripted, [asker], streaming=False) as agent:
        client = agent.client
        with anyio.fail_after(30):
            (first,) = await everything(client.send_message(message("plan")))
            task = first.task
            assert task.status.state == ASKED
            answer = message(data={"days": 3, "city": "Oslo"}, task_id=task.id)
            (now,) = await everything(client.send_message(answer))
            assert now.task.status.state == COMPLETED, get_message_text(now.task.status.message)
            assert get_message_text(now.task.status.message) == 'int {"city": "Oslo", "days": 3}'


async def test_a_message_on_a_task_a_stopped_host_left_asking_fails_it_and_posts_nothing(
    tmp_path: Path,
) -> None:
    """The host stopped while the task asked its question: the answer sent to the next host
    is no turn of the session (no task follows that question any more); the task ends
    ``failed``, as it reads."""
    async with served(tmp_path, model(), [where], streaming=False) as agent:
        with anyio.fail_after(30):
            (first,) = await everything(agent.client.send_message(message("weather?")))
            task = first.task
            assert task.status.state == ASKED
    async with served(tmp_path, model(), [where], streaming=False) as agent:
        with anyio.fail_after(30):
            answer = message("Paris", task_id=task.id, context_id=task.context_id)
            (now,) = await everything(agent.client.send_message(answer))
            assert now.task.status.state == TaskState.TASK_STATE_FAILED
            abandoned = "the host that ran its turn stopped before the turn ended"
            assert get_message_text(now.task.status.message) == abandoned
            fetched = await agent.client.get_task(GetTaskRequest(id=task.id))
            assert fetched.status.state == TaskState.TASK_STATE_FAILED
            assert get_message_text(fetched.status.message) == abandoned
            assert "Paris" not in str(agent.host.get(task.context_id).history)
            (later,) = await everything(
                agent.client.send_message(message("hello", context_id=task.context_id))
            )
            assert later.task.status.state == COMPLETED
            assert get_message_text(later.task.status.message) == "first answer"


async def test_served_without_its_lifespan_a_task_fails_saying_so(tmp_path: Path) -> None:
    """Without the lifespan no task whose question went unanswered could go on: a message
    fails at once, saying how to serve the app, instead of a task stuck asking."""
    async with served(tmp_path, model(), [where], streaming=False, lifespan=False) as agent:
        with anyio.fail_after(30):
            (first,) = await everything(agent.client.send_message(message("weather?")))
    assert first.task.status.state == TaskState.TASK_STATE_FAILED
    assert get_message_text(first.task.status.message).startswith(
        "the A2A app is served without its lifespan"
    )
