"""The words of a session's turn machine: its statuses, the events it takes, the actions it asks.

Each turn machine moves between the statuses as ``TURN_TRANSITIONS`` allows; the
async ``Session`` turns runtime news into events and performs the actions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from agentos._errors import UsageError
from agentos._model.messages import Block
from agentos._model.messages import Message
from agentos._model.messages import ToolResultBlock
from agentos._turns.call_options import PlannedCall
from agentos._turns.decorations import NO_DECORATIONS
from agentos._turns.decorations import Decorations
from agentos._turns.tool_policy import Disposition
from components import CallId
from components import CallSnapshot
from components import CallStatus
from components import Json
from components import OverdueNews
from components import SessionStatus as SessionStatus
from components import quick_init

_RESTING = frozenset(
    {
        SessionStatus.IDLE,
        SessionStatus.WAITING,
        SessionStatus.WAITING_EXTERNAL,
        SessionStatus.FAILED,
    }
)
TURN_TRANSITIONS: dict[SessionStatus, frozenset[SessionStatus]] = {
    SessionStatus.IDLE: frozenset(
        {
            SessionStatus.REQUESTING,
            SessionStatus.WAITING,
            SessionStatus.WAITING_EXTERNAL,
            SessionStatus.STOPPED,
        }
    ),
    SessionStatus.REQUESTING: _RESTING | {SessionStatus.REQUESTING, SessionStatus.STOPPED},
    SessionStatus.WAITING: _RESTING | {SessionStatus.REQUESTING, SessionStatus.STOPPED},
    SessionStatus.WAITING_EXTERNAL: _RESTING | {SessionStatus.REQUESTING, SessionStatus.STOPPED},
    SessionStatus.STOPPED: frozenset(),
    SessionStatus.FAILED: frozenset({SessionStatus.REQUESTING, SessionStatus.STOPPED}),
}
"""Which status may follow which (any live status may also go to ``failed``). Between
turns a session rests ``idle``, ``waiting`` (calls the model will hear of run),
``waiting_external`` (only deferred ones) or ``failed`` (its model request failed, until
the next request tries again); a crash's ``failed`` ends it."""

ENDED = frozenset({SessionStatus.STOPPED, SessionStatus.FAILED})
"""The statuses an ended session shows; ``failed`` may also rest until a request is tried
again (``Session.ended`` says which)."""
WAITING = frozenset({SessionStatus.WAITING, SessionStatus.WAITING_EXTERNAL})


class Refused(Exception):
    """An event a machine refuses before it changes anything: the shell raises it to
    whoever sent the event (a ``Session.post`` caller)."""


class ReplyRefused(UsageError, Refused):
    """A post under a node, to a transcript (it has none)."""


class UnknownNode(KeyError, Refused):
    """A post under a node the board does not have."""


# ------------------------------------------------------------------ events in


@quick_init
@dataclass(frozen=True, slots=True)
class UserPosted:
    text: str
    reply_to: int | None = None
    """A board session: the node the message answers (None: a new thread)."""
    at: float = 0.0
    """Wall-clock time it was posted (the shell reads the clock; the machine never does)."""


@quick_init
@dataclass(frozen=True, slots=True)
class ModelReplied:
    content: list[Block] | None
    """The answer's blocks; None if the request failed (the shell records why)."""
    at: float = 0.0
    """Wall-clock time it arrived."""


@quick_init
@dataclass(frozen=True, slots=True)
class CallStarted:
    """One of the model's calls, now a runtime call."""

    tool_use_id: str
    call_id: CallId
    tool_name: str
    disposition: Disposition
    status: CallStatus
    token: str | None = None
    decorations: Decorations = NO_DECORATIONS
    overdue_after: float | None = None
    """Seconds after which it is overdue (and each interval after), if ever."""
    estimated: bool = False
    """``overdue_after`` is the model's own estimate, not the agent's default."""


@quick_init
@dataclass(frozen=True, slots=True)
class CallsSubmitted:
    """What the shell did with ``SubmitCalls``."""

    answers: dict[str, ToolResultBlock]
    """Capability answers, by tool_use id."""
    started: list[CallStarted]
    read: list[str]
    """Calls whose end a capability answer just told the model (either id)."""
    now: float


@quick_init
@dataclass(frozen=True, slots=True)
class CallRunning:
    call_id: CallId


@quick_init
@dataclass(frozen=True, slots=True)
class CallSettled:
    snapshot: CallSnapshot


@dataclass(frozen=True, slots=True)
class CallOverdue:
    call_id: CallId
    news: OverdueNews | None = None
    """How long it ran, its newest progress and log line, when it is next due."""


@dataclass(frozen=True, slots=True)
class TimerFired:
    now: float


@dataclass(frozen=True, slots=True)
class Resumed:
    """The session's task began: a restored turn that was asking the model asks again."""


@dataclass(frozen=True, slots=True)
class Sending:
    """The shell sends the ``SendRequest`` it was given now: a machine whose draft moved
    since (a board: a call ended meanwhile) answers with the request drafted again."""


@dataclass(frozen=True, slots=True)
class StopRequested:
    cancel_calls: bool = True


@dataclass(frozen=True, slots=True)
class CancelsDone:
    """The shell asked the runtime to cancel every call ``CancelCalls`` named."""


@dataclass(frozen=True, slots=True)
class Crashed:
    reason: str


@dataclass(frozen=True, slots=True)
class CallLost:
    """A call the restored session waited for did not survive: the model hears so."""

    tool_use_id: str
    tool_name: str


@dataclass(frozen=True, slots=True)
class OutcomeAwaited:
    """A call the restored session waited for runs (again) as ``call_id``: its outcome is
    told later, as any call's that got a placeholder."""

    call_id: CallId
    tool_use_id: str
    deferred: bool


@dataclass(frozen=True, slots=True)
class Committed:
    """The store has ``written`` (what ``to_store`` gave): what changed since stays dirty."""

    written: StoredTurn


@dataclass(frozen=True, slots=True)
class Abandoned:
    """The shell's task ended (its host is closing): nothing will move this turn again."""


Event = (
    UserPosted
    | ModelReplied
    | CallsSubmitted
    | CallRunning
    | CallSettled
    | CallOverdue
    | TimerFired
    | Resumed
    | Sending
    | StopRequested
    | CancelsDone
    | Crashed
    | CallLost
    | OutcomeAwaited
    | Committed
    | Abandoned
)


@dataclass(frozen=True, slots=True)
class StoredTurn:
    """What the store has, or is to have, of a session's turns: its status, the history
    from ``keep`` on (a board session: none) and a board session's board."""

    status: SessionStatus = SessionStatus.IDLE
    keep: int = 0
    """How many messages of the stored history stay as they are."""
    messages: tuple[Message, ...] = ()
    """The messages from ``keep`` on (``from_store``: the whole history)."""
    board: dict[str, Json] | None = None
    """A board session's whole board, with the turns it still owes (None: none)."""
    last: Message | None = None
    """The last message as it was taken (a later step may still extend it)."""

    def unwritten_from(self, history: Sequence[Message]) -> int:
        """Once this is written, the first message of ``history`` the store lacks: one
        extended since it was taken (only the last one can be; compared by value, as a
        packed history builds each message afresh) is written again."""
        upto = self.keep + len(self.messages)
        extended = upto > 0 and (len(history) < upto or history[upto - 1] != self.last)
        return upto - 1 if extended else upto


# ------------------------------------------------------------------ actions out


@quick_init
@dataclass(frozen=True, slots=True)
class SendRequest:
    """Ask the model this, as the machine drafted it (a transcript's history through its
    context view, a board drawn); answer with ``ModelReplied``."""

    messages: Sequence[Message]
    system_note: str = ""
    """Appended to the agent's system prompt for this request."""
    cache_system: bool = False
    """Mark the system prompt for the prompt cache (``ModelRequest.cache_system``)."""
    may_move: bool = False
    """The draft may change before it goes out (a board: a call may end meanwhile): the
    shell feeds ``Sending`` as it sends, and sends what that answers, if anything."""


@quick_init
@dataclass(frozen=True, slots=True)
class SubmitCalls:
    """Run these uses (capabilities, runtime calls); answer with ``CallsSubmitted``.

    ``calls``: how each use that is a runtime call runs (``options_for``), by tool_use id;
    a use without an entry is a capability, answered from the system toolbox.
    ``cached``: uses the machine answered from its cache, each with the result; the shell
    records each as a completed call, so the model can look at every call it made.
    """

    uses: list[Block]
    calls: dict[str, PlannedCall]
    cached: list[tuple[PlannedCall, Json]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ArmTimer:
    deadline: float


@dataclass(frozen=True, slots=True)
class DisarmTimer:
    pass


@dataclass(frozen=True, slots=True)
class CancelCalls:
    """Cancel these calls; answer with ``CancelsDone``."""

    call_ids: list[CallId]
    reason: str


@quick_init
@dataclass(frozen=True, slots=True)
class Commit:
    """Store what ``to_store`` gives (the history not stored yet, the status, a board)."""

    wait: bool = True
    """Whether the turn waits for the write; False: it goes on while the write is done in
    the background (before any later commit), e.g. the status once calls run."""


Action = SendRequest | SubmitCalls | ArmTimer | DisarmTimer | CancelCalls | Commit
