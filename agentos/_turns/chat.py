"""What a person sees of any session: the plain chat a UI shows, with a widget per call.

A transcript session and a board session project their own state into these
records, so the web page and the terminal UI draw one shape for both.
"""

from __future__ import annotations

from dataclasses import dataclass

from components import CallStatus
from components import JsonObject

SHOWN_WORDS: frozenset[tuple[str, str]] = frozenset(
    {("user", "started"), ("user", "final"), ("result", "final")}
)
"""The table of what the user sees: (what prompted the turn: ``user``, ``result`` or
``timer``; what the agent message did: ``looked``, ``started`` work or gave the ``final``
word). In these three cells the agent talks to the person; in the other six (every look,
work started after a result, anything a timer prompted) it talks to itself. The board
and the transcript both project their chat by it."""


def clock_text(seconds: float) -> str:
    """``0:12``, ``3:05``, ``1:02:03``: a duration as a person reads a stopwatch."""
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


@dataclass(frozen=True, slots=True)
class ChatCall:
    """A call widget: a spinner while it runs, a mark once it ends."""

    display_id: int
    call_id: str
    tool_name: str
    tool_input: JsonObject
    status: CallStatus
    note: str = ""
    """A quiet mark of what turns the runtime prompted did with it (``overdue · looked at
    0:12``): their words are the model's, never shown as the person's or the agent's."""


@dataclass(frozen=True, slots=True)
class ChatEntry:
    """One line of the person's view of a session."""

    node_id: int
    role: str
    """``user`` or ``agent``."""
    text: str
    at: float
    calls: tuple[ChatCall, ...] = ()
