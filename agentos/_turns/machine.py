"""What every turn machine is to its shell (``Machine``), and what it shows of itself
(``MachineView``).

``TurnMachine`` (a transcript) and ``BoardMachine`` (a board) differ in what
the model reads and when a turn goes on; both take events and return actions
for the same shell, report the status the same way (each holds a ``TurnStatus``),
and are stored and restored the same way (``StoredTurn``).
"""

from __future__ import annotations

from abc import ABC
from abc import abstractmethod
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple
from typing import Protocol

from agentos._model.messages import Message
from agentos._model.messages import ToolResultBlock
from agentos._turns.chat import ChatEntry
from agentos._turns.events import Action
from agentos._turns.events import CallRunning
from agentos._turns.events import Committed
from agentos._turns.events import Event
from agentos._turns.events import Sending
from agentos._turns.events import SessionStatus
from agentos._turns.events import StoredTurn
from agentos._turns.history import MessageHistory
from components import CallId

VIEW_KEPT = (CallRunning, Sending, Committed)
"""Frequent events that change nothing a view shows: it is not drawn again."""


class ViewSource(Protocol):
    """What a view reads its long parts from, and only when they are asked for: drawing a
    view then costs the same however long the history is."""

    def messages_upto(self, count: int) -> Sequence[Message]: ...
    def replies_upto(self, count: int) -> list[str]: ...
    def posts_upto(self, count: int) -> list[str]: ...


class MachineView(NamedTuple):
    """A machine as it is now, for the shell and ``Session`` to read (a tuple: it is read
    after every event, and made as often). Its fields are the moment's; ``history``,
    ``replies`` and ``posts`` are read from the machine when asked (a transcript's history
    up to its length then, a board's posts as they are): draw a view again after an event
    (``Machine.view``) rather than keep one.
    """

    status: SessionStatus
    requests: int
    ended: bool
    """Stopped, or failed for good (a crash; a failed model request ends nothing)."""
    free: bool
    """No turn runs: the status is a resting one."""
    stopping: bool
    at_rest: bool
    """Ended, or free with nothing queued that would grant a turn."""
    outstanding: Mapping[CallId, str]
    """Calls whose outcome the model has not heard yet -> tool_use id."""
    calls: MessageHistory
    """What the history says of each call: the source of ``orphaned``."""
    queued_posts: tuple[str, ...]
    """User messages the chat does not show yet (a board shows a post at once)."""
    source: ViewSource
    """The machine, read when ``history``, ``replies`` or ``posts`` is asked for."""
    length: int
    """How many messages the history held when the view was drawn."""

    @property
    def history(self) -> Sequence[Message]:
        """A transcript's messages (a board session's: none, its board is its record)."""
        return self.source.messages_upto(self.length)

    @property
    def replies(self) -> list[str]:
        """The text of every assistant message (a board's agent nodes), in order."""
        return self.source.replies_upto(self.length)

    @property
    def posts(self) -> list[str]:
        """What the person said, oldest first: where a session's first words come from."""
        return self.source.posts_upto(self.length)


@dataclass(frozen=True, slots=True)
class Waiting:
    """A call a restored session still waits for (a placeholder, no outcome told)."""

    tool_use_id: str
    tool_name: str
    call_id: CallId | None
    """The runtime's id, if the stored session names one."""


class DrawnAfterEvents(ABC):
    """The entry point both machines share: an event applied, the view drawn again unless
    the event changes nothing it shows (``VIEW_KEPT``)."""

    view: MachineView

    def handle(self, event: Event) -> list[Action]:
        """Apply one event; return what the shell must do, in order."""
        actions = self._apply(event)  # a refusal changes nothing; a bug is told as Crashed
        if not isinstance(event, VIEW_KEPT):
            self.view = self._drawn_view()
        return actions

    @abstractmethod
    def _apply(self, event: Event) -> list[Action]: ...

    @abstractmethod
    def _drawn_view(self) -> MachineView: ...


class Machine(Protocol):
    """A session's turns as the shell (``_sessions``) drives them: events in through
    ``handle``, actions out; ``view`` to read it; ``to_store``/``from_store`` for the store."""

    own_tools: tuple[dict[str, object], ...]
    """Tool definitions the machine adds to the agent's (the board's ``new_thread``)."""
    view: MachineView
    """The machine as it is now, drawn again after each event that changes it."""

    def handle(self, event: Event) -> list[Action]: ...
    def chat(self) -> list[ChatEntry]: ...
    def next_messages(self) -> Sequence[Message]: ...
    def awaits(self, call_id: CallId) -> bool: ...
    def to_store(self) -> StoredTurn: ...
    def from_store(
        self, stored: StoredTurn, held: Mapping[str, ToolResultBlock], *, asked: bool = False
    ) -> list[Waiting]: ...
