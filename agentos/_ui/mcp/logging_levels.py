"""MCP logging for ``agentos mcp``: a client that sets a level (``logging/setLevel``) hears
its turns' call events at that level and above as ``notifications/message``; one that sets
none hears them only as progress.

A call's log and output lines are ``info``, its progress ``debug``, a question for a person
``notice``, an overdue call ``warning``, a failure or timeout ``error``.
"""

from __future__ import annotations

from typing import get_args

from mcp_types import LoggingLevel

from agentos import CallEvent
from agentos import CallEventKind
from agentos import ProgressKind

LEVELS: tuple[LoggingLevel, ...] = get_args(LoggingLevel)
"""The levels from the least severe (``debug``) to the most (``emergency``)."""

_BY_KIND: dict[CallEventKind, LoggingLevel] = {
    CallEventKind.QUEUED: "debug",
    CallEventKind.STARTED: "debug",
    CallEventKind.PROGRESSED: "debug",
    CallEventKind.COMPLETED: "info",
    CallEventKind.CANCELLED: "info",
    CallEventKind.OVERDUE: "warning",
    CallEventKind.FAILED: "error",
    CallEventKind.TIMED_OUT: "error",
}
_BY_PROGRESS: dict[ProgressKind, LoggingLevel] = {
    ProgressKind.LOG: "info",
    ProgressKind.OUTPUT: "info",
    ProgressKind.ANSWER: "info",
    ProgressKind.QUESTION: "notice",
}


def level_of(event: CallEvent) -> LoggingLevel:
    """How severe a call event is, as a log message."""
    if event.kind is CallEventKind.PROGRESSED and event.progress is not None:
        return _BY_PROGRESS.get(event.progress.kind, "debug")
    return _BY_KIND.get(event.kind, "info")


def heard_at(level: LoggingLevel, wanted: LoggingLevel | None) -> bool:
    """Whether a message at ``level`` goes to a client that set ``wanted`` (None: none)."""
    return wanted is not None and LEVELS.index(level) >= LEVELS.index(wanted)
