"""How a session's state becomes what the model reads.

A view takes the session's history and a snapshot of its calls and returns
the provider messages. The transcript view sends the history as it is; a
message-board view (later) re-renders threads and pending calls every turn,
which is why the calls are part of the input.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from agentos._model.messages import Message
from agentos._turns.packed import PackedMessages
from components import CallSnapshot
from components import quick_init


@quick_init
@dataclass(frozen=True, slots=True)
class ViewInput:
    """``calls`` is a function, so a view that does not need the calls does not pay for them."""

    session_id: str
    history: Sequence[Message]
    calls: Callable[[], Sequence[CallSnapshot]]


class ContextView(Protocol):
    def build(self, view_input: ViewInput) -> Sequence[Message]: ...


class TranscriptView:
    """The history as the model wrote it and the session answered it."""

    def build(self, view_input: ViewInput) -> Sequence[Message]:
        """The history itself when it cannot change (a session's: its messages are built
        as the model reads them), else a copy."""
        history = view_input.history
        return history if isinstance(history, PackedMessages) else list(history)
