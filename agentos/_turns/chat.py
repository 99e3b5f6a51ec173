"""What a person sees of any session: the plain chat a UI shows, with a widget per call.

A transcript session and a board session project their own state into these
records, so the web page and the terminal UI draw one shape for both.
"""

from __future__ import annotations

from dataclasses import dataclass

from components import CallStatus, JsonObject


@dataclass(frozen=True, slots=True)
class ChatCall:
    """A call widget: a spinner while it runs, a mark once it ends."""

    display_id: int
    call_id: str
    tool_name: str
    tool_input: JsonObject
    status: CallStatus


@dataclass(frozen=True, slots=True)
class ChatEntry:
    """One line of the person's view of a session."""

    node_id: int
    role: str
    """``user`` or ``agent``."""
    text: str
    at: float
    calls: tuple[ChatCall, ...] = ()
