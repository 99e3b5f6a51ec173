"""The harness's call, shared by the pure turn and board machine tests: one runtime call as the
shell sees it, and its snapshot."""

from __future__ import annotations

from dataclasses import dataclass

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
