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

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from components._ids import CallId, Entity, SessionId
from components._packed import pack, unpack
from components._snapshot import CallSnapshot
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
"""What was asked (the ``ToolCallConfig`` fields a snapshot shows, in its order), then where
it ended (the ``ToolCallState`` fields, likewise), then when retention forgets it (monotonic
seconds; None: never). Each enum as its value, the input and the result packed
(``components._packed``), the error as ``(kind, message)``, and the kept progress as one
packed ``(entries, dropped, partial, line)``, each entry ``(seq, at, kind, payload)``
(None: the call reported nothing but its start)."""

_SESSION, _INPUT, _PROVIDER, _DEFERRED = 1, 3, 4, 9
_STATUS, _STARTED, _RESULT, _ERROR, _LOG, _CANCEL_REASON, _DUE = 12, 14, 16, 17, 18, 21, 23
_SHOWN_FIRST = slice(_PROVIDER, _PROVIDER + 4)
"""``provider_call_id`` to ``parent_call_id``, which a snapshot shows before the times."""
_SHOWN_LAST = slice(_PROVIDER + 4, _STATUS)
"""``label`` to ``disposition``, which a snapshot shows last."""
_TIMES = slice(_STATUS + 1, _RESULT)
_COUNTS = slice(_LOG + 1, _DUE)
"""``progress_seq``, ``version``, ``cancel_reason`` and ``overdue``."""

_STATUSES = {status.value: status for status in CallStatus}
_ERROR_KINDS = {kind.value: kind for kind in ErrorKind}
_PROGRESS_KINDS = {kind.value: kind for kind in ProgressKind}

FlatEntry = tuple[int, float, str, Any]


def finished_call(config: ToolCallConfig, state: ToolCallState, due: float | None) -> FinishedCall:
    """The record of a call that has ended (``state.status`` is final), forgotten at ``due``."""
    error = state.error
    log = state.log
    return (
        config.call_id,
        config.session_id,
        config.tool_name,
        pack(config.tool_input),
        config.provider_call_id,
        config.conversation_id,
        config.turn_id,
        config.parent_call_id,
        config.label,
        config.deferred,
        config.from_cache,
        config.disposition,
        state.status.value,
        state.submitted_at,
        state.started_at,
        state.completed_at,
        pack(state.result),
        None if error is None else (error.kind.value, error.message),
        None if log is None else pack(_flat_log(log)),
        state.progress_seq,
        state.version,
        state.cancel_reason,
        state.overdue > 0,
        due,
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
            *record[_SHOWN_FIRST],
            *record[_TIMES],
            unpack(record[_RESULT]),
            None if error is None else CallError(_ERROR_KINDS[error[0]], error[1]),
            entries,
            dropped,
            *record[_COUNTS],
            *record[_SHOWN_LAST],
            None if partial is None else _entry(partial),
            None if line is None else _entry(line),
            None,
        )
    )


@dataclass(slots=True)
class FinishedCalls:
    """The record of each call that has ended, by entity id, until retention forgets it.

    Every call is kept the same ``Limits.retention_seconds`` and the clock only moves on, so
    calls are forgotten in the order they ended: a queue of entity ids, each record saying
    when it is due, where a deadline in the heap cost each call ~130 bytes and made every
    other deadline's push and pop climb a heap as tall as all the calls kept.
    """

    records: dict[Entity, FinishedCall] = field(default_factory=dict)
    queue: deque[Entity] = field(default_factory=deque)
    """The entities of the records that are due some time, in the order they are due."""

    def keep(self, entity: Entity, record: FinishedCall) -> None:
        self.records[entity] = record
        if record[_DUE] is not None:
            self.queue.append(entity)

    def get(self, entity: Entity) -> FinishedCall | None:
        return self.records.get(entity)

    def __contains__(self, entity: Entity) -> bool:
        return entity in self.records

    def __getitem__(self, entity: Entity) -> FinishedCall:
        return self.records[entity]

    def pop_due(self, now: float) -> tuple[Entity, FinishedCall] | None:
        """The oldest record due at or before ``now``, forgotten; None if none is due."""
        queue = self.queue
        if queue:
            record = self.records[queue[0]]
            if record[_DUE] <= now:
                entity = queue.popleft()
                del self.records[entity]
                return entity, record
        return None

    def next_due(self) -> float | None:
        """When the oldest record is due (None: none ever is)."""
        return self.records[self.queue[0]][_DUE] if self.queue else None


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
