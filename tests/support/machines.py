"""What the machine tests share: the harness's call (one runtime call as the shell of the pure
turn and board machine tests sees it, and its snapshot), the part of the world around a pure
machine both harnesses play alike (``World``), and how a hypothesis state machine becomes a
test."""

from __future__ import annotations

import unittest
from dataclasses import dataclass

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from agentos import (
    CallError,
    CallId,
    CallSnapshot,
    CallStatus,
    ErrorKind,
    SessionId,
)
from agentos.turns import CallOverdue, Event, StopRequested


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
    overdue, someone stops the session. A harness keeps ``calls`` and ``handle``s each event
    as the shell would (performing what the machine asks)."""

    calls: dict[CallId, Call]

    def handle(self, event: Event) -> None:
        raise NotImplementedError

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
