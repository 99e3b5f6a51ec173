"""The board's vocabulary: who wrote a node, why a turn happened, what it did,
and the records a board holds and hands out. Data only; ``board`` moves it."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from enum import StrEnum

from components import CallStatus
from components import JsonObject


class BoardAuthor(StrEnum):
    """Who wrote a node: the person or the agent."""

    USER = "user"
    AGENT = "agent"


class BoardTrigger(StrEnum):
    """Why an agent turn happened: it decides what the person sees of it (``chat``)."""

    USER = "user"
    """A user message."""
    RESULT = "result"
    """Every background call of a node settled."""
    TIMER = "timer"
    """A background call ran past its expected duration."""


class BoardAct(StrEnum):
    """What one agent node did: the other half of the visibility table."""

    LOOKED = "looked"
    """Only synchronous capabilities (status, cancel, list)."""
    STARTED = "started"
    """Started background work."""
    FINAL = "final"
    """No call: the turn's last word."""


@dataclass(slots=True)
class BoardCall:
    """A call hanging off the node that made it."""

    display_id: int
    call_id: str
    """The runtime's id for a background call; the tool_use id for a capability."""
    tool_name: str
    tool_input: JsonObject
    background: bool
    """True: work that outlives the turn; False: a synchronous capability answered at once."""
    status: CallStatus = CallStatus.PENDING
    outcome: str | None = None
    """The result or error in words, once final (a capability's answer at once)."""
    use_id: str | None = None
    """The model's tool_use id (the provider's id) of a background call, when known."""


@dataclass(slots=True)
class BoardNode:
    """One turn: a user message, or an agent turn with its text and every call it made."""

    display_id: int
    parent: int | None
    """The node this one answers (None: a thread's root)."""
    author: BoardAuthor
    text: str = ""
    calls: list[BoardCall] = field(default_factory=list)
    trigger: BoardTrigger | None = None
    """Agent nodes: why the turn happened."""
    new_thread: bool = False
    """Posted by the ``new_thread`` capability: always shown to the person."""
    at: float = 0.0
    """Wall-clock time it was made (for the chat)."""


@dataclass(frozen=True, slots=True)
class BoardRendering:
    """One rendering of the board, for one request."""

    text: str
    stable_chars: int
    """Characters at the start of ``text`` that no later change before the next rendering can
    alter: the nodes of untouched threads whose calls have all landed."""
    settled_chars: int = 0
    """Characters before the first line that the next turn is likely to change: those
    ``stable_chars`` counts, then the nodes before the first open marker (``..``), running
    call or reference to one; in the focus thread, whose open question is being answered,
    before its first open node even when its calls have landed. A prompt-cache breakpoint
    goes there."""
    breaks: tuple[int, ...] = ()
    """The offsets where each node's lines end: the board goes to the model as one text
    block per node, so that an earlier request's breakpoint is a block boundary of the next
    (the prompt cache looks for earlier breakpoints at block boundaries only)."""


CANCEL_TOOL = "cancel_tool_call"
"""The capability whose calls spend the retry budget (``cancels_on_branch``)."""
STATUS_TOOL = "get_tool_call_status"
"""The capability that inspects a running call (named in a pending call's instruction)."""
NEW_THREAD_TOOL = "new_thread"
"""The capability that opens a thread the person sees (named in ``NOTATION``)."""
