"""A finished call as the runtime keeps it for its retention: one plain tuple, no entity.

A call that ends leaves the ECS world at the end of its tick; what a status answer needs
(its ``CallSnapshot``) stays, until retention forgets it, as a tuple of text, numbers,
None and ``bytes``. The collector stops tracking such a tuple, where the entity was three
tracked objects (its two components and esper's dict of them, ~1.1 KB). A tuple that holds
a dict, an enum member or a dataclass stays tracked, so the record holds the call's JSON
packed and enums by their value, and ``finished_snapshot`` builds them again; a call that
reported nothing keeps no progress (its ``started`` entry is made from ``started_at``, as
``ToolCallState`` does).
"""

from __future__ import annotations

from typing import Any

from components._ids import CallId, SessionId
from components._packed import pack, unpack
from components._snapshot import CallSnapshot, snapshot_of
from components._status import CallStatus
from components._tool_call import (
    CallError,
    ErrorKind,
    ProgressKind,
    ProgressLog,
    ToolCallConfig,
    ToolCallProgress,
    ToolCallState,
    started_entry,
)

FinishedCall = tuple[Any, ...]
"""The ``CallSnapshot`` fields in their order, up to ``disposition``: each enum as its value,
the input and the result packed (``components._packed``), the error as ``(kind, message)``,
and the four progress fields as one packed ``(entries, dropped, partial, line)``, each entry
as ``(seq, at, kind, payload)`` (None: the call reported nothing but its start)."""

_SESSION, _PROVIDER = 1, 5
_INPUT, _STATUS, _STARTED, _RESULT, _ERROR, _LOG = 3, 4, 10, 12, 13, 14
_CANCEL_REASON, _DEFERRED = 17, 20
_LOG_TAIL = slice(_LOG + 1, _LOG + 9)
"""``progress_seq`` to ``disposition``, after the packed log (in a ``CallSnapshot``: 16 to
24, after the four progress fields)."""

_STATUSES = {status.value: status for status in CallStatus}
_ERROR_KINDS = {kind.value: kind for kind in ErrorKind}
_PROGRESS_KINDS = {kind.value: kind for kind in ProgressKind}

FlatEntry = tuple[int, float, str, Any]


def finished_call(config: ToolCallConfig, state: ToolCallState) -> FinishedCall:
    """The record of a call that has ended (``state.status`` is final)."""
    snapshot = snapshot_of(config, state)
    error = snapshot.error
    log = state.log
    return (
        *snapshot[:_INPUT],
        pack(snapshot.tool_input),
        snapshot.status.value,
        *snapshot[_STATUS + 1 : _RESULT],
        pack(snapshot.result),
        None if error is None else (error.kind.value, error.message),
        None if log is None else pack(_flat_log(log)),
        *snapshot[16:24],
    )


def finished_snapshot(record: FinishedCall) -> CallSnapshot:
    """The call's snapshot, built again from its record: equal to the one it ended with."""
    log = record[_LOG]
    partial = line = None
    dropped = 0
    if log is not None:
        flat, dropped, partial, line = unpack(log)
        entries = tuple(_entry(entry) for entry in flat)
    elif record[_STARTED] is not None:
        entries = (started_entry(record[_STARTED]),)
    else:
        entries = ()
    error = record[_ERROR]
    return CallSnapshot._make(
        (
            *record[:_INPUT],
            unpack(record[_INPUT]),
            _STATUSES[record[_STATUS]],
            *record[_STATUS + 1 : _RESULT],
            unpack(record[_RESULT]),
            None if error is None else CallError(_ERROR_KINDS[error[0]], error[1]),
            entries,
            dropped,
            *record[_LOG_TAIL],
            None if partial is None else _entry(partial),
            None if line is None else _entry(line),
            None,
        )
    )


def finished_status(record: FinishedCall) -> CallStatus:
    return _STATUSES[record[_STATUS]]


def finished_id(record: FinishedCall) -> CallId:
    return record[0]  # type: ignore[no-any-return]


def finished_session(record: FinishedCall) -> SessionId:
    return record[_SESSION]  # type: ignore[no-any-return]


def finished_provider_id(record: FinishedCall) -> str | None:
    return record[_PROVIDER]  # type: ignore[no-any-return]


def finished_deferred(record: FinishedCall) -> bool:
    return record[_DEFERRED]  # type: ignore[no-any-return]


def finished_why(record: FinishedCall) -> str | None:
    """The reason a cancel gave, else the error's message (a timeout's), else None."""
    reason: str | None = record[_CANCEL_REASON]
    if reason is not None:
        return reason
    error = record[_ERROR]
    return None if error is None else error[1]


def _flat_log(
    log: ProgressLog,
) -> tuple[tuple[FlatEntry, ...], int, FlatEntry | None, FlatEntry | None]:
    partial, line = log.partial, log.line
    return (
        tuple(_flat(entry) for entry in log.entries),
        log.dropped,
        None if partial is None else _flat(partial),
        None if line is None else _flat(line),
    )


def _flat(entry: ToolCallProgress) -> FlatEntry:
    return (entry.seq, entry.at, entry.kind.value, entry.payload)


def _entry(flat: FlatEntry) -> ToolCallProgress:
    seq, at, kind, payload = flat
    return ToolCallProgress(seq, at, _PROGRESS_KINDS[kind], payload)
