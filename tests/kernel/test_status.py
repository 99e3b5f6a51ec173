"""The status vocabulary and its one transition table."""

from __future__ import annotations

import pytest

from components import FINAL_STATUSES
from components import STORED_STATUSES
from components import TRANSITIONS
from components import CallStatus
from components import can_transition


def test_vocabulary_is_exactly_the_design() -> None:
    assert {status.value for status in STORED_STATUSES} == {
        "pending",
        "running",
        "completed",
        "failed",
        "cancelled",
    }
    assert CallStatus.ORPHANED not in STORED_STATUSES
    assert CallStatus.ORPHANED.is_final


@pytest.mark.parametrize("final", sorted(FINAL_STATUSES))
def test_final_statuses_are_absorbing(final: CallStatus) -> None:
    assert all(not can_transition(final, other) for other in CallStatus)


@pytest.mark.parametrize("status", list(CallStatus))
def test_nothing_moves_to_orphaned_or_back_to_pending(status: CallStatus) -> None:
    assert not can_transition(status, CallStatus.ORPHANED)
    assert not can_transition(status, CallStatus.PENDING)


def test_live_moves() -> None:
    assert TRANSITIONS[CallStatus.PENDING] == {
        CallStatus.RUNNING,
        CallStatus.COMPLETED,
        CallStatus.FAILED,
        CallStatus.CANCELLED,
    }
    assert TRANSITIONS[CallStatus.RUNNING] == {
        CallStatus.COMPLETED,
        CallStatus.FAILED,
        CallStatus.CANCELLED,
    }
