"""A call as it was at one moment: the immutable copy every reader and listener gets."""

from __future__ import annotations

from typing import NamedTuple

from components._ids import CallId
from components._ids import ConversationId
from components._ids import SessionId
from components._ids import TurnId
from components._json import Json
from components._json import JsonObject
from components._question import Question
from components._status import CallStatus
from components._tool_call import CallError
from components._tool_call import ToolCallConfig
from components._tool_call import ToolCallProgress
from components._tool_call import ToolCallState


class CallSnapshot(NamedTuple):
    """One call as it was at one moment: an immutable copy. Times are epoch seconds.

    ``version`` grows with every visible change (status, progress, overdue);
    compare it with the one you saw last to know whether anything moved.
    (A named tuple rather than a frozen dataclass: it is built on every read,
    and this is three times cheaper to build.)
    """

    call_id: CallId
    session_id: SessionId
    tool_name: str
    tool_input: JsonObject
    status: CallStatus
    provider_call_id: str | None
    conversation_id: ConversationId | None
    turn_id: TurnId | None
    parent_call_id: CallId | None
    submitted_at: float
    started_at: float | None
    completed_at: float | None
    result: Json
    error: CallError | None
    progress: tuple[ToolCallProgress, ...]
    progress_dropped: int
    progress_seq: int
    version: int
    cancel_reason: str | None
    overdue: bool
    label: str | None = None
    deferred: bool = False
    from_cache: bool = False
    """Answered from a cache: it completed at once and never ran."""
    disposition: str | None = None
    """How its owner runs it (a session's ``run_sync``, ``run_async``, ``run_isolated``,
    ``defer``; ``decorated:run_async`` for one its policy decorates); None: not said."""
    newest_progress: ToolCallProgress | None = None
    """The newest ``partial`` report (what the tool gave ``ctx.progress``), even when newer
    log lines pushed it out of ``progress``."""
    newest_log: ToolCallProgress | None = None
    """The newest ``log`` or ``output`` line, even when newer reports pushed it out."""
    question: Question | None = None
    """What the running call asks a person and waits to have answered (``ctx.ask``)."""

    @property
    def is_final(self) -> bool:
        return self.status.is_final


_new_snapshot = tuple.__new__
"""How ``snapshot_of`` makes a ``CallSnapshot``: every field given, so without the named
tuple's own ``__new__`` and its call (one is made for every call's end)."""


def snapshot_of(config: ToolCallConfig, state: ToolCallState) -> CallSnapshot:
    progress, dropped = state.entries()
    log = state.log
    return _new_snapshot(
        CallSnapshot,
        (
            config.call_id,
            config.session_id,
            config.tool_name,
            config.tool_input,
            state.status,
            config.provider_call_id,
            config.conversation_id,
            config.turn_id,
            config.parent_call_id,
            state.submitted_at,
            state.started_at,
            state.completed_at,
            state.result,
            state.error,
            progress,
            dropped,
            state.progress_seq,
            state.version,
            state.cancel_reason,
            state.overdue > 0,
            config.label,
            config.deferred,
            config.from_cache,
            config.disposition,
            None if log is None else log.partial,
            None if log is None else log.line,
            None if log is None or log.question is None else _asked(log.question, state.status),
        ),
    )


def _asked(entry: ToolCallProgress, status: CallStatus) -> Question | None:
    """The question a running call waits on (a call that ended waits on none)."""
    return Question.from_json(entry.payload) if status is CallStatus.RUNNING else None
