"""What every turn machine is to its shell (``Machine``), and what it shows of itself
(``MachineView``).

``TurnMachine`` (a transcript) and ``BoardMachine`` (a board) differ in what
the model reads and when a turn goes on; both take events and return actions
for the same shell, report the status the same way (each holds a ``TurnStatus``),
and are stored and restored the same way (``StoredTurn``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from agentos._model.messages import Message, ToolResultBlock
from agentos._turns.chat import ChatEntry
from agentos._turns.events import (
    Action,
    CallRunning,
    Committed,
    Event,
    Sending,
    SessionStatus,
    StoredTurn,
)
from agentos._turns.history import MessageHistory
from components import CallId

VIEW_KEPT = (CallRunning, Sending, Committed)
"""Frequent events that change nothing a view shows: it is not drawn again."""


class MachineView(NamedTuple):
    """A machine as it is now, for the shell and ``Session`` to read (a tuple: it is read
    after every event, and made as often)."""

    status: SessionStatus
    requests: int
    ended: bool
    """Stopped, or failed for good (a crash; a failed model request ends nothing)."""
    free: bool
    """No turn runs: the status is a resting one."""
    stopping: bool
    at_rest: bool
    """Ended, or free with nothing queued that would grant a turn."""
    messages: Callable[[], tuple[Message, ...]]
    """A transcript's messages as they were drawn (a board session's: none, its board is
    its record); copied only when asked, so drawing a view costs the same however long
    the history is."""
    outstanding: Mapping[CallId, str]
    """Calls whose outcome the model has not heard yet -> tool_use id."""
    calls: MessageHistory
    """What the history says of each call: the source of ``orphaned``."""
    queued_posts: tuple[str, ...]
    """User messages the chat does not show yet (a board shows a post at once)."""
    said: Callable[[], list[str]]
    """The text of every assistant message (a board's agent nodes), in order."""
    posted: Callable[[], list[str]]
    """What the person said, oldest first: where a session's first words come from."""

    @property
    def history(self) -> tuple[Message, ...]:
        return self.messages()

    @property
    def replies(self) -> list[str]:
        return self.said()

    @property
    def posts(self) -> list[str]:
        return self.posted()


def as_drawn(history: list[Message]) -> Callable[[], tuple[Message, ...]]:
    """``history`` as it is now, copied when asked (``MachineView.messages``)."""
    drawn = len(history)
    return lambda: tuple(history[:drawn])


@dataclass(frozen=True, slots=True)
class Waiting:
    """A call a restored session still waits for (a placeholder, no outcome told)."""

    tool_use_id: str
    tool_name: str
    call_id: CallId | None
    """The runtime's id, if the stored session names one."""


class Machine(Protocol):
    """A session's turns as the shell (``_sessions``) drives them: events in through
    ``handle``, actions out; ``view`` to read it; ``to_store``/``from_store`` for the store."""

    own_tools: tuple[dict[str, object], ...]
    """Tool definitions the machine adds to the agent's (the board's ``new_thread``)."""

    def handle(self, event: Event) -> list[Action]: ...
    def view(self) -> MachineView: ...
    def chat(self) -> list[ChatEntry]: ...
    def next_messages(self) -> list[Message]: ...
    def awaits(self, call_id: CallId) -> bool: ...
    def to_store(self) -> StoredTurn: ...
    def from_store(
        self, stored: StoredTurn, held: Mapping[str, ToolResultBlock], *, asked: bool = False
    ) -> list[Waiting]: ...
