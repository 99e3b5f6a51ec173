"""What the machine tests share: the harness's call (one runtime call as the shell of the pure
turn and board machine tests sees it, its snapshot, and the result of one the shell answers
at once), the part of the world around a pure
machine both harnesses play alike and what they check alike (``World``), and how a
hypothesis state machine becomes a test."""

from __future__ import annotations

import unittest
from dataclasses import dataclass

from hypothesis import HealthCheck
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine
from hypothesis.stateful import invariant
from hypothesis.stateful import precondition
from hypothesis.stateful import rule

from agentos import CallError
from agentos import CallId
from agentos import CallSnapshot
from agentos import CallStatus
from agentos import ErrorKind
from agentos import SessionId
from agentos.turns import Action
from agentos.turns import ArmTimer
from agentos.turns import CallOverdue
from agentos.turns import CancelCalls
from agentos.turns import CancelsDone
from agentos.turns import Commit
from agentos.turns import Committed
from agentos.turns import DisarmTimer
from agentos.turns import Event
from agentos.turns import Machine
from agentos.turns import SendRequest
from agentos.turns import SessionStatus
from agentos.turns import StopRequested
from agentos.turns import SubmitCalls
from agentos.turns import ToolResultBlock


@dataclass
class Call:
    """The harness's view of one runtime call."""

    call_id: CallId
    tool_use_id: str
    name: str
    status: CallStatus
    cancel_asked: bool = False

    @property
    def final(self) -> bool:
        return self.status.is_final


def answered(tool_use_id: str, content: str) -> ToolResultBlock:
    """The result of a call the shell answers at once, without a runtime call."""
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}


def snapshot(call: Call) -> CallSnapshot:
    error = None if call.status is CallStatus.COMPLETED else CallError(ErrorKind.TOOL_ERROR, "no")
    return CallSnapshot(
        call.call_id,
        SessionId("s"),
        call.name,
        {},
        call.status,
        call.tool_use_id,
        None,
        None,
        None,
        0.0,
        None,
        1.0,
        f"{call.name} done" if error is None else None,
        error,
        (),
        0,
        0,
        1,
        None,
        False,
        deferred=call.name == "defer",
    )


class World(RuleBasedStateMachine):
    """The world around a pure machine, as both harnesses play it: the calls that run go
    overdue, someone stops the session, and ``handle`` gives each event to the machine and
    does what a shell would with what it asks (commits and cancels at once; a request or a
    submission kept in ``todo`` for a rule to perform). A harness sees what it cares for of
    that through ``sent`` and ``committing``."""

    calls: dict[CallId, Call]
    machine: Machine
    todo: list[Action]
    """The request or submission the machine waits for (at most one)."""
    timer: float | None = None
    """The yield timer's deadline, if armed."""

    def handle(self, event: Event) -> None:
        cancels = 0
        for action in self.machine.handle(event):
            if isinstance(action, ArmTimer):
                self.timer = action.deadline
            elif isinstance(action, DisarmTimer):
                self.timer = None
            elif isinstance(action, Commit):
                self.committing()
                self.machine.handle(Committed(self.machine.to_store()))
            elif isinstance(action, CancelCalls):
                self.cancelling(action)
                for call_id in action.call_ids:
                    assert not self.calls[call_id].final, "cancel of a final call"
                    self.calls[call_id].cancel_asked = True
                cancels += 1
            else:
                if isinstance(action, SendRequest):
                    self.sent(action)
                assert not self.todo, f"{action} asked while {self.todo} is not done"
                self.todo.append(action)
        for _ in range(cancels):
            self.handle(CancelsDone())

    def sent(self, request: SendRequest) -> None:
        """The machine asks the model (before ``todo`` holds the request)."""

    def committing(self) -> None:
        """The machine asks for a commit (before the store's answer, ``Committed``)."""

    def cancelling(self, cancel: CancelCalls) -> None:
        """The machine asks to cancel calls (before the harness marks them)."""

    def submission(self) -> list[tuple[str, str]]:
        """The calls the submission in ``todo`` asks for, as (tool name, ``tool_use`` id): the
        shell takes it to perform."""
        action = self.todo.pop()
        assert isinstance(action, SubmitCalls)
        return [(use["name"], use["id"]) for use in action.uses]

    def live(self) -> list[Call]:
        return [call for call in self.calls.values() if not call.final]

    @precondition(lambda self: any(c.status is CallStatus.RUNNING for c in self.calls.values()))
    @rule(data=st.data())
    def call_goes_overdue(self, data: st.DataObject) -> None:
        running = [c for c in self.calls.values() if c.status is CallStatus.RUNNING]
        self.handle(CallOverdue(data.draw(st.sampled_from(running)).call_id))

    @rule(cancel_calls=st.booleans())
    def stop(self, cancel_calls: bool) -> None:
        self.handle(StopRequested(cancel_calls))

    @invariant()
    def something_is_asked_exactly_while_requesting(self) -> None:
        status = self.machine.view.status
        if status is SessionStatus.REQUESTING:
            assert self.todo, "requesting, with no request or submission asked"
        else:
            assert not self.todo, f"{status} with {self.todo} not done"


def machine_test(
    machine: type[RuleBasedStateMachine], *, examples: int, steps: int
) -> type[unittest.TestCase]:
    """``machine`` run as a test: ``examples`` runs of up to ``steps`` rules each, with no
    deadline and no complaint that an example is slow (a run drives a whole machine)."""
    machine.TestCase.settings = settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    return machine.TestCase
