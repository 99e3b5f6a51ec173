"""What a message on an ``agentos.a2a.app`` task answers its question with, in the test's own
process: a question with no field takes only ``accept``, ``decline`` or ``cancel``; whole
numbers in a data part are integers again wherever the form says integer (issue 50)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from a2a.client import Client
from a2a.helpers import get_message_text
from a2a.types.a2a_pb2 import Task
from a2a.types.a2a_pb2 import TaskState
from pydantic import BaseModel

from agentos import A2aAgent
from agentos import Answer
from agentos import AnswerAction
from agentos import Asked
from agentos import CallStatus
from agentos import Json
from agentos import JsonObject
from agentos import ScriptedProvider
from agentos import Tool
from agentos import ToolContext
from agentos import tool
from agentos.testing import last_tool_results
from agentos.testing import tool_calls
from tests.toolsets.conftest import WAIT
from tests.toolsets.conftest import answering
from tests.toolsets.conftest import outcome
from tests.toolsets.conftest import serving
from tests.ui.a2a.in_process import served
from tests.ui.a2a.running import everything
from tests.ui.a2a.running import message
from tests.ui.a2a.test_executor import results

pytestmark = pytest.mark.anyio

ASKED = TaskState.TASK_STATE_INPUT_REQUIRED
COMPLETED = TaskState.TASK_STATE_COMPLETED


class Nothing(BaseModel):
    pass


def asking(name: str) -> ScriptedProvider:
    """A model that calls ``name``, then says what it returned."""
    return ScriptedProvider(
        (lambda request: bool(last_tool_results(request)), results),
        (lambda request: True, lambda request: tool_calls((name, {}))),
    )


@asynccontextmanager
async def asked(tmp_path: Path, asker: Tool[Any]) -> AsyncIterator[tuple[Client, Task]]:
    """The agent served with ``asker``, which its model calls: its client, and the task of a
    message as it asks."""
    async with served(tmp_path, asking(asker.name), [asker], streaming=False) as agent:
        with anyio.fail_after(30):
            (first,) = await everything(agent.client.send_message(message("go")))
        assert first.task.status.state == ASKED
        yield agent.client, first.task


async def confirm(args: Nothing, ctx: ToolContext) -> str:
    answer = await ctx.ask("Delete every file?")  # no form: accept or decline
    why = "" if answer.reason is None else f" ({answer.reason})"
    return f"{answer.action.value}: {json.dumps(answer.content)}{why}"


@pytest.mark.parametrize(
    ("words", "heard"),
    [
        ("accept", "accept: {}"),
        ("Decline", "decline: null (the A2A client said Decline)"),
        ("cancel", "cancel: null (the A2A client said cancel)"),
    ],
)
async def test_a_confirmation_takes_only_its_action_words(
    tmp_path: Path, words: str, heard: str
) -> None:
    """A "no" to a yes/no question is no accept: any text but the three words is refused,
    saying which they are, and the question stays."""
    async with asked(tmp_path, tool(confirm, name="confirm")) as (client, task):
        with anyio.fail_after(30):
            for text in ("no", "yes", ""):
                (now,) = await everything(client.send_message(message(text, task_id=task.id)))
                assert now.task.status.state == ASKED
                said = get_message_text(now.task.status.message)
                assert said == (
                    "that answer does not fit: this question is answered accept, decline or "
                    f"cancel, not {text!r}"
                )
            (now,) = await everything(client.send_message(message(words, task_id=task.id)))
            assert now.task.status.state == COMPLETED
            assert get_message_text(now.task.status.message) == heard


@pytest.mark.parametrize(
    ("answer", "heard"),
    [
        (Answer(AnswerAction.ACCEPT), "accept: {}"),
        (Answer(AnswerAction.DECLINE), "decline: null (the A2A client said decline)"),
    ],
    ids=["accepted", "declined"],
)
async def test_an_agentos_agents_confirmation_asks_the_person_to_accept_or_decline(
    tmp_path: Path, answer: Answer, heard: str
) -> None:
    """A session delegating to an ``agentos a2a`` agent whose call asks with no form asks
    its person a confirmation (no form: accept or decline), and sends the action's word."""
    asker = tool(confirm, name="confirm")
    asked: list[Asked] = []
    async with served(tmp_path, asking("confirm"), [asker], streaming=False) as agent:
        worker = A2aAgent.http("worker", agent.url, start_timeout=WAIT)
        async with serving(worker, ask=answering(answer, asked)) as (runtime, _):
            done = await outcome(runtime, runtime.submit("worker", {"message": "go"}))
    (question,) = asked
    assert question.question.message == "Delete every file?"
    assert question.question.form is None and question.question.url is None
    assert done.status is CallStatus.COMPLETED, done
    assert isinstance(done.result, dict) and done.result["text"] == heard


LISTS_FORM: JsonObject = {
    "type": "object",
    "properties": {
        "days": {"type": "array", "items": {"type": "integer"}},
        "nights": {"type": ["integer", "null"]},
        "budget": {"type": "number"},
    },
    "required": ["days"],
}


async def test_whole_numbers_are_integers_in_an_integer_array_and_a_type_list(
    tmp_path: Path,
) -> None:
    """A2A's data parts carry every number as a float: an integer array's items and a field
    typed ``["integer", "null"]`` are integers again; a number field keeps its float."""

    async def plan(args: Nothing, ctx: ToolContext) -> str:
        answer = await ctx.ask("Which days?", form=LISTS_FORM)
        content = answer.content or {}
        kinds = [type(content["nights"]).__name__, type(content["budget"]).__name__]
        kinds += [type(day).__name__ for day in content["days"]]  # type: ignore[union-attr]
        return f"{' '.join(kinds)} {json.dumps(content, sort_keys=True)}"

    async with asked(tmp_path, tool(plan, name="plan")) as (client, task):
        with anyio.fail_after(30):
            data = {"days": [1, 2], "nights": 3, "budget": 100}
            (now,) = await everything(client.send_message(message(data=data, task_id=task.id)))
            said = get_message_text(now.task.status.message)
            assert now.task.status.state == COMPLETED, said
            assert said == ('int float int int {"budget": 100.0, "days": [1, 2], "nights": 3}')


async def asked_of_the_model(
    tmp_path: Path, asker: Tool[Any], *answers: str
) -> tuple[JsonObject, list[Json]]:
    """With ``input = "model"``: the question an A2A call of the agent serving ``asker``
    comes back with, and what each answer, sent on its task in turn, returned."""
    async with served(tmp_path, asking(asker.name), [asker], streaming=False) as agent:
        worker = A2aAgent.http("worker", agent.url, start_timeout=WAIT, input="model")
        async with serving(worker) as (runtime, _):
            first = await outcome(runtime, runtime.submit("worker", {"message": "go"}))
            question = first.result
            assert isinstance(question, dict), first
            on_the_task = {"task_id": question["task_id"], "context_id": question["context_id"]}
            results = []
            for answer in answers:
                call = runtime.submit("worker", {"message": answer, **on_the_task})
                results.append((await outcome(runtime, call)).result)
    return question, results


async def test_the_model_is_told_an_agentos_agents_confirmation_takes_its_action_words(
    tmp_path: Path,
) -> None:
    """With ``input = "model"``, the question of a call that asked with no form tells the
    model what answers it; a "yes" is refused saying so, and ``accept`` answers it."""
    asker = tool(confirm, name="confirm")
    question, (again, done) = await asked_of_the_model(tmp_path, asker, "yes", "accept")
    assert question["input_required"] == "Delete every file?"
    assert question["how"] == (
        "call this tool again with accept, decline or cancel as message, and this task_id and "
        "context_id"
    )
    assert "answer_schema" not in question and "url" not in question
    assert isinstance(again, dict)
    assert again["input_required"] == (
        "that answer does not fit: this question is answered accept, decline or cancel, not "
        "'yes'\nDelete every file?"
    )
    assert isinstance(done, dict) and done["text"] == "accept: {}"


async def sign_in(args: Nothing, ctx: ToolContext) -> str:
    answer = await ctx.ask("Sign in first.", url="https://example.test/sign-in")
    return f"{answer.action.value}: {json.dumps(answer.content)}"


async def test_the_model_is_told_an_agentos_agents_page_to_open_takes_its_action_words(
    tmp_path: Path,
) -> None:
    """A question that gives a page to open is answered accept (once it is done), decline
    or cancel: the model is told so, with the page, not to send an answer of its own."""
    asker = tool(sign_in, name="sign_in")
    question, (done,) = await asked_of_the_model(tmp_path, asker, "accept")
    assert question["url"] == "https://example.test/sign-in"
    assert question["how"] == (
        "call this tool again with accept, decline or cancel as message, and this task_id and "
        "context_id"
    )
    assert isinstance(done, dict) and done["text"] == "accept: {}"
