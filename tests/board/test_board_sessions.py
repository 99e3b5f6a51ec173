"""Board sessions (seed 004, issue 12): scenarios with scripted models, asserting on data.

The model reads the board in one user message; its rules here key on the
turn's note (why the turn happens) and on the user's words, and the tests
check requests, the board's calls and the person's chat, never wording.
"""

from __future__ import annotations

import functools
import json
import re
import sqlite3
import time
from collections.abc import AsyncIterator
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentos import AgentConfig
from agentos import CallStatus
from agentos import Completion
from agentos import Host
from agentos import ManualClock
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import Session
from agentos import SqliteStore
from agentos.board import Board
from agentos.board import BoardCall
from agentos.stores import StoredSession
from agentos.stores import StoredToken
from agentos.testing import Puppet
from agentos.testing import blocks_of
from agentos.testing import board_turn
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from tests.board.conftest import asks
from tests.board.conftest import board_text
from tests.support.backends import hosted
from tests.support.backends import running
from tests.support.scripting import BOARD
from tests.support.scripting import DEFER
from tests.support.scripting import until

pytestmark = pytest.mark.anyio


def turn_note(request: ModelRequest) -> str:
    """What the ``>>`` line says besides naming the node ("" when there is none)."""
    turn = board_turn(request)
    return "" if turn is None or turn.note is None else turn.note


LOOK = re.compile(
    r"call #\d+ (?:get_tool_call_status|cancel_tool_call|list_running_tool_calls|new_thread)\("
)


def overdue(request: ModelRequest) -> bool:
    """The turn is a timer's: a call ran past its expected interval."""
    return "has run" in turn_note(request)


def results_in(request: ModelRequest, node: int | None = None) -> bool:
    """The turn is for an agent node (``node``, if given) whose background calls have all
    ended: every one's outcome is on the board, and no ``>>`` note."""
    turn = board_turn(request)
    if turn is None or turn.author != "agent" or turn.note is not None:
        return False
    if node is not None and turn.node != node:
        return False
    background = [c for c in turn.calls if not LOOK.match(c)]
    return bool(background) and not any(" as id " in c for c in background)


def assert_board_requests(provider: ScriptedProvider) -> None:
    """Every request is the board in the user role, with no tool blocks."""
    for request in provider.requests:
        (message,) = request.messages
        assert message["role"] == "user"
        kinds = {block.get("type") for block in blocks_of(message)}
        assert kinds == {"text"}, kinds
        assert "board" in request.system.lower()


def started(puppet: Puppet, count: int) -> bool:
    return len(puppet.calls) >= count


async def settled(session: Session, runtime: Runtime) -> None:
    await settle(runtime)
    with anyio.fail_after(5):
        await session.wait_idle()


async def settled_on_a_call(session: Session, runtime: Runtime, puppet: Puppet) -> None:
    """Once the turn has started a puppet call, until the session is idle again."""
    await until(lambda: bool(puppet.calls), runtime)
    await settled(session, runtime)


async def test_three_calendars_one_stuck_answered_while_they_run(clock: ManualClock) -> None:
    puppet = Puppet()
    calls: dict[str, str] = {}

    def lookups(request: ModelRequest) -> ModelResponse:
        return tool_calls(
            *(("puppet", {"label": who}) for who in ("Jane", "Jack", "Joe")),
            say="Checking all three at once.",
        )

    def cancel_joe(request: ModelRequest) -> ModelResponse:
        return tool_calls(("cancel_tool_call", {"tool_call_id": calls["Joe"], "reason": "stuck"}))

    provider = ScriptedProvider(
        (asks("meet"), lookups),
        (asks("2+2"), lambda r: text("4.")),
        (asks("cancel Joe"), cancel_joe),
        (results_in, lambda r: text("Jane and Jack are free at 10.")),
        (lambda r: "cancel_tool_call" in board_text(r), lambda r: text("Cancelled Joe's lookup.")),
        (lambda r: True, lambda r: text("Noted.")),
    )
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(BOARD)
        session.post("when can Jane, Jack and Joe meet?")
        await until(lambda: len(puppet.calls) == 3, runtime)
        await settled(session, runtime)
        for call_id in puppet.calls:
            calls[str(runtime.status(call_id).tool_input["label"])] = call_id
        session.post("while that runs: 2+2?")
        await settled(session, runtime)
        puppet.complete(calls["Jane"], "free 9-12")
        puppet.complete(calls["Jack"], "free 10-14")
        await settled(session, runtime)
        asked = len(provider.requests)
        assert asked == 2, "two of three landed: the node is not done, no turn"
        session.post("cancel Joe, he is stuck")
        await settled(session, runtime)
        await until(lambda: runtime.status(calls["Joe"]).status is CallStatus.CANCELLED, runtime)
        await settled(session, runtime)
    assert_board_requests(provider)
    board = session.board
    assert board is not None
    (lookup_node,) = [node for node in board.nodes.values() if len(node.calls) == 3]
    assert [c.status for c in lookup_node.calls] == [
        CallStatus.COMPLETED,
        CallStatus.COMPLETED,
        CallStatus.CANCELLED,
    ]
    chat = session.chat
    said = [(entry.role, entry.text) for entry in chat if entry.text]
    assert ("agent", "Checking all three at once.") in said
    assert ("agent", "4.") in said
    assert ("agent", "Cancelled Joe's lookup.") in said
    assert not any("free at 10" in text for _, text in said), "its own cancel: no result turn"
    widgets = [call for entry in chat for call in entry.calls]
    assert {w.tool_name for w in widgets} == {"puppet"}, "a look is never a widget"
    assert len(widgets) == 3


async def test_overdue_inspect_leave_running_then_cancel(clock: ManualClock) -> None:
    puppet = Puppet()
    looks: list[int] = []

    def inspect(request: ModelRequest) -> ModelResponse:
        call_id = next(iter(puppet.calls))
        return tool_calls(("get_tool_call_status", {"tool_call_id": call_id}))

    def decide(request: ModelRequest) -> ModelResponse:
        looks.append(1)
        if len(looks) == 1:
            return text("It is moving; leaving it running.")
        if len(looks) > 2:
            return text("")
        call_id = next(iter(puppet.calls))
        return tool_calls(("cancel_tool_call", {"tool_call_id": call_id, "reason": "stalled"}))

    provider = ScriptedProvider(
        (asks("report"), lambda r: tool_calls(("puppet", {"label": "report"}), say="Started.")),
        (overdue, inspect),
        (lambda r: True, decide),
    )
    config = AgentConfig(context_view="board", call_overdue_after=30)
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(config)
        session.post("write the report")
        await settled_on_a_call(session, runtime, puppet)
        assert len(provider.requests) == 1
        clock.advance(30)
        await until(lambda: len(looks) == 1, runtime)
        await settled(session, runtime)
        (call_id,) = puppet.calls
        assert runtime.status(call_id).status is CallStatus.RUNNING, "left running"
        clock.advance(60)  # re-armed for twice the interval: the question comes back
        await until(lambda: runtime.status(call_id).status is CallStatus.CANCELLED, runtime)
        await settled(session, runtime)
        asked = len(provider.requests)
        clock.advance(90)  # cancelled: disarmed, no more overdue turns
        await settled(session, runtime)
        assert len(provider.requests) == asked
    assert_board_requests(provider)
    chat = session.chat
    assert [e.text for e in chat if e.role == "agent" and e.text] == ["Started."], (
        "timer turns say nothing to the person"
    )


async def test_out_of_retries_opens_a_new_thread_the_user_sees(clock: ManualClock) -> None:
    puppet = Puppet()

    def cancel(request: ModelRequest) -> ModelResponse:
        call_id = next(iter(puppet.calls))
        return tool_calls(("cancel_tool_call", {"tool_call_id": call_id, "reason": "stuck"}))

    opened: list[int] = []

    def ask_the_user(request: ModelRequest) -> ModelResponse:
        opened.append(1)
        return tool_calls(("new_thread", {"text": "It keeps failing. How to proceed?"}))

    provider = ScriptedProvider(
        (asks("fetch"), lambda r: tool_calls(("puppet", {"label": "x"}), say="Fetching.")),
        (asks("stop"), cancel),
        (lambda r: "Out of retries" in board_text(r) and not opened, ask_the_user),
        (lambda r: True, lambda r: text("")),
    )
    config = AgentConfig(context_view="board", retry_budget=1)
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(config)
        session.post("fetch it")
        await settled_on_a_call(session, runtime, puppet)
        session.post("stop that")
        await until(lambda: bool(opened), runtime)
        await settled(session, runtime)
    board = session.board
    assert board is not None
    roots = [node for node in board.nodes.values() if node.parent is None]
    assert [node.new_thread for node in roots] == [False, False, True]
    shown = [entry.text for entry in session.chat if entry.role == "agent" and entry.text]
    assert "It keeps failing. How to proceed?" in shown


class HeldModel:
    """A model that answers "ok" once ``release`` is set."""

    name = "held"

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        await self.release.wait()
        return text("ok")


async def test_posts_from_many_threads_at_once_get_distinct_consecutive_ids(
    clock: ManualClock,
) -> None:
    """Display ids are taken when a post arrives on the loop, one counter for nodes and
    calls: eight threads posting at once (while a turn is out) get eight distinct,
    consecutive ids, and each post is its own thread's root."""
    provider = HeldModel()
    async with running(provider, clock=clock) as (runtime, host):
        session = await host.create_session(BOARD)
        session.post("first")
        await until(lambda: bool(provider.requests), runtime)
        async with anyio.create_task_group() as group:
            for number in range(8):
                words = f"post {number}"
                post = functools.partial(session.post_threadsafe, words)
                group.start_soon(anyio.to_thread.run_sync, post)
        board = session.board
        assert board is not None
        posted = [n for n in board.nodes.values() if n.text.startswith("post ")]
        assert sorted(n.text for n in posted) == [f"post {number}" for number in range(8)]
        ids = [n.display_id for n in posted]
        assert sorted(ids) == list(range(2, 10)), "distinct and consecutive"
        assert all(n.parent is None for n in posted)
        provider.release.set()
        await settled(session, runtime)
        assert session.errors == []
        assert len(provider.requests) == 9, "a turn for each post"
        assert {n.display_id for n in posted} <= set(board.nodes), "ids never change"


async def test_a_reply_under_a_node_and_an_unknown_node(clock: ManualClock) -> None:
    provider = ScriptedProvider((lambda r: True, lambda r: text("ok")))
    async with running(provider, clock=clock) as (runtime, host):
        session = await host.create_session(BOARD)
        session.post("first")
        await settled(session, runtime)
        board = session.board
        assert board is not None
        first = min(board.nodes)
        session.post("about that", reply_to=first)
        await settled(session, runtime)
        with pytest.raises(KeyError, match="no node #999"):
            session.post("lost", reply_to=999)
        transcript = await host.create_session(AgentConfig())
        with pytest.raises(Exception, match="board sessions"):
            transcript.post("x", reply_to=1)
    reply = board.nodes[max(n for n in board.nodes if board.nodes[n].author == "user")]
    assert reply.parent == first
    assert len(provider.requests) == 2


async def test_a_retry_budget_spent_on_one_lookup_leaves_its_siblings_theirs(
    clock: ManualClock,
) -> None:
    """Three lookups side by side; one is killed and restarted (the restart asked in the step
    after the kill), then killed again: its branch is out of retries, while a sibling killed
    once is not."""
    puppet = Puppet()

    def label_of(display_id: int, session: Session) -> str:
        board = session.board
        assert board is not None
        for node in board.nodes.values():
            for call in node.calls:
                if call.display_id == display_id:
                    return str(call.tool_input.get("label"))
        raise AssertionError(display_id)

    holder: list[Session] = []
    runtimes: list[Runtime] = []

    def call_of(label: str) -> str:
        status = runtimes[0].status
        return next(c for c in puppet.calls if status(c).tool_input.get("label") == label)

    def overdue_turn(request: ModelRequest) -> ModelResponse:
        display_id = int(turn_note(request).split("call #", 1)[1].split(" ", 1)[0])
        label = label_of(display_id, holder[0])
        if label == "a":
            return tool_calls(("cancel_tool_call", {"tool_call_id": call_of("a"), "reason": "x"}))
        if label in ("a2", "b"):
            return tool_calls(("cancel_tool_call", {"tool_call_id": call_of(label)}))
        return text("")

    def a_was_cancelled(request: ModelRequest) -> bool:
        turn = board_turn(request)
        killed = f'cancel_tool_call(tool_call_id="{call_of("a")}"' if puppet.calls else "-"
        return turn is not None and len(puppet.calls) == 3 and any(killed in c for c in turn.calls)

    provider = ScriptedProvider(
        (
            asks("look up"),
            lambda r: tool_calls(*(("puppet", {"label": x}) for x in "abc"), say="On it."),
        ),
        (overdue, overdue_turn),
        (a_was_cancelled, lambda r: tool_calls(("puppet", {"label": "a2"}))),  # the next step
        (lambda r: True, lambda r: text("")),
    )
    config = AgentConfig(context_view="board", call_overdue_after=10, retry_budget=2)
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(config)
        holder.append(session)
        runtimes.append(runtime)
        session.post("look up a, b and c")
        await until(lambda: len(puppet.calls) == 3, runtime)
        await settled(session, runtime)
        clock.advance(10)
        await until(lambda: len(puppet.calls) == 4, runtime)  # a2 started after a's kill
        await settled(session, runtime)
        clock.advance(10)
        await until(lambda: runtime.status(call_of("a2")).status is CallStatus.CANCELLED, runtime)
        await settled(session, runtime)
        cancels = {
            str(call.tool_input["tool_call_id"]): call.outcome or ""
            for call in calls_of(session, "cancel_tool_call")
        }
        ids = {label: call_of(label) for label in ("a", "a2", "b")}
    assert set(cancels) == set(ids.values())
    assert "Out of retries" in cancels[ids["a2"]]
    assert "Out of retries" not in cancels[ids["a"]]
    assert "Out of retries" not in cancels[ids["b"]], "a sibling's budget is its own"


async def test_a_transcript_session_has_the_same_chat_every_entry_shown(
    clock: ManualClock,
) -> None:
    puppet = Puppet()

    def first(request: ModelRequest) -> bool:
        return len(request.messages) == 1

    provider = ScriptedProvider(
        (first, lambda r: tool_calls(("puppet", {"label": "x"}), say="On it.")),
        (lambda r: True, lambda r: text("Done.")),
    )
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(AgentConfig())
        session.post("hi")
        await until(lambda: bool(puppet.calls), runtime)
        puppet.complete(next(iter(puppet.calls)), "ok")
        await settled(session, runtime)
        chat = session.chat
    assert [(e.role, e.text) for e in chat] == [
        ("user", "hi"),
        ("agent", "On it."),
        ("agent", "Done."),
    ]
    (widget,) = chat[1].calls
    assert (widget.tool_name, widget.status) == ("puppet", CallStatus.COMPLETED)
    assert session.board is None


async def test_a_thread_out_of_autonomous_turns_waits_for_the_user(clock: ManualClock) -> None:
    """A model that starts work on every result gets ``autonomous_turns`` turns without
    the user; then the session rests (``wait_settled`` returns) until the user posts."""
    puppet = Puppet()
    provider = ScriptedProvider((lambda r: True, lambda r: tool_calls(("puppet", {}))))
    config = AgentConfig(context_view="board", autonomous_turns=2)
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(config)
        session.post("go")
        for done in range(3):
            await until(functools.partial(started, puppet, done + 1), runtime)
            await settled(session, runtime)
            puppet.complete(list(puppet.calls)[done], "ok")
        with anyio.fail_after(5):
            await session.wait_settled()
        assert len(provider.requests) == 3, "the user's turn and two of its own"
        session.post("again")
        await until(lambda: len(provider.requests) == 4, runtime)


async def test_what_the_model_asks_wrongly_is_answered_and_never_loops(clock: ManualClock) -> None:
    """Review findings: a refused tool, a capability the agent lacks, a call without a name
    or id, an empty new_thread: each is answered on the board, the session never crashes,
    and a model that keeps asking wrongly gets at most ``max_steps_per_turn`` requests."""
    bad: list[dict[str, object]] = [
        {"type": "tool_use", "id": "t1", "name": "nope", "input": {}},
        {"type": "tool_use", "id": "t2", "name": "get_tool_call_status", "input": {}},
        {"type": "tool_use", "name": "puppet", "input": "not an object"},
        {"type": "tool_use", "id": 7, "input": {}},
        {"type": "tool_use", "id": "t5", "name": "new_thread", "input": {}},
    ]
    provider = ScriptedProvider((lambda r: True, lambda r: ModelResponse(bad, "tool_use")))
    config = AgentConfig(
        context_view="board", tools=["puppet"], capabilities=[], max_steps_per_turn=3
    )
    puppet = Puppet()
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(config)
        session.post("go")
        await settled_on_a_call(session, runtime, puppet)
        with pytest.raises(TypeError, match="an int"):
            session.post("x", reply_to=True)
    assert session.errors == []
    assert len(provider.requests) == 3
    board = session.board
    assert board is not None
    first = next(node for node in board.nodes.values() if node.calls)
    outcomes = [(call.tool_name, call.status, call.outcome) for call in first.calls]
    statuses = [o[1] for o in outcomes]
    assert statuses[:2] == statuses[3:] == [CallStatus.FAILED, CallStatus.FAILED], outcomes
    assert statuses[2] in (CallStatus.PENDING, CallStatus.RUNNING), "the good call still starts"
    assert [o[0] for o in outcomes] == ["nope", "get_tool_call_status", "puppet", "", "new_thread"]


async def test_two_cancels_side_by_side_spend_two_budgets(clock: ManualClock) -> None:
    """Review finding: cancelling two lookups in one answer spends each lookup's own branch,
    not one budget twice."""
    puppet = Puppet()

    def cancel_two(request: ModelRequest) -> ModelResponse:
        first, _, third = list(puppet.calls)
        return tool_calls(
            ("cancel_tool_call", {"tool_call_id": first}),
            ("cancel_tool_call", {"tool_call_id": third}),
        )

    provider = ScriptedProvider(
        (asks("look"), lambda r: tool_calls(*(("puppet", {"label": x}) for x in "abc"))),
        (asks("cancel"), cancel_two),
        (lambda r: True, lambda r: text("")),
    )
    config = AgentConfig(context_view="board", retry_budget=2)
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(config)
        session.post("look up a, b and c")
        await until(lambda: len(puppet.calls) == 3, runtime)
        await settled(session, runtime)
        session.post("cancel two of them")
        await until(lambda: len(provider.requests) >= 3, runtime)
        await settled(session, runtime)
    said = [call.outcome or "" for call in calls_of(session, "cancel_tool_call")]
    assert len(said) == 2
    assert not any("Out of retries" in words for words in said), said


async def test_a_board_session_outlives_its_process(clock: ManualClock, path: Path) -> None:
    """The store keeps the board whole; resumed, a call that was running reads as orphaned
    and the talk goes on with the next display ids."""
    puppet = Puppet()
    provider = ScriptedProvider(
        (asks("start"), lambda r: tool_calls(("puppet", {"label": "x"}), say="Started.")),
        (lambda r: True, lambda r: text("Carrying on.")),
    )
    async with hosted(path, provider, puppet.tool, clock=clock) as (_, runtime, host):
        session = await host.create_session(BOARD, session_id="b")
        session.post("start the work")
        await settled_on_a_call(session, runtime, puppet)
        before = session.board
        assert before is not None
        drawn = before.render().text
    async with hosted(path, provider, puppet.tool, clock=clock) as (_, runtime, host):
        resumed = await host.resume("b")
        board = resumed.board
        assert board is not None
        (call,) = [c for node in board.nodes.values() for c in node.calls]
        assert call.status is CallStatus.ORPHANED
        assert await host.catch_up("b", "(resumed)") is False, "the board shows it: no nudge"
        first, again = drawn.splitlines()[0], board.render().text.splitlines()[0]
        assert first == again, "its call's end leaves the question above it as drawn"
        assert first.startswith(".. #1 user"), "no last word answered it"
        resumed.post("and now?")
        await settled(resumed, runtime)
    assert max(board.nodes) == 5, "ids go on from the stored board"
    assert [e.text for e in resumed.chat if e.role == "agent" and e.text] == [
        "Started.",
        "Carrying on.",
    ]


async def test_the_board_is_its_own_record_in_the_store_and_old_files_move_it_there(
    clock: ManualClock, path: Path
) -> None:
    """A board session stores its board beside its row, not as a fake ``board`` message;
    a file written before that (the board as a history message) is migrated on open."""
    provider = ScriptedProvider((lambda r: True, lambda r: text("Noted.")))
    async with hosted(path, provider, clock=clock) as (store, runtime, host):
        session = await host.create_session(BOARD, session_id="b")
        session.post("remember this")
        await settled(session, runtime)
        stored = await store.load_session("b")
        assert stored is not None and stored.history == () and stored.board is not None
        odd = json.loads('{"role": "user", "content": "x", "n": NaN}')  # json.dumps writes NaN
        await store.create_session(StoredSession("t", {}, "idle", 1.0, 1.0, history=(odd,)))
        drawn = Board.from_json(stored.board).render().text
        assert "remember this" in drawn and "Noted." in drawn
    with sqlite3.connect(path) as db:  # as a file of schema 3 held it
        (board,) = db.execute("SELECT board FROM sessions WHERE session_id = 'b'").fetchone()
        message = {"role": "board", "content": [{"type": "board", "board": json.loads(board)}]}
        db.execute("INSERT INTO messages VALUES ('b', 0, ?)", (json.dumps(message),))
        db.execute("ALTER TABLE sessions DROP COLUMN board")
        db.execute("ALTER TABLE sessions DROP COLUMN usage")
        db.execute("ALTER TABLE sessions DROP COLUMN title")
        db.execute("ALTER TABLE sessions DROP COLUMN first_words")
        db.execute("ALTER TABLE calls DROP COLUMN log")
        db.execute("ALTER TABLE calls DROP COLUMN disposition")
        db.execute("ALTER TABLE calls DROP COLUMN question")
        db.execute("DROP TABLE a2a_tasks")
        db.execute("DELETE FROM schema_migrations WHERE version > 3")
    db.close()
    async with hosted(path, provider, clock=clock) as (store, runtime, host):
        stored = await store.load_session("b")
        assert stored is not None and stored.history == () and stored.board == json.loads(board)
        kept = await store.load_session("t")  # JSON SQLite cannot read (NaN) does not stop it
        assert kept is not None and '"n": NaN' in json.dumps(kept.history[0])
        resumed = await host.resume("b")
        assert resumed.board is not None
        assert [e.text for e in resumed.chat] == ["remember this", "Noted."]


async def test_a_second_look_at_a_call_that_did_not_move_says_so(clock: ManualClock) -> None:
    """Seed 004's lesson: a look that finds nothing moved says so, and that the model will
    be told when something does, so it need not poll."""
    puppet = Puppet()
    looks: list[int] = []

    def look(request: ModelRequest) -> ModelResponse:
        looks.append(1)
        if len(looks) > 2:
            return text("I will wait to be told.")
        call_id = next(iter(puppet.calls))
        return tool_calls(("get_tool_call_status", {"tool_call_id": call_id}))

    provider = ScriptedProvider(
        (asks("start"), lambda r: tool_calls(("puppet", {}), say="Started.")),
        (lambda r: True, look),
    )
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(BOARD)
        session.post("start it")
        await settled_on_a_call(session, runtime, puppet)
        session.post("how is it going?")
        await until(lambda: len(looks) == 3, runtime)
        await settled(session, runtime)
        answers = [call.outcome or "" for call in calls_of(session, "get_tool_call_status")]
    assert len(answers) == 2
    assert "Nothing has moved" not in answers[0]
    assert "Nothing has moved since you last looked" in answers[1]
    assert "You will be told when it does" in answers[1]


APPROVING_BOARD = AgentConfig(context_view="board", policy=DEFER)


def approval_script() -> ScriptedProvider:
    return ScriptedProvider(
        (
            asks("start"),
            lambda r: tool_calls(
                ("puppet", {"label": "slow"}), ("approve", {"label": "ok?"}), say="Asked."
            ),
        ),
        (lambda r: True, lambda r: text("Noted.")),
    )


async def ask_approval_then_end(path: Path, clock: ManualClock, **host: Any) -> StoredToken:
    """The first process: a board session starts a slow call and a deferred one; then the
    process ends with both waiting. Returns the deferred call's token, as stored."""
    puppet = Puppet()
    async with hosted(
        path, approval_script(), puppet.tool, Puppet(name="approve").tool, clock=clock, **host
    ) as (store, runtime, host_):
        session = await host_.create_session(APPROVING_BOARD, session_id="b")
        session.post("start the work")
        await settled_on_a_call(session, runtime, puppet)
        (token,) = await store.tokens_of("b")
    return token


@asynccontextmanager
async def resumed(
    path: Path,
    clock: ManualClock,
    provider: ScriptedProvider,
    store_clock: Callable[[], float] = time.time,
) -> AsyncIterator[tuple[Runtime, Host, Session]]:
    """A later process: board session "b" resumed from the store at ``path``."""
    async with (
        await SqliteStore.open(path, clock=store_clock) as opened,
        running(
            provider, Puppet().tool, Puppet(name="approve").tool, clock=clock, store=opened
        ) as (runtime, host),
    ):
        yield runtime, host, await host.resume("b")


def calls_of(session: Session, tool: str | None = None) -> list[BoardCall]:
    """The calls on a board session's board, in the order made (only ``tool``'s, if given)."""
    assert session.board is not None
    calls = [call for node in session.board.nodes.values() for call in node.calls]
    return [call for call in calls if tool is None or call.tool_name == tool]


def calls_by_tool(session: Session) -> dict[str, BoardCall]:
    return {call.tool_name: call for call in calls_of(session)}


async def test_a_deferred_call_on_the_board_waits_through_a_restart(
    clock: ManualClock, path: Path
) -> None:
    """Resumed, the deferred call is pending under its old tool_use id with its token bound
    (the slow call beside it is lost); completing the token lands on the board and wakes
    its node."""
    token = await ask_approval_then_end(path, clock)
    provider = approval_script()
    async with resumed(path, clock, provider) as (runtime, host, session):
        calls = calls_by_tool(session)
        assert calls["puppet"].status is CallStatus.ORPHANED
        assert calls["approve"].status is CallStatus.PENDING
        (waiting,) = runtime.list_calls("b")
        assert (waiting.status, waiting.deferred) == (CallStatus.PENDING, True)
        assert waiting.provider_call_id == token.provider_call_id
        assert calls["approve"].call_id == waiting.call_id, "the board names the live call"
        assert [call.call_id for call in session.outstanding()] == [waiting.call_id]
        assert await host.complete(token.token, {"approved": True}) is Completion.APPLIED
        await until(lambda: bool(provider.requests), runtime)
        await settled(session, runtime)
        approve, puppet = calls["approve"], calls["puppet"]
        assert (approve.status, approve.outcome) == (CallStatus.COMPLETED, '{"approved": true}')
        assert puppet.status is CallStatus.ORPHANED
        assert session.outstanding() == []
    (request,) = provider.requests
    assert results_in(request, 2), "the node's wake"
    drawn = board_text(request)
    assert f"call #{approve.display_id} approve(" in drawn and '"approved": true' in drawn
    assert f"call #{puppet.display_id} puppet(" in drawn and "lost in a restart" in drawn


async def test_a_deferred_call_on_the_board_waits_through_two_restarts(
    clock: ManualClock, path: Path
) -> None:
    """Review finding: after one resume the board holds the call under its new runtime id,
    while the stored token still names the first; a second resume finds the call by the
    model's id, and completing the token still reaches the board and the model."""
    token = await ask_approval_then_end(path, clock)
    for _ in range(2):
        provider = approval_script()
        async with resumed(path, clock, provider) as (runtime, host, session):
            assert calls_by_tool(session)["approve"].status is CallStatus.PENDING
            await settled(session, runtime)
    async with resumed(path, clock, provider) as (runtime, host, session):
        assert await host.complete(token.token, {"approved": True}) is Completion.APPLIED
        await until(lambda: bool(provider.requests), runtime)
        await settled(session, runtime)
        assert calls_by_tool(session)["approve"].status is CallStatus.COMPLETED
    assert results_in(provider.requests[0], 2)


async def test_a_board_session_unloaded_and_resumed_takes_back_its_running_call(
    clock: ManualClock, tmp_path: Path
) -> None:
    """Review finding: unloaded with a call running and resumed in the same process, the
    board takes the call back (it read as orphaned and its outcome was dropped); its end
    lands on the board and wakes its node."""
    puppet = Puppet()
    provider = ScriptedProvider(
        (asks("start"), lambda r: tool_calls(("puppet", {"label": "slow"}), say="Started.")),
        (lambda r: True, lambda r: text("Noted.")),
    )
    async with hosted(tmp_path / "agentos.db", provider, puppet.tool, clock=clock) as (
        _,
        runtime,
        host,
    ):
        session = await host.create_session(BOARD, session_id="b")
        session.post("start the work")
        await settled_on_a_call(session, runtime, puppet)
        (call_id,) = puppet.calls
        await host.unload("b")
        session = await host.resume("b")
        assert calls_by_tool(session)["puppet"].status is CallStatus.RUNNING
        assert [call.call_id for call in session.outstanding()] == [call_id]
        puppet.complete(call_id, "done")
        await until(lambda: len(provider.requests) == 2, runtime)
        await settled(session, runtime)
        assert calls_by_tool(session)["puppet"].status is CallStatus.COMPLETED
    assert results_in(provider.requests[-1], 2)


async def test_a_board_token_completed_while_no_process_ran(clock: ManualClock, path: Path) -> None:
    """Completed through the store (as ``agentos complete`` does) while down: on resume the
    outcome lands on the board and the node gets its turn."""
    token = await ask_approval_then_end(path, clock)
    async with await SqliteStore.open(path) as store:
        assert await store.complete_token(token.token, "yes") is Completion.APPLIED
    provider = approval_script()
    async with resumed(path, clock, provider) as (runtime, _, session):
        await until(lambda: bool(provider.requests), runtime)
        await settled(session, runtime)
        calls = calls_by_tool(session)
        assert (calls["approve"].status, calls["approve"].outcome) == (CallStatus.COMPLETED, "yes")
        assert calls["puppet"].status is CallStatus.ORPHANED
    (request,) = provider.requests
    assert results_in(request)
    assert "approve(" in board_text(request) and "completed: 'yes'" in board_text(request)


async def test_a_board_token_that_expired_while_no_process_ran_is_told_as_expired(
    clock: ManualClock, path: Path
) -> None:
    """As in a transcript session (issue 11): the board says the deferred call expired, not
    that it was lost, and its node gets its turn."""
    token = await ask_approval_then_end(path, clock, token_ttl=60.0)
    assert token.expires_at is not None
    later = token.expires_at + 1
    provider = approval_script()
    async with resumed(path, clock, provider, store_clock=lambda: later) as (runtime, _, session):
        await until(lambda: bool(provider.requests), runtime)
        await settled(session, runtime)
        approve = calls_by_tool(session)["approve"]
    assert results_in(provider.requests[0])
    assert approve.status is CallStatus.FAILED
    assert approve.outcome is not None and "expired: nobody completed it within 60 s" in (
        approve.outcome
    )
    assert "lost" not in approve.outcome


async def test_the_user_writing_as_a_call_ends_reads_it_ended(clock: ManualClock) -> None:
    """The board is drawn again when the request goes out: a call that ended after the
    user's turn was decided (before the request went out) is read as ended, not running;
    its node's own turn follows and reads the same."""
    puppet = Puppet()
    provider = ScriptedProvider(
        (asks("start"), lambda r: tool_calls(("puppet", {"label": "x"}), say="Started.")),
        (lambda r: True, lambda r: text("ok")),
    )
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(BOARD)
        session.post("start the work")
        await settled_on_a_call(session, runtime, puppet)
        (call_id,) = puppet.calls
        puppet.complete(call_id, "all done")
        session.post("how is it going?")  # decided now, while the call still runs
        await until(lambda: len(provider.requests) >= 3, runtime)
        await settled(session, runtime)
    asked = next(r for r in provider.requests if asks("how is it going?")(r))
    assert "completed: 'all done'" in board_text(asked)
    assert "RUNNING" not in board_text(asked)
