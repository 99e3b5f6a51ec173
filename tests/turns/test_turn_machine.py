"""The pure turn machine, driven directly: no loop, no runtime, thousands of examples.

A hypothesis state machine plays the async shell (it performs the actions the
machine returns) and the world around it (the model answers, calls start,
settle, go overdue, the yield timer fires, the user writes, someone stops the
session), in any order. After every step it checks what issue 10 asks: every
request is valid Messages with one positional ``tool_result`` per ``tool_use``,
each outcome is told exactly once, no partial turn is stacked on another, and
no state is left with nothing that could move it on.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter

from hypothesis import strategies as st
from hypothesis.stateful import initialize
from hypothesis.stateful import invariant
from hypothesis.stateful import precondition
from hypothesis.stateful import rule

from agentos import AgentConfig
from agentos import CallId
from agentos import CallStatus
from agentos import Disposition
from agentos import ToolPolicy
from agentos import YieldOnAnyProgress
from agentos import YieldOnTimeout
from agentos import turns
from agentos.testing import blocks_of
from agentos.turns import PLACEHOLDER_KEY
from agentos.turns import WAITING
from agentos.turns import Action
from agentos.turns import Block
from agentos.turns import Message
from agentos.turns import SessionStatus
from agentos.turns import ToolResultBlock
from agentos.turns import TurnMachine
from tests.support.machines import Call
from tests.support.machines import World
from tests.support.machines import answered
from tests.support.machines import machine_test
from tests.support.machines import snapshot
from tests.support.transcripts import transcript_problem

DISPOSITIONS = {
    "bg": Disposition.RUN_ASYNC,
    "sync": Disposition.RUN_SYNC,
    "defer": Disposition.DEFER,
}
POLICY = ToolPolicy(rules=dict(DISPOSITIONS))
CONFIGS = {
    "all_done": AgentConfig(policy=POLICY),
    "any_progress": AgentConfig(policy=POLICY, async_yield_strategy=YieldOnAnyProgress()),
    "timeout": AgentConfig(policy=POLICY, async_yield_strategy=YieldOnTimeout(milliseconds=50)),
}
TOOLS = ["bg", "sync", "defer", "get_tool_call_status"]
OUTCOME = re.compile(r"\[tool call (\S+) \([^)]*\) finished: ")


class Turns(World):
    machine: TurnMachine

    def __init__(self) -> None:
        super().__init__()
        self.machine = TurnMachine("s", CONFIGS["all_done"])
        self.todo: list[Action] = []
        self.calls: dict[CallId, Call] = {}
        self.timer = None
        self.now = 0.0
        self.requests: list[list[Message]] = []
        self.ids = itertools.count()

    @initialize(config=st.sampled_from(sorted(CONFIGS)))
    def start(self, config: str) -> None:
        self.machine = TurnMachine("s", CONFIGS[config])

    # ------------------------------------------------------------ the shell

    def sent(self, request: turns.SendRequest) -> None:
        self.requests.append(json.loads(json.dumps(self.machine.history)))

    def committing(self) -> None:
        assert 0 <= self.machine.dirty_from <= len(self.machine.history)

    def cancelling(self, cancel: turns.CancelCalls) -> None:
        assert cancel.reason == "session stopped"

    # ------------------------------------------------------------ the world
    # (and World's rules: a running call goes overdue, someone stops the session)

    @precondition(lambda self: not self.machine.view.ended and not self.machine.view.stopping)
    @rule(text=st.sampled_from(["hello", "any news?", "go on"]))
    def post(self, text: str) -> None:
        self.handle(turns.UserPosted(text))

    @precondition(lambda self: self.todo and isinstance(self.todo[0], turns.SendRequest))
    @rule(uses=st.lists(st.sampled_from(TOOLS), max_size=3), fails=st.booleans())
    def model_answers(self, uses: list[str], fails: bool) -> None:
        self.todo.clear()
        if fails and not uses:
            self.handle(turns.ModelReplied(None))
            return
        content: list[Block] = [{"type": "text", "text": "on it"}]
        content += [
            {"type": "tool_use", "id": f"toolu_{next(self.ids)}", "name": name, "input": {}}
            for name in uses
        ]
        self.handle(turns.ModelReplied(content))

    @precondition(lambda self: self.todo and isinstance(self.todo[0], turns.SubmitCalls))
    @rule(data=st.data())
    def shell_submits(self, data: st.DataObject) -> None:
        answers: dict[str, ToolResultBlock] = {}
        started = []
        for name, tool_use_id in self.submission():
            if name == "get_tool_call_status":
                answers[tool_use_id] = answered(tool_use_id, '{"calls": []}')
                continue
            disposition = DISPOSITIONS[name]
            status = CallStatus.PENDING
            if disposition is not Disposition.DEFER and data.draw(st.booleans(), "running"):
                status = CallStatus.RUNNING
            call = Call(CallId(f"c{next(self.ids)}"), tool_use_id, name, status)
            self.calls[call.call_id] = call
            token = f"ct_{call.call_id}" if disposition is Disposition.DEFER else None
            started.append(
                turns.CallStarted(tool_use_id, call.call_id, name, disposition, status, token)
            )
        self.handle(turns.CallsSubmitted(answers, started, [], self.now))

    @precondition(
        lambda self: any(c.status is CallStatus.PENDING and c.name != "defer" for c in self.live())
    )
    @rule(data=st.data())
    def call_starts(self, data: st.DataObject) -> None:
        pending = [c for c in self.live() if c.status is CallStatus.PENDING and c.name != "defer"]
        call = data.draw(st.sampled_from(pending))
        call.status = CallStatus.RUNNING
        self.handle(turns.CallRunning(call.call_id))

    @precondition(lambda self: self.live())
    @rule(
        data=st.data(),
        outcome=st.sampled_from([CallStatus.COMPLETED, CallStatus.FAILED, CallStatus.CANCELLED]),
    )
    def call_settles(self, data: st.DataObject, outcome: CallStatus) -> None:
        call = data.draw(st.sampled_from(self.live()))
        call.status = CallStatus.CANCELLED if call.cancel_asked else outcome
        self.handle(turns.CallSettled(snapshot(call)))

    @precondition(lambda self: self.timer is not None)
    @rule()
    def timer_fires(self) -> None:
        assert self.timer is not None
        self.now = max(self.now, self.timer)
        self.timer = None
        self.handle(turns.TimerFired(self.now))

    # ------------------------------------------------------------ invariants

    @invariant()
    def every_request_is_valid_messages(self) -> None:
        for messages in self.requests:
            assert messages and messages[-1]["role"] == "user"
            assert transcript_problem(messages, may_end_unanswered=False) is None

    @invariant()
    def the_history_is_valid_and_tells_each_outcome_at_most_once(self) -> None:
        status = self.machine.view.status
        unanswered_ok = status in WAITING or status is SessionStatus.REQUESTING
        problem = transcript_problem(self.machine.history, may_end_unanswered=unanswered_ok)
        assert problem is None, problem
        assert all(count == 1 for count in told(self.machine.history).values())

    @invariant()
    def nothing_is_stuck(self) -> None:
        """Besides ``World``'s: what this machine's status says of its calls."""
        status = self.machine.view.status
        if status is SessionStatus.WAITING:
            assert self.live(), "waiting for calls that all ended"
        if status is SessionStatus.WAITING_EXTERNAL:
            assert any(c.name == "defer" for c in self.live()), "waiting_external, no deferred"
        if self.machine.timer() is not None:
            assert status in WAITING, "a yield timer armed outside a wait"
        if status is SessionStatus.IDLE and not self.live():
            assert self.machine.view.at_rest
            told_ids = told(self.machine.history)
            untold = [c.tool_use_id for c in self.calls.values() if c.tool_use_id not in told_ids]
            assert untold == [], f"idle, every call ended, and never told: {untold}"


def told(messages: list[Message]) -> Counter[str]:
    """How often each call's outcome reached the model: a result, or a late outcome."""
    counts: Counter[str] = Counter()
    for message in messages:
        for block in blocks_of(message):
            if block.get("type") == "tool_result":
                if PLACEHOLDER_KEY not in str(block.get("content")):
                    counts[block["tool_use_id"]] += 1
            elif block.get("type") == "text":
                counts.update(OUTCOME.findall(str(block.get("text"))))
    return counts


TestTurns = machine_test(Turns, examples=2_000, steps=40)
