"""What the machine tests share: the harness's call (one runtime call as the shell of the pure
turn and board machine tests sees it, and its snapshot), and how a hypothesis state machine
becomes a test."""

from __future__ import annotations

import unittest
from dataclasses import dataclass

from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine

from agentos import (
    CallError,
    CallId,
    CallSnapshot,
    CallStatus,
    ErrorKind,
    SessionId,
)


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
