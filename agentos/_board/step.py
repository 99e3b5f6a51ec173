"""What the board machine keeps of a turn: the wakes queued for one, and the step being taken."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace

from agentos._board.board import BoardNode
from agentos._board.board import BoardTrigger
from agentos._model.messages import Block
from agentos._turns.call_options import PlannedCall
from components import CallId
from components import CallSnapshot
from components import CallStatus
from components import JsonObject

NOBODY_THERE = (
    "nobody to ask: the board runs this turn on its own (a result or a timer woke it, not a person)"
)
"""Why a question a call of an autonomous turn asks is declined."""


def attended(trigger: BoardTrigger, planned: PlannedCall) -> PlannedCall:
    """``planned`` as a turn with this trigger makes it: a turn no person prompted (a
    result's, a timer's) has nobody there to answer its calls' questions."""
    if trigger is BoardTrigger.USER:
        return planned
    planned.options = replace(planned.options, nobody_to_ask=NOBODY_THERE)
    return planned


@dataclass(slots=True)
class Wake:
    """A reason for a turn, queued until the session is idle."""

    trigger: BoardTrigger
    node: int
    """The node the turn's first agent node hangs under (and the focus)."""
    note: str | None = None
    """Why the turn happens, beyond its focus (an overdue call); said once."""
    call_id: CallId | None = None

    def to_json(self) -> JsonObject:
        """For the stored board: a turn still owed after a restart (an overdue call's aside)."""
        return {"trigger": self.trigger.value, "node": self.node, "note": self.note}

    @classmethod
    def from_json(cls, data: object) -> Wake:
        """A wake ``to_json`` wrote (``ValueError`` for anything else)."""
        if not isinstance(data, Mapping):
            raise ValueError(f"not a stored wake: {data!r}")
        try:
            note = data["note"]
            return cls(
                BoardTrigger(data["trigger"]),
                int(data["node"]),
                None if note is None else str(note),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"not a stored wake: {error!r}") from None


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
