"""How an ``agentos.a2a.app`` task follows its turn when things happen out of order, in the
test's own process: an answer to a question answered elsewhere answers nothing, and says
so; an error while following a task in the background fails that task and frees its
context, the app serving on (issue 50)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from a2a.types.a2a_pb2 import GetTaskRequest
from a2a.types.a2a_pb2 import SubscribeToTaskRequest
from a2a.types.a2a_pb2 import TaskState

from agentos import Answer
from agentos import AnswerAction
from agentos import Asked
from agentos import ManualClock
from tests.ui.a2a.in_process import served
from tests.ui.a2a.running import everything
from tests.ui.a2a.running import message
from tests.ui.a2a.running import said
from tests.ui.a2a.running import state
from tests.ui.a2a.test_executor import ASKED
from tests.ui.a2a.test_executor import COMPLETED
from tests.ui.a2a.test_executor import model
from tests.ui.cli.asking_tools import where

pytestmark = pytest.mark.anyio


async def test_an_answer_to_a_question_answered_elsewhere_answers_nothing(
    tmp_path: Path,
) -> None:
    """The person answered on the page; the task has not heard yet that its question waits
    no more (its ``ask`` lets go late): the client's answer is told it answers nothing."""
    clock = ManualClock()
    async with served(tmp_path, model(), [where], clock=clock, ask_timeout=30) as agent:
        client, runtime = agent.client, agent.host.runtime
        asking = runtime.ask_person
        assert asking is not None

        async def late_to_let_go(asked: Asked) -> Answer | None:
            with anyio.CancelScope(shield=True):
                answer = await asking(asked)
            return answer

        runtime.ask_person = late_to_let_go
        with anyio.fail_after(30):
            asked = await everything(client.send_message(message("weather?")))
            assert state(asked[-1]) == ASKED
            task = asked[0].task
            (call,) = runtime.list_calls(task.context_id)
            oslo = Answer(AnswerAction.ACCEPT, {"city": "Oslo"})
            assert agent.host.answer(task.context_id, call.call_id, oslo)
            late = client.send_message(message("Paris", task_id=task.id))
            async for event in late:
                if event.HasField("status_update"):
                    break
            assert state(event) == TaskState.TASK_STATE_WORKING
            assert said(event) == (
                f"task {task.id} asks nothing now (its question waits no more): the message "
                "answers nothing; the turn goes on"
            )
            await everything(late)
            followed = client.subscribe(SubscribeToTaskRequest(id=task.id))
            assert state(await anext(followed)) == TaskState.TASK_STATE_WORKING
            clock.advance(30)  # the ask lets go at last
            (*_, done) = await everything(followed)
            assert state(done) == COMPLETED and said(done) == 'accept: {"city": "Oslo"}'


async def test_an_error_following_a_task_in_the_background_fails_it_and_frees_its_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = ManualClock()
    async with served(tmp_path, model(), [where], clock=clock, call_timeout=10) as agent:
        client, runtime = agent.client, agent.host.runtime
        with anyio.fail_after(30):
            asked = await everything(client.send_message(message("weather?")))
            assert state(asked[-1]) == ASKED
            task = asked[0].task
            (call,) = runtime.list_calls(task.context_id)
            real = runtime.status

            def broken(call_id: str) -> object:
                if call_id == call.call_id:
                    raise RuntimeError("the runtime lost it")
                return real(call_id)

            followed = client.subscribe(SubscribeToTaskRequest(id=task.id))
            assert state(await anext(followed)) == ASKED
            monkeypatch.setattr(runtime, "status", broken)
            clock.advance(10)  # the call times out: the task goes on in the background
            (*_, ended) = await everything(followed)
            monkeypatch.undo()
            assert state(ended) == TaskState.TASK_STATE_FAILED
            assert said(ended) == "following its turn failed: RuntimeError('the runtime lost it')"
            fetched = await client.get_task(GetTaskRequest(id=task.id))
            assert fetched.status.state == TaskState.TASK_STATE_FAILED
            again = message("hello", context_id=task.context_id)
            (*_, answered) = await everything(client.send_message(again))
            assert state(answered) == COMPLETED and said(answered) == "first answer"
