"""The session turn machines, for code that drives or inspects them directly.

``TurnMachine`` (a transcript) and ``BoardMachine`` (seed 004's board) are
pure: ``handle(event)`` changes the state and returns the actions an async
shell performs (``Session`` is that shell). Tests and alternative shells use
these names; an application talks to ``Session``.
"""

from agentos._board.machine import BoardMachine
from agentos._turns.events import (
    ENDED,
    TURN_TRANSITIONS,
    WAITING,
    Action,
    ArmTimer,
    CallOverdue,
    CallRunning,
    CallSettled,
    CallsSubmitted,
    CallStarted,
    CancelCalls,
    CancelsDone,
    Commit,
    Crashed,
    DisarmTimer,
    Event,
    ModelReplied,
    SendRequest,
    SessionStatus,
    StopRequested,
    SubmitCalls,
    TimerFired,
    UserPosted,
)
from agentos._turns.transcript_machine import TurnMachine

__all__ = [
    "ENDED",
    "TURN_TRANSITIONS",
    "WAITING",
    "Action",
    "ArmTimer",
    "BoardMachine",
    "CallOverdue",
    "CallRunning",
    "CallSettled",
    "CallStarted",
    "CallsSubmitted",
    "CancelCalls",
    "CancelsDone",
    "Commit",
    "Crashed",
    "DisarmTimer",
    "Event",
    "ModelReplied",
    "SendRequest",
    "SessionStatus",
    "StopRequested",
    "SubmitCalls",
    "TimerFired",
    "TurnMachine",
    "UserPosted",
]
