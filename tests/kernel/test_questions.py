"""A running call asks a person (``ctx.ask``): its question shows on it while it waits, the
host's hook or ``Runtime.answer`` answers it, and nothing else waits meanwhile."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agentos import Answer
from agentos import AnswerAction
from agentos import Asked
from agentos import CallId
from agentos import CallOptions
from agentos import CallStatus
from agentos import JsonObject
from agentos import ManualClock
from agentos import ProgressKind
from agentos import Runtime
from agentos import ToolContext
from agentos import UnknownCallError
from agentos import UsageError
from agentos import tool
from agentos.testing import Puppet
from agentos.testing import settle

pytestmark = pytest.mark.anyio

FORM: JsonObject = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}


class Topic(BaseModel):
    about: str = "weather"


@tool
async def asker(args: Topic, ctx: ToolContext) -> dict[str, object]:
    """Asks where, then says what it was told."""
    answer = await ctx.ask(f"Which city's {args.about}?", form=FORM, source="test")
    return {"action": answer.action.value, "content": answer.content, "reason": answer.reason}


@tool
def sync_asker(args: Topic, ctx: ToolContext) -> str:
    ctx.ask("can a thread ask?").close()  # never reached: ask raises in a sync tool
    return "asked"


@pytest.fixture
async def asking(clock: ManualClock, puppet: Puppet) -> AsyncIterator[Runtime]:
    async with Runtime([asker, sync_asker, puppet.tool], clock=clock) as runtime:
        yield runtime


async def _held(asked: Asked) -> Answer | None:
    return None  # left for a person: Runtime.answer gives it


async def held_question(
    runtime: Runtime, tool_input: JsonObject | None = None, **submit: Any
) -> CallId:
    """An ``asker`` call (``submit``: ``Runtime.submit``'s options), once its question
    waits for a person to answer it with ``Runtime.answer``."""
    runtime.ask_person = _held
    call = runtime.submit("asker", {} if tool_input is None else tool_input, **submit)
    await settle(runtime)
    return call


async def test_a_question_nobody_can_be_asked_is_declined_at_once_saying_why(
    asking: Runtime,
) -> None:
    snapshot = await asking.wait(asking.submit("asker", {}))
    assert snapshot.status is CallStatus.COMPLETED
    assert isinstance(snapshot.result, dict)
    assert snapshot.result["action"] == "decline" and snapshot.result["content"] is None
    assert "nobody to ask" in str(snapshot.result["reason"])
    kinds = [entry.kind for entry in snapshot.progress]
    assert ProgressKind.QUESTION in kinds and ProgressKind.ANSWER in kinds
    assert snapshot.question is None


async def test_the_question_shows_on_the_running_call_until_a_person_answers(
    asking: Runtime,
) -> None:
    call = await held_question(asking, {"about": "rain"})
    running = asking.status(call)
    assert running.status is CallStatus.RUNNING
    assert running.question is not None
    assert running.question.message == "Which city's rain?"
    assert running.question.form == FORM and running.question.source == "test"
    other = asking.submit("puppet", {})  # the runtime goes on meanwhile
    await settle(asking)
    assert asking.status(other).status is CallStatus.RUNNING

    assert asking.answer(call, Answer(AnswerAction.ACCEPT, {"city": "Lyon"}))
    assert not asking.answer(call, Answer(AnswerAction.DECLINE))  # one answer only
    done = await asking.wait(call)
    assert done.result == {"action": "accept", "content": {"city": "Lyon"}, "reason": None}
    assert done.question is None
    answered = [e.payload for e in done.progress if e.kind is ProgressKind.ANSWER]
    assert answered == [{"action": "accept", "reason": None}]  # the content is the asker's


async def test_a_hook_that_answers_itself_and_one_that_raises(asking: Runtime) -> None:
    seen: list[Asked] = []

    async def decide(asked: Asked) -> Answer:
        seen.append(asked)
        return Answer(AnswerAction.CANCEL)

    asking.ask_person = decide
    call = asking.submit("asker", {})
    done = await asking.wait(call)
    assert done.result == {"action": "cancel", "content": None, "reason": None}
    assert [(a.call_id, a.tool_name, a.question.message) for a in seen] == [
        (call, "asker", "Which city's weather?")
    ]

    async def broken(asked: Asked) -> Answer:
        raise RuntimeError("no terminal")

    asking.ask_person = broken
    done = await asking.wait(asking.submit("asker", {}))
    assert done.status is CallStatus.COMPLETED
    assert done.result["action"] == "decline"  # type: ignore[index,call-overload]
    assert "no terminal" in str(done.result["reason"])  # type: ignore[index,call-overload]


async def test_a_call_whose_owner_says_nobody_is_there_declines_without_asking_the_hook(
    asking: Runtime,
) -> None:
    """``CallOptions.nobody_to_ask`` (a board's autonomous turn): declined at once with the
    owner's words, the host's hook never consulted; the question still shows in the call's
    progress, answered."""
    seen: list[Asked] = []

    async def decide(asked: Asked) -> Answer:
        seen.append(asked)
        return Answer(AnswerAction.ACCEPT, {"city": "Oslo"})

    asking.ask_person = decide
    alone = CallOptions(nobody_to_ask="nobody to ask: it runs on its own")
    done = await asking.wait(asking.submit("asker", {}, options=alone))
    assert done.result == {
        "action": "decline",
        "content": None,
        "reason": "nobody to ask: it runs on its own",
    }
    assert seen == [] and done.question is None
    kinds = [entry.kind for entry in done.progress]
    assert ProgressKind.QUESTION in kinds and ProgressKind.ANSWER in kinds
    answered = await asking.wait(asking.submit("asker", {}))
    assert answered.result == {"action": "accept", "content": {"city": "Oslo"}, "reason": None}
    assert len(seen) == 1
    with pytest.raises(ValueError, match="nobody_to_ask must not be empty"):
        asking.submit("asker", {}, options=CallOptions(nobody_to_ask=""))
    with pytest.raises(TypeError, match="nobody_to_ask must be a str, got int"):
        asking.submit("asker", {}, options=CallOptions(nobody_to_ask=3))  # type: ignore[arg-type]


async def test_cancelling_a_call_that_waits_for_an_answer_ends_its_wait(
    asking: Runtime,
) -> None:
    call = await held_question(asking)
    assert asking.cancel(call, "changed my mind").cancelled
    await settle(asking)
    snapshot = asking.status(call)
    assert snapshot.status is CallStatus.CANCELLED and snapshot.question is None
    assert not asking.answer(call, Answer(AnswerAction.ACCEPT, {"city": "Lyon"}))


async def test_answers_no_asker_can_read_and_ids_it_does_not_hold_are_refused(
    asking: Runtime,
) -> None:
    call = await held_question(asking, session_id="alice")
    with pytest.raises(TypeError, match=r"agentos\.Answer"):
        asking.answer(call, {"action": "accept"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="decline answer carries no content"):
        asking.answer(call, Answer(AnswerAction.DECLINE, {"city": "x"}))
    with pytest.raises(ValueError, match="not a valid AnswerAction"):
        asking.answer(call, Answer("maybe"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="'when': object is not JSON"):
        asking.answer(call, Answer(AnswerAction.ACCEPT, {"when": object()}))  # type: ignore[dict-item]
    with pytest.raises(UnknownCallError):
        asking.answer("nope", Answer(AnswerAction.CANCEL))
    with pytest.raises(UnknownCallError):
        asking.answer(call, Answer(AnswerAction.CANCEL), session_id="mallory")
    with pytest.raises(TypeError, match="async function"):
        asking.ask_person = "yes"  # type: ignore[assignment]
    assert asking.status(call).question is not None  # still waiting, untouched
    assert asking.answer(call, Answer(AnswerAction.ACCEPT, {"city": "Oslo"}))
    assert (await asking.wait(call)).result["content"] == {"city": "Oslo"}  # type: ignore[index,call-overload]


async def test_a_sync_tool_cannot_ask_and_fails_saying_so(asking: Runtime) -> None:
    snapshot = await asking.wait(asking.submit("sync_asker", {}))
    assert snapshot.status is CallStatus.FAILED
    assert snapshot.error is not None and "ask is for async tools" in snapshot.error.message


async def test_a_question_asked_before_a_flood_of_lines_still_shows(asking: Runtime) -> None:
    asking.ask_person = _held
    release = anyio.Event()

    @tool
    async def flooding(args: Topic, ctx: ToolContext) -> str:
        async with anyio.create_task_group() as group:

            async def ask() -> None:
                await ctx.ask("still there?")

            group.start_soon(ask)
            await anyio.lowlevel.checkpoint()
            for line in range(5_000):
                ctx.log(f"line {line}")
            await release.wait()
            group.cancel_scope.cancel()
        return "ok"

    asking.add_tool(flooding)
    call = asking.submit("flooding", {})
    await settle(asking)
    snapshot = asking.status(call)
    assert snapshot.question is not None and snapshot.question.message == "still there?"
    assert snapshot.progress_dropped > 0  # the question is kept past a flood of lines
    release.set()
    assert (await asking.wait(call)).question is None


async def test_one_call_asks_one_question_at_a_time(asking: Runtime) -> None:
    asking.ask_person = _held

    @tool
    async def twice(args: Topic, ctx: ToolContext) -> str:
        async with anyio.create_task_group() as group:
            group.start_soon(ctx.ask, "first?")
            await anyio.lowlevel.checkpoint()
            try:
                await ctx.ask("second?")
            except UsageError as error:
                return str(error)
            finally:
                group.cancel_scope.cancel()
        return "asked twice"

    asking.add_tool(twice)
    snapshot = await asking.wait(asking.submit("twice", {}))
    assert "ask one at a time" in str(snapshot.result)


async def test_an_accepted_answer_takes_the_forms_defaults_for_what_the_person_left_out(
    asking: Runtime,
) -> None:
    asking.ask_person = _held
    form: JsonObject = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "default": "Paris"},
            "nights": {"type": "integer", "default": 2},
            "pets": {"type": "boolean"},
        },
    }

    @tool
    async def booking(args: Topic, ctx: ToolContext) -> object:
        return (await ctx.ask("Where, and how long?", form=form)).content

    asking.add_tool(booking)
    call = asking.submit("booking", {})
    await settle(asking)
    assert asking.answer(call, Answer(AnswerAction.ACCEPT, {"nights": 5}))
    done = await asking.wait(call)
    assert done.result == {"city": "Paris", "nights": 5}


async def test_a_call_waiting_for_the_persons_answer_is_not_overdue(
    asking: Runtime, clock: ManualClock
) -> None:
    call = await held_question(asking, options=CallOptions(overdue_after=10))
    clock.advance(35)
    await settle(asking)
    assert not asking.status(call).overdue  # the person is slow, not the call
    assert asking.answer(call, Answer(AnswerAction.DECLINE))
    assert not (await asking.wait(call)).overdue


async def test_a_hook_that_answers_what_no_asker_can_read_declines_saying_why(
    asking: Runtime,
) -> None:
    async def junk(asked: Asked) -> Answer:
        return {"action": "accept"}  # type: ignore[return-value]

    asking.ask_person = junk
    done = await asking.wait(asking.submit("asker", {}))
    assert done.status is CallStatus.COMPLETED
    assert isinstance(done.result, dict) and done.result["action"] == "decline"
    assert "asking failed" in str(done.result["reason"])


async def test_a_hook_that_is_cancelled_withdraws_the_question_and_the_call_goes_on(
    asking: Runtime,
) -> None:
    async def gone(asked: Asked) -> Answer:
        raise anyio.get_cancelled_exc_class()()

    asking.ask_person = gone
    done = await asking.wait(asking.submit("asker", {}))
    assert done.status is CallStatus.COMPLETED
    assert isinstance(done.result, dict) and done.result["action"] == "cancel"


async def test_an_answer_that_does_not_fit_the_form_is_refused_naming_the_field(
    asking: Runtime,
) -> None:
    call = await held_question(asking)
    for content, said in (
        ({"town": "Lyon"}, "field 'city' is required"),
        ({"city": "Lyon", "town": "x"}, "the form has no field 'town'"),
        ({"city": 5}, "field 'city': a string is expected, not a number"),
    ):
        with pytest.raises(ValueError, match=said):
            asking.answer(call, Answer(AnswerAction.ACCEPT, content))  # type: ignore[arg-type]
    assert asking.status(call).question is not None  # still asked
    assert asking.answer(call, Answer(AnswerAction.ACCEPT, {"city": "Lyon"}))
    assert (await asking.wait(call)).status is CallStatus.COMPLETED
