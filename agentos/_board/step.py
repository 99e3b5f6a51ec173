"""What the board machine keeps of a turn: the wakes queued for one, and the step being taken."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentos._board.board import BoardNode, BoardTrigger
from agentos._model.messages import Block
from components import CallId, CallSnapshot, CallStatus


@dataclass(slots=True)
class Wake:
    """A reason for a turn, queued until the session is idle."""

    trigger: BoardTrigger
    node: int
    """The node the turn's first agent node hangs under (and the focus)."""
    note: str | None = None
    """Why the turn happens, beyond its focus (an overdue call); said once."""
    call_id: CallId | None = None


@dataclass(slots=True)
class Step:
    """The turn being taken: where its next node hangs, and what the model asked for."""

    trigger: BoardTrigger
    parent: int
    node: BoardNode | None = None
    uses: dict[str, Block] = field(default_factory=dict)
    """The step's calls being submitted, by tool_use id."""
    early: list[CallSnapshot] = field(default_factory=list)
    """Calls that ended before the machine knew their ids (fast tools)."""
    order: list[Block] = field(default_factory=list)
    """The answer's tool uses, in the order the model asked for them."""
    local: dict[str, tuple[CallStatus, str]] = field(default_factory=dict)
    """Uses the machine answers itself (refusals, ``new_thread``): status and words."""
    answered: bool = False
    """Something was answered within the step: the model gets to read it."""
    ends: bool = False
    """``new_thread`` asked the person: the turn ends with this step."""
