"""The message board (seed 004): what a board agent reads instead of a transcript.

A node is one turn: a user message, or an agent turn with its text and every
call it made. Replies hang under the node they answer; calls hang off the
node that made them. Threads are ordered by last activity (the most recently
touched renders last); within a thread, nodes go depth-first by creation.
Nodes and calls share one counter of display ids (``#1``, ``#2``, ...),
given in creation order, so they are stable and deterministic.

``Board`` is pure data: it never awaits and never reads a clock (times come
in as arguments). The board turn machine (``_board_turn``) moves it; this
module only records, answers questions about the tree, and renders.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from components import CallStatus, JsonObject


class Author(StrEnum):
    USER = "user"
    AGENT = "agent"


class Trigger(StrEnum):
    """Why an agent turn happened: it decides what the person sees of it (``chat``)."""

    USER = "user"
    """A user message."""
    RESULT = "result"
    """Every background call of a node settled."""
    TIMER = "timer"
    """A background call ran past its expected duration."""


class Did(StrEnum):
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
    tool: str
    arguments: JsonObject
    background: bool
    """True: work that outlives the turn; False: a synchronous capability answered at once."""
    status: CallStatus = CallStatus.PENDING
    outcome: str | None = None
    """The result or error in words, once final (a capability's answer at once)."""


@dataclass(slots=True)
class BoardNode:
    display_id: int
    parent: int | None
    """The node this one answers (None: a thread's root)."""
    author: Author
    text: str = ""
    calls: list[BoardCall] = field(default_factory=list)
    trigger: Trigger | None = None
    """Agent nodes: why the turn happened."""
    new_thread: bool = False
    """Posted by the ``new_thread`` capability: always shown to the person."""
    at: float = 0.0
    """Wall-clock time it was made (for the chat)."""


@dataclass(frozen=True, slots=True)
class Rendered:
    """One rendering of the board, for one request."""

    text: str
    stable_chars: int
    """Characters at the start of ``text`` that no later change before the next rendering can
    alter: the nodes of untouched threads whose calls have all landed. A prompt-cache
    breakpoint goes there."""


@dataclass(frozen=True, slots=True)
class ChatEntry:
    """One line of the person's view of the board."""

    node_id: int
    role: str
    """``user`` or ``agent``."""
    text: str
    at: float
    calls: tuple[ChatCall, ...] = ()


@dataclass(frozen=True, slots=True)
class ChatCall:
    """A call widget: a spinner while it runs, a mark once it ends."""

    display_id: int
    call_id: str
    tool: str
    arguments: JsonObject
    status: CallStatus


class Board:
    """The nodes of one session's board, and what can be asked of them."""

    def __init__(self) -> None:
        self.nodes: dict[int, BoardNode] = {}
        raise NotImplementedError

    # ------------------------------------------------------------ writing

    def post_user(self, text: str, *, reply_to: int | None = None, at: float = 0.0) -> BoardNode:
        """A user message: a new root, or a reply under ``reply_to`` (``KeyError`` if unknown)."""
        raise NotImplementedError

    def open_turn(self, parent: int, trigger: Trigger, *, at: float = 0.0) -> BoardNode:
        """An agent node under ``parent`` for one model answer."""
        raise NotImplementedError

    def new_thread(self, text: str, *, at: float = 0.0) -> BoardNode:
        """An agent root posted by the ``new_thread`` capability."""
        raise NotImplementedError

    def add_call(
        self, node_id: int, call_id: str, tool: str, arguments: JsonObject, *, background: bool
    ) -> BoardCall:
        """Hang a call off ``node_id``; it touches the thread."""
        raise NotImplementedError

    def settle(self, call_id: str, status: CallStatus, outcome: str) -> BoardNode:
        """A call ended (or a capability answered): its node, which touched its thread."""
        raise NotImplementedError

    def set_status(self, call_id: str, status: CallStatus) -> None:
        """A background call started running (not final: ``settle`` for that)."""
        raise NotImplementedError

    # ------------------------------------------------------------ reading

    def node_of_call(self, call_id: str) -> BoardNode:
        raise NotImplementedError

    def root_of(self, node_id: int) -> int:
        raise NotImplementedError

    def settled(self, node_id: int) -> bool:
        """Whether every background call of the node is final."""
        raise NotImplementedError

    def answered(self, node_id: int) -> bool:
        """A user node: an agent node with text exists anywhere below it, in its thread
        (not only directly beneath it: seed 004's open bug)."""
        raise NotImplementedError

    def cancels_on_branch(self, node_id: int) -> int:
        """Cancels spent on the branch from the root down to ``node_id`` (its ancestors and
        itself only: calls made side by side never spend each other's budget)."""
        raise NotImplementedError

    def did(self, node_id: int) -> Did:
        raise NotImplementedError

    def render(self, *, focus: int | None = None, note: str | None = None) -> Rendered:
        """The whole board as text for the model, the focus node's thread last, ``note``
        (why this turn happens) after it."""
        raise NotImplementedError

    def chat(self) -> list[ChatEntry]:
        """The person's view: user posts, and the agent nodes seed 004's table shows."""
        raise NotImplementedError


CANCEL_TOOL = "cancel_tool_call"
"""The capability whose calls spend the retry budget (``cancels_on_branch``)."""

NOTATION = "..."
"""The system prompt's one explanation of the board's notation (and that it is not to be
echoed): appended to a board agent's system prompt."""


def pending_instruction(call: BoardCall) -> str:
    """How a running call reads on the board: what runs, its id, what may be done with it
    (``get_tool_call_status`` to inspect, ``cancel_tool_call`` to stop it), and that the line
    will be replaced by its outcome."""
    raise NotImplementedError
