"""The session turn machines, for code that drives or inspects them directly.

``TurnMachine`` (a transcript) and ``BoardMachine`` (seed 004's board) are
pure: ``handle(event)`` changes the state and returns the actions an async
shell performs (``Session`` is that shell). Tests and alternative shells use
these names; an application talks to ``Session``.

Below them, the turn layer's words for front ends that draw or check what a machine
handles: ``EXPECTED_SECONDS`` (the argument a background call's expected duration
comes in), ``blocks_of`` (a message's content blocks), and ``fit_problems`` /
``validation_problems`` (what is wrong with an agent, in lines a person can act on).
"""

from agentos._board.machine import BoardMachine
from agentos._model.messages import blocks_of
from agentos._turns.agent_problems import fit_problems, validation_problems
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
    Resumed,
    SendRequest,
    SessionStatus,
    StopRequested,
    SubmitCalls,
    TimerFired,
    UserPosted,
)
from agentos._turns.expected import EXPECTED_SECONDS
from agentos._turns.transcript_machine import TurnMachine

__all__ = [
    "ENDED",
    "EXPECTED_SECONDS",
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
    "Resumed",
    "SendRequest",
    "SessionStatus",
    "StopRequested",
    "SubmitCalls",
    "TimerFired",
    "TurnMachine",
    "UserPosted",
    "blocks_of",
    "fit_problems",
    "validation_problems",
]
