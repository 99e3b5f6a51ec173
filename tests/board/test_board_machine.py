"""The board turn machine, driven directly: no loop, no runtime, many examples.

A hypothesis state machine plays the shell and the world, as for the
transcript machine: the user posts (new threads and replies under any node),
the model answers with text, background calls, capabilities and
``new_thread``, calls settle or go overdue, someone stops the session. After
every step: each request is the board in the user role with no tool blocks,
each settled call's outcome is on the next board the model reads, nothing
is stuck, and between turns the status tells the truth (``failed`` after a
failed request until the next, else ``waiting`` while a call runs, else
``idle``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from hypothesis import strategies as st
from hypothesis.stateful import invariant
from hypothesis.stateful import precondition
from hypothesis.stateful import rule

from agentos import AgentConfig
from agentos import CallId
from agentos import CallStatus
from agentos import Disposition
from agentos import turns
from agentos.testing import blocks_of
from agentos.turns import Action
from agentos.turns import Block
from agentos.turns import BoardMachine
from agentos.turns import SessionStatus
from agentos.turns import ToolResultBlock
from tests.support.machines import Call
from tests.support.machines import World
from tests.support.machines import answered
from tests.support.machines import machine_test
from tests.support.machines import snapshot

CONFIG = AgentConfig(context_view="board", retry_budget=1, autonomous_turns=3)
USES = ["bg", "get_tool_call_status", "cancel_tool_call", "new_thread"]


@dataclass
class Request:
    text: str
    kinds: set[str]
    role: str


class Boards(World):
    machine: BoardMachine

    def __init__(self) -> None:
        super().__init__()
        self.machine = BoardMachine("s", CONFIG)
        self.todo: list[Action] = []
        self.calls: dict[CallId, Call] = {}
        self.requests: list[Request] = []
        self.unseen: dict[CallId, str] = {}
        """Settled calls whose outcome no request has shown yet -> the outcome's words."""
        self.ids = itertools.count()
        self.failed = False
        """The last model request failed, and none has been asked since."""

    def sent(self, action: turns.SendRequest) -> None:
        self.failed = False
        assert action.messages is not None, "a board request carries its own messages"
        (message,) = action.messages
        blocks = blocks_of(message)
        text = "".join(str(b.get("text", "")) for b in blocks)
        self.requests.append(Request(text, {str(b.get("type")) for b in blocks}, message["role"]))
        for call_id, words in list(self.unseen.items()):
            assert words in text, f"settled {call_id} ({words}) not on the board"
            del self.unseen[call_id]

    # ------------------------------------------------------------ the world
    # (and World's rules: a running call goes overdue, someone stops the session)

    @precondition(lambda self: not self.machine.view.ended and not self.machine.view.stopping)
    @rule(data=st.data(), words=st.sampled_from(["hello", "any news?", "go on"]))
    def post(self, data: st.DataObject, words: str) -> None:
        nodes = sorted(self.machine.board.nodes)
        reply_to = data.draw(st.none() | st.sampled_from(nodes)) if nodes else None
        self.handle(turns.UserPosted(words, reply_to))

    @precondition(lambda self: self.todo and isinstance(self.todo[0], turns.SendRequest))
    @rule(uses=st.lists(st.sampled_from(USES), max_size=3), fails=st.booleans())
    def model_answers(self, uses: list[str], fails: bool) -> None:
        self.todo.clear()
        if fails and not uses:
            self.failed = True
            self.handle(turns.ModelReplied(None))
            return
        content: list[Block] = [{"type": "text", "text": "on it"}]
        for name in uses:
            arguments: dict[str, object] = {}
            if name == "new_thread":
                arguments = {"text": "a question for you"}
            elif name == "cancel_tool_call" and self.calls:
                arguments = {"tool_call_id": next(iter(self.calls)), "reason": "stuck"}
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{next(self.ids)}",
                    "name": name,
                    "input": arguments,
                }
            )
        self.handle(turns.ModelReplied(content))

    @precondition(lambda self: self.todo and isinstance(self.todo[0], turns.SubmitCalls))
    @rule(running=st.booleans())
    def shell_submits(self, running: bool) -> None:
        answers: dict[str, ToolResultBlock] = {}
        started = []
        for name, tool_use_id in self.submission():
            assert name != "new_thread", "the machine answers new_thread itself"
            if name != "bg":
                answers[tool_use_id] = answered(tool_use_id, '{"answer": "' + name + '"}')
                continue
            status = CallStatus.RUNNING if running else CallStatus.PENDING
            call = Call(CallId(f"c{next(self.ids)}"), tool_use_id, name, status)
            self.calls[call.call_id] = call
            started.append(
                turns.CallStarted(tool_use_id, call.call_id, name, Disposition.RUN_ASYNC, status)
            )
        self.handle(turns.CallsSubmitted(answers, started, [], 0.0))

    @precondition(lambda self: any(c.status is CallStatus.PENDING for c in self.live()))
    @rule(data=st.data())
    def call_starts(self, data: st.DataObject) -> None:
        call = data.draw(
            st.sampled_from([c for c in self.live() if c.status is CallStatus.PENDING])
        )
        call.status = CallStatus.RUNNING
        self.handle(turns.CallRunning(call.call_id))

    @precondition(lambda self: self.live())
    @rule(data=st.data(), outcome=st.sampled_from([CallStatus.COMPLETED, CallStatus.FAILED]))
    def call_settles(self, data: st.DataObject, outcome: CallStatus) -> None:
        call = data.draw(st.sampled_from(self.live()))
        call.status = CallStatus.CANCELLED if call.cancel_asked else outcome
        self.handle(turns.CallSettled(snapshot(call)))
        if not self.machine.view.ended:
            self.unseen[call.call_id] = "bg done" if call.status is CallStatus.COMPLETED else "no"

    # ------------------------------------------------------------ invariants

    @invariant()
    def every_request_is_the_board_in_the_user_role(self) -> None:
        for request in self.requests:
            assert request.role == "user"
            assert request.kinds == {"text"}, request.kinds

    @invariant()
    def nothing_is_stuck(self) -> None:
        """Besides ``World``'s: what this machine's status says of its calls."""
        status = self.machine.view.status
        if status not in (SessionStatus.REQUESTING, SessionStatus.STOPPED):
            expected = SessionStatus.WAITING if self.live() else SessionStatus.IDLE
            assert status is (SessionStatus.FAILED if self.failed else expected), status
        if status is SessionStatus.IDLE:
            assert self.machine.view.at_rest, "idle with a turn it should have taken"
            if not self.live():
                assert self.machine.view.outstanding == {}, (
                    "idle, every call ended, still waited for"
                )

    @invariant()
    def display_ids_are_unique(self) -> None:
        board = self.machine.board
        ids = list(board.nodes) + [c.display_id for n in board.nodes.values() for c in n.calls]
        assert len(ids) == len(set(ids))

    @invariant()
    def no_yield_timer_is_armed(self) -> None:
        assert self.timer is None, "a board's turns wait for no yield timer"


TestBoards = machine_test(Boards, examples=500, steps=40)


def test_a_stop_while_calls_are_submitted_cancels_them_once_known() -> None:
    """Review finding: calls whose ids arrive after stop(cancel_calls=True) are cancelled."""
    machine = BoardMachine("s", CONFIG)
    machine.handle(turns.UserPosted("go"))
    uses: list[Block] = [
        {"type": "tool_use", "id": "t1", "name": "bg", "input": {}},
        {"type": "tool_use", "id": "t2", "name": "bg", "input": {}},
    ]
    (submit,) = machine.handle(turns.ModelReplied([{"type": "text", "text": "on it"}, *uses]))
    assert isinstance(submit, turns.SubmitCalls)
    machine.handle(turns.StopRequested(cancel_calls=True))
    started = [
        turns.CallStarted(f"t{n}", CallId(f"c{n}"), "bg", Disposition.RUN_ASYNC, CallStatus.RUNNING)
        for n in (1, 2)
    ]
    actions = machine.handle(turns.CallsSubmitted({}, started, [], 0.0))
    assert turns.CancelCalls([CallId("c1"), CallId("c2")], "session stopped") in actions
    assert machine.view.status is SessionStatus.STOPPED


def test_an_overdue_call_asked_about_twice_while_busy_gets_one_turn() -> None:
    machine = BoardMachine("s", CONFIG)
    machine.handle(turns.UserPosted("go"))
    use: Block = {"type": "tool_use", "id": "t1", "name": "bg", "input": {}}
    machine.handle(turns.ModelReplied([use]))
    started = turns.CallStarted("t1", CallId("c1"), "bg", Disposition.RUN_ASYNC, CallStatus.RUNNING)
    machine.handle(turns.CallsSubmitted({}, [started], [], 0.0))
    machine.handle(turns.UserPosted("busy now"))  # a turn in flight: the nudges queue
    assert machine.view.status is SessionStatus.REQUESTING
    machine.handle(turns.CallOverdue(CallId("c1")))
    machine.handle(turns.CallOverdue(CallId("c1")))
    requests = 0
    for _ in range(3):  # answer whatever is asked with a last word
        requests += sum(
            isinstance(a, turns.SendRequest) for a in machine.handle(turns.ModelReplied([]))
        )
    assert requests == 1, "the user's turn ended; one nudge for the call, not two"


def test_a_board_is_drawn_again_as_the_request_goes_out() -> None:
    """An overdue turn is decided while the call runs; the call ends before the request
    goes out: ``Sending`` draws it ended, and the note no longer says it runs long."""
    machine = BoardMachine("s", CONFIG)
    machine.handle(turns.UserPosted("go"))
    use: Block = {"type": "tool_use", "id": "t1", "name": "bg", "input": {}}
    machine.handle(turns.ModelReplied([{"type": "text", "text": "started"}, use]))
    started = turns.CallStarted("t1", CallId("c1"), "bg", Disposition.RUN_ASYNC, CallStatus.RUNNING)
    machine.handle(turns.CallsSubmitted({}, [started], [], 0.0))
    (_, asked) = machine.handle(turns.CallOverdue(CallId("c1")))
    assert isinstance(asked, turns.SendRequest) and asked.messages is not None
    before = "".join(str(b.get("text", "")) for b in blocks_of(asked.messages[0]))
    assert "RUNNING" in before and "longer than expected" in before
    assert machine.handle(turns.Sending()) == [], "nothing moved: not drawn again"
    call = Call(CallId("c1"), "t1", "bg", CallStatus.COMPLETED)
    assert machine.handle(turns.CallSettled(snapshot(call))) == []  # a turn is out: it queues
    now = next(a for a in machine.handle(turns.Sending()) if isinstance(a, turns.SendRequest))
    assert now.messages is not None
    after = "".join(str(b.get("text", "")) for b in blocks_of(now.messages[0]))
    assert "bg() completed" in after and "RUNNING" not in after
    assert "longer than expected" not in after and "has ended" in after.splitlines()[-1]
    assert machine.view.outstanding == {}, "its outcome is on the board the model reads"
