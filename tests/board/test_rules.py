"""Seed 004's board rules, exact (issue 24, points 1-11), and the seed's walk-through as one
scenario: scripted models, ``ManualClock``, assertions on requests, the board and the chat
(on wording only where the rule is the wording: 7, 9, 11)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from collections.abc import Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from agentos import AgentConfig
from agentos import CallStatus
from agentos import Host
from agentos import ManualClock
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import Session
from agentos import Tool
from agentos import tool
from agentos.board import Board
from agentos.board import BoardTrigger
from agentos.testing import Puppet
from agentos.testing import PuppetInput
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from tests.board.conftest import asks
from tests.board.conftest import focus
from tests.support.backends import running
from tests.support.scripting import BOARD

pytestmark = pytest.mark.anyio

ANSWER = "Jane and Jack are free at 10; Joe's calendar never answered. Try again?"
LOOKS = ("get_tool_call_status", "cancel_tool_call", "list_running_tool_calls", "new_thread")


def board_of(request: ModelRequest) -> str:
    return "\n".join(focus(request).lines)


def looked(request: ModelRequest, tool_name: str) -> bool:
    """The turn goes round again after the focus node called ``tool_name``."""
    found = focus(request)
    return found.author == "agent" and any(f" {tool_name}(" in c for c in found.calls)


def timer(request: ModelRequest) -> bool:
    return "has run past" in (focus(request).note or "")


@dataclass
class World:
    runtime: Runtime
    host: Host
    puppet: Puppet
    provider: ScriptedProvider
    clock: ManualClock

    async def told(self, words: str, config: AgentConfig = BOARD) -> Session:
        """A new session on this world (a board, unless ``config`` says otherwise), told
        ``words``."""
        session = await self.host.create_session(config)
        session.post(words)
        return session

    async def settled(self, session: Session) -> None:
        await settle(self.runtime)
        with anyio.fail_after(5):
            await session.wait_idle()
        await settle(self.runtime)
        with anyio.fail_after(5):
            await session.wait_idle()

    async def started(self, count: int) -> list[str]:
        with anyio.fail_after(5):
            while len(self.puppet.calls) < count:
                await settle(self.runtime)
                await anyio.lowlevel.checkpoint()
        return list(self.puppet.calls)

    def label(self, call_id: str) -> str:
        return str(self.runtime.status(call_id).tool_input.get("label"))

    def call_of(self, label: str) -> str:
        return next(c for c in self.puppet.calls if self.label(c) == label)


@asynccontextmanager
async def world(
    clock: ManualClock, *rules: Any, tools: tuple[Tool[Any], ...] = ()
) -> AsyncIterator[World]:
    puppet = Puppet()
    provider = ScriptedProvider(*rules)
    async with running(provider, puppet.tool, *tools, clock=clock) as (runtime, host):
        yield World(runtime, host, puppet, provider, clock)


# ---------------------------------------------------------------- 1. order


def test_1_only_a_post_moves_a_thread_last() -> None:
    board = Board()
    first = board.post_user("A")
    work = board.open_turn(first.display_id, BoardTrigger.USER, text="on it")
    board.add_call(work.display_id, "c", "fetch", {}, background=True)
    second = board.post_user("B")
    order = board.threads()
    assert order == [first.display_id, second.display_id]
    board.set_status("c", CallStatus.RUNNING)
    board.settle("c", CallStatus.COMPLETED, "done")
    assert board.threads() == order, "a call settling reorders nothing"
    board.open_turn(work.display_id, BoardTrigger.RESULT, text="Done.")
    assert board.threads() == [second.display_id, first.display_id], "an agent turn does"


# ---------------------------------------------------------------- 2. the pointer


async def test_2_a_pointer_line_only_when_the_focus_is_not_drawn_last(clock: ManualClock) -> None:
    async with world(clock, (lambda r: True, lambda r: text("ok"))) as w:
        session = await w.told("first")
        await w.settled(session)
        session.post("second")
        await w.settled(session)
        session.post("back to the first", reply_to=2)
        await w.settled(session)
    plain, _, replied = w.provider.requests
    assert not any(line.startswith(">>") for line in focus(plain).lines), "#1 is drawn last"
    assert focus(plain).node == 1
    lines = focus(replied).lines
    assert focus(replied).node == 5
    if lines[-1].startswith(">>"):  # #5 is drawn last under #2: nothing to point at
        pytest.fail(f"a pointer for a focus drawn last: {lines[-1]}")
    board = session.board
    assert board is not None
    rendered = board.render(focus=1).text.splitlines()
    assert [line for line in rendered if line.startswith(">>")] == [rendered[-1]]
    assert re.search(r"#1\b", rendered[-1]), "the focus not drawn last is named, once"


# ---------------------------------------------------------------- 3. instructions


@pytest.mark.parametrize(
    ("capabilities", "offered"),
    [
        (["get_tool_call_status", "cancel_tool_call"], {"inspect", "stop"}),
        (["get_tool_call_status"], {"inspect"}),
        (["cancel_tool_call"], {"stop"}),
        ([], set()),
    ],
)
async def test_3_a_pending_call_offers_only_what_the_agent_can_do(
    clock: ManualClock, capabilities: list[str], offered: set[str]
) -> None:
    config = AgentConfig(context_view="board", capabilities=capabilities)
    async with world(
        clock,
        (asks("start"), lambda r: tool_calls(("puppet", {"label": "x"}))),
        (lambda r: True, lambda r: text("ok")),
    ) as w:
        session = await w.told("start", config)
        await w.started(1)
        await w.settled(session)
        session.post("and?")
        await w.settled(session)
    request = w.provider.requests[-1]
    (pending,) = [line for line in focus(request).lines if " as id " in line]
    assert ("inspect it with get_tool_call_status" in pending) == ("inspect" in offered)
    assert ("stop it with cancel_tool_call" in pending) == ("stop" in offered)
    assert pending.endswith("this line will be replaced by its outcome")
    for name in ("get_tool_call_status", "cancel_tool_call"):
        assert (name in request.system) == (name in capabilities), name


# ---------------------------------------------------------------- 4. references


async def test_4_a_follow_up_states_each_call_and_a_settled_ones_result(clock: ManualClock) -> None:
    async with world(
        clock,
        (
            asks("start"),
            lambda r: tool_calls(("puppet", {"label": "a"}), ("puppet", {"label": "b"})),
        ),
        (lambda r: True, lambda r: text("ok")),
    ) as w:
        session = await w.told("start")
        first, _ = await w.started(2)
        await w.settled(session)
        w.puppet.complete(first, "free 9-12")
        await w.settled(session)
        session.post("how is it going?", reply_to=2)
        await w.settled(session)
    follow = focus(w.provider.requests[-1])
    assert follow.text == "how is it going?"
    assert follow.references is not None
    assert "#3 puppet: completed 'free 9-12'" in follow.references
    assert "#4 puppet: running" in follow.references


# ---------------------------------------------------------------- 5. answered


def test_5_a_question_is_answered_by_the_last_word_its_result_prompts() -> None:
    """Only the tail is rewritten: the call's settling redraws its own node and what follows
    it, never the question above (its marker included), so the prefix a prompt cache holds
    stays byte-identical; the result turn's last word, below, answers the question."""
    board = Board()
    board.post_user("an older thread")
    ask = board.post_user("when?")
    work = board.open_turn(ask.display_id, BoardTrigger.USER, text="Looking.")
    call = board.add_call(work.display_id, "c", "fetch", {}, background=True)
    assert not board.answered(ask.display_id)
    before = board.render().text
    assert ".. #2 user 'when?'" in before
    board.settle("c", CallStatus.COMPLETED, "at 10")
    after = board.render().text
    above = before.rindex("\n", 0, before.index(f"#{work.display_id} agent")) + 1
    assert after[:above] == before[:above], "nothing above the call's node moved"
    assert f"call #{call.display_id} fetch() completed: 'at 10'" in after
    assert not board.answered(ask.display_id), "'Looking.' started work: no answer"
    board.open_turn(work.display_id, BoardTrigger.TIMER, text="Still looking.")
    assert not board.answered(ask.display_id), "a timer's turn speaks to nobody"
    board.open_turn(work.display_id, BoardTrigger.RESULT, text="At 10.")
    assert board.answered(ask.display_id)
    assert "ok #2 user 'when?'" in board.render().text


# ---------------------------------------------------------------- 6. own cancels


async def test_6_the_models_own_cancel_grants_no_result_turn(clock: ManualClock) -> None:
    """The call of thread #1 is stopped from thread #4: the cancel's answer is the news (no
    result turn), and #4 stays last, where something was posted (point 1)."""
    w: World

    def cancel(request: ModelRequest) -> ModelResponse:
        (call_id,) = list(w.puppet.calls)
        return tool_calls(("cancel_tool_call", {"tool_call_id": call_id}))

    async with world(
        clock,
        (asks("start"), lambda r: tool_calls(("puppet", {"label": "x"}), say="Started.")),
        (asks("stop"), cancel),
        (lambda r: looked(r, "cancel_tool_call"), lambda r: text("Stopped it.")),
        (lambda r: True, lambda r: text("an extra turn")),
    ) as w:
        session = await w.told("start", AgentConfig(context_view="board", retry_budget=3))
        (call_id,) = await w.started(1)
        await w.settled(session)
        session.post("stop it")
        await w.settled(session)
        assert w.runtime.status(call_id).status is CallStatus.CANCELLED
        await w.settled(session)
    assert len(w.provider.requests) == 3, "start, cancel, its answer read: nothing more"
    board = session.board
    assert board is not None
    assert board.threads() == [1, 4], "a call ended moves no thread"
    said = [e.text for e in session.chat if e.role == "agent" and e.text]
    assert "an extra turn" not in said


# ---------------------------------------------------------------- 7. retries


async def test_7_the_budget_counts_cancels_of_the_same_tool_on_the_branch(
    clock: ManualClock,
) -> None:
    @tool
    async def other(args: PuppetInput) -> str:
        """Another slow tool."""
        await anyio.sleep_forever()
        return args.label

    def cancel(label: str) -> Callable[[ModelRequest], ModelResponse]:
        return lambda r: tool_calls(("cancel_tool_call", {"tool_call_id": ids[label]}))

    ids: dict[str, str] = {}
    async with world(
        clock,
        (asks("go"), lambda r: tool_calls(("other", {"label": "o"}))),
        (asks("stop other"), cancel("o")),
        (
            lambda r: looked(r, "cancel_tool_call") and len(ids) == 1,
            lambda r: tool_calls(("puppet", {"label": "p1"})),
        ),
        (asks("stop puppet"), cancel("p1")),
        (
            lambda r: looked(r, "cancel_tool_call") and len(ids) == 2,
            lambda r: tool_calls(("puppet", {"label": "p2"})),
        ),
        (asks("stop again"), cancel("p2")),
        (lambda r: True, lambda r: text("")),
        tools=(other,),
    ) as w:
        session = await w.told("go", AgentConfig(context_view="board", retry_budget=2))
        await w.settled(session)
        board = session.board
        assert board is not None
        (ids["o"],) = [
            c.call_id for n in board.nodes.values() for c in n.calls if c.tool_name == "other"
        ]
        session.post("stop other", reply_to=2)
        await w.started(1)
        await w.settled(session)
        ids["p1"] = w.call_of("p1")
        p1_node = node_of_call(session, ids["p1"])
        session.post("stop puppet", reply_to=p1_node)
        await w.started(2)
        await w.settled(session)
        ids["p2"] = w.call_of("p2")
        session.post("stop again", reply_to=node_of_call(session, ids["p2"]))
        await w.settled(session)
    answers = cancel_answers(session)
    assert "Out of retries" not in answers[ids["o"]]
    assert "Out of retries" not in answers[ids["p1"]], "stopping other work spent nothing"
    out = answers[ids["p2"]]
    assert "Out of retries: 2 attempts at puppet" in out and "new_thread" in out


def node_of_call(session: Session, call_id: str) -> int:
    board = session.board
    assert board is not None
    return board.node_of_call(call_id).display_id


def cancel_answers(session: Session) -> dict[str, str]:
    board = session.board
    assert board is not None
    return {
        str(call.tool_input["tool_call_id"]): call.outcome or ""
        for node in board.nodes.values()
        for call in node.calls
        if call.tool_name == "cancel_tool_call"
    }


# ---------------------------------------------------------------- 8. new_thread


async def test_8_new_thread_ends_the_turn_and_is_shown(clock: ManualClock) -> None:
    async with world(
        clock,
        (asks("help"), lambda r: tool_calls(("new_thread", {"text": "What should I do?"}))),
        (lambda r: True, lambda r: text("a further request")),
    ) as w:
        session = await w.told("help me")
        await w.settled(session)
    assert len(w.provider.requests) == 1
    said = [e.text for e in session.chat if e.role == "agent" and e.text]
    assert said == ["What should I do?"]


# ---------------------------------------------------------------- 9. the overdue note


@pytest.mark.parametrize(
    ("given", "config_default", "said"),
    [(7, None, "7 s you expected"), (None, 30, "30 s (the default")],
)
async def test_9_the_overdue_note_names_the_call_and_its_interval(
    clock: ManualClock, given: float | None, config_default: float | None, said: str
) -> None:
    arguments: dict[str, object] = {"label": "x"}
    if given is not None:
        arguments["expected_seconds"] = given
    async with world(
        clock,
        (asks("start"), lambda r: tool_calls(("puppet", arguments))),
        (lambda r: True, lambda r: text("")),
    ) as w:
        config = AgentConfig(context_view="board", call_overdue_after=config_default)
        session = await w.told("start", config)
        await w.started(1)
        await w.settled(session)
        w.clock.advance(given or config_default or 0)
        await w.settled(session)
    (timed,) = [r for r in w.provider.requests if timer(r)]
    note = focus(timed).note
    assert note is not None and "call #3 (puppet)" in note and said in note, note


# ---------------------------------------------------------------- 10. expected interval


async def test_10_background_tools_require_an_estimate_the_tool_never_sees(
    clock: ManualClock,
) -> None:
    async with world(
        clock,
        (asks("start"), lambda r: tool_calls(("puppet", {"label": "x", "expected_seconds": 9}))),
        (lambda r: True, lambda r: text("")),
    ) as w:
        schema_before = dict(w.puppet.tool.input_schema)
        session = await w.told("start")
        (call_id,) = await w.started(1)
        await w.settled(session)
        seen = w.runtime.status(call_id).tool_input
    (request,) = w.provider.requests
    definitions = {d["name"]: d["input_schema"] for d in request.tools}
    assert "expected_seconds" in definitions["puppet"]["required"]
    assert definitions["puppet"]["properties"]["expected_seconds"]["type"] == "number"
    for name in LOOKS:
        if name in definitions:
            assert "expected_seconds" not in definitions[name].get("properties", {}), name
    assert "expected_seconds" not in seen
    assert w.puppet.tool.input_schema == schema_before, "the tool's own schema is untouched"


# ---------------------------------------------------------------- 11. synchronous first


async def test_11_a_background_call_asked_beside_a_look_waits_for_the_answer(
    clock: ManualClock,
) -> None:
    w: World

    def look_and_start(request: ModelRequest) -> ModelResponse:
        (call_id,) = list(w.puppet.calls)
        return tool_calls(
            ("get_tool_call_status", {"tool_call_id": call_id}), ("puppet", {"label": "second"})
        )

    async with world(
        clock,
        (asks("start"), lambda r: tool_calls(("puppet", {"label": "first"}))),
        (asks("and"), look_and_start),
        (
            lambda r: looked(r, "get_tool_call_status") and len(w.puppet.calls) == 1,
            lambda r: tool_calls(("puppet", {"label": "second"})),
        ),
        (lambda r: True, lambda r: text("")),
    ) as w:
        session = await w.told("start")
        await w.started(1)
        await w.settled(session)
        session.post("and a second one")
        await w.started(2)
        await w.settled(session)
        labels = [w.label(c) for c in w.puppet.calls]
    again = focus(w.provider.requests[2])
    (refused,) = [c for c in again.calls if " puppet(" in c]
    assert "not started" in refused and "get_tool_call_status" in refused
    assert labels == ["first", "second"]


# ---------------------------------------------------------------- the seed's walk-through


async def test_the_seeds_three_calendars_one_stuck(clock: ManualClock) -> None:
    """Three lookups, Joe's stuck; a question answered while they run; Joe goes overdue, is
    inspected and left, re-armed, inspected and cancelled by the model (out of retries); the
    answer from the other two goes out in a new thread. Seven requests, and the chat shows
    what seed 004's visibility table says."""
    kinds: list[str] = []
    looks = 0
    w: World

    def answer(kind: str, response: ModelResponse) -> Callable[[ModelRequest], ModelResponse]:
        def said(request: ModelRequest) -> ModelResponse:
            kinds.append(kind)
            return response

        return said

    def inspect(request: ModelRequest) -> ModelResponse:
        nonlocal looks
        looks += 1
        kinds.append("timer")
        return tool_calls(("get_tool_call_status", {"tool_call_id": w.call_of("Joe")}))

    def decide(request: ModelRequest) -> ModelResponse:
        kinds.append("round")
        if looks == 1:
            return text("Joe's is still moving; leaving it.")
        return tool_calls(("cancel_tool_call", {"tool_call_id": w.call_of("Joe")}))

    calendars = [
        ("puppet", {"label": who, "expected_seconds": 10}) for who in ("Jane", "Jack", "Joe")
    ]
    async with world(
        clock,
        (asks("meet"), answer("user", tool_calls(*calendars, say="Checking all three at once."))),
        (asks("2+2"), answer("user", text("4."))),
        (timer, inspect),
        (lambda r: looked(r, "get_tool_call_status"), decide),
        (
            lambda r: looked(r, "cancel_tool_call"),
            answer(
                "round",
                tool_calls(
                    (
                        "new_thread",
                        {"text": ANSWER},
                    )
                ),
            ),
        ),
        (lambda r: True, answer("unexpected", text("?"))),
    ) as w:
        session = await w.told(
            "when can Jane, Jack and Joe meet?", AgentConfig(context_view="board", retry_budget=1)
        )
        await w.started(3)
        await w.settled(session)
        session.post("while that runs: 2+2?")
        await w.settled(session)
        w.puppet.complete(w.call_of("Jane"), "free 9-12")
        w.puppet.complete(w.call_of("Jack"), "free 10-14")
        await w.settled(session)
        assert kinds == ["user", "user"], "two of three landed: no turn"
        w.clock.advance(10)
        await w.settled(session)
        w.clock.advance(10)  # left running: the timer was re-armed for twice the interval
        await w.settled(session)
        assert w.runtime.status(w.call_of("Joe")).status is CallStatus.RUNNING
        w.clock.advance(10)
        await w.settled(session)
        assert w.runtime.status(w.call_of("Joe")).status is CallStatus.CANCELLED
        await w.settled(session)
        w.clock.advance(60)
        await w.settled(session)
    assert kinds == ["user", "user", "timer", "round", "timer", "round", "round"]
    chat = session.chat
    assert [(e.role, e.text) for e in chat if e.text] == [
        ("user", "when can Jane, Jack and Joe meet?"),
        ("agent", "Checking all three at once."),
        ("user", "while that runs: 2+2?"),
        ("agent", "4."),
        ("agent", ANSWER),
    ]
    widgets = [call for entry in chat for call in entry.calls]
    assert [w.status for w in widgets] == [
        CallStatus.COMPLETED,
        CallStatus.COMPLETED,
        CallStatus.CANCELLED,
    ]
