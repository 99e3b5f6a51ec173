"""A finished call as the runtime keeps it for its retention: one ``bytes``, no entity.

A call that ends leaves the ECS world at the end of its tick; what a status answer needs
(its ``CallSnapshot``) stays, until retention forgets it, as one ``marshal`` blob of a
flat tuple of text, numbers and None (in memory only, never stored). The collector does
not track it, where the entity was three tracked objects (its two components and esper's
dict of them, ~1.1 KB), and it is one object of ~190 bytes, where the tuple of its fields
with their floats and packed values was ~450. Enums are kept by their value, and
``finished_snapshot`` builds them again; a call that reported nothing keeps no progress
(its ``started`` entry is made from ``started_at``, as ``ToolCallState`` does). A call whose
input, result or progress ``marshal`` cannot pack keeps the tuple itself, those values
packed one by one (``components._packed``).
"""

from __future__ import annotations

import marshal
from array import array
from collections import deque
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from components._ids import CallId
from components._ids import Entity
from components._ids import SessionId
from components._packed import kept_bytes
from components._packed import pack
from components._packed import unpack
from components._snapshot import CallSnapshot
from components._status import STATUS_TEXT
from components._status import CallStatus
from components._tool_call import CallError
from components._tool_call import ErrorKind
from components._tool_call import ProgressKind
from components._tool_call import ProgressLog
from components._tool_call import ToolCallConfig
from components._tool_call import ToolCallProgress
from components._tool_call import ToolCallState
from components._tool_call import started_entry

FinishedCall = bytes | tuple[Any, ...]
"""The ``marshal`` bytes of a flat tuple: what was asked (the ``ToolCallConfig`` fields a
snapshot shows, in its order), then where it ended (the ``ToolCallState`` fields,
likewise). Each enum as its value, the error as ``(kind, message)``, and the kept progress
as ``(entries, dropped, partial, line)``, each entry ``(seq, at, kind, payload)`` (None:
the call reported nothing but its start). A value ``marshal`` cannot pack keeps the tuple
itself, its input, result and progress each packed (``components._packed``)."""

_SESSION, _INPUT, _PROVIDER, _DEFERRED = 1, 3, 4, 9
_STATUS, _STARTED, _RESULT, _ERROR, _LOG, _CANCEL_REASON = 12, 14, 16, 17, 18, 21
_END = 23
_SHOWN_FIRST = slice(_PROVIDER, _PROVIDER + 4)
"""``provider_call_id`` to ``parent_call_id``, which a snapshot shows before the times."""
_SHOWN_LAST = slice(_PROVIDER + 4, _STATUS)
"""``label`` to ``disposition``, which a snapshot shows last."""
_TIMES = slice(_STATUS + 1, _RESULT)
_COUNTS = slice(_LOG + 1, _END)
"""``progress_seq``, ``version``, ``cancel_reason`` and ``overdue``."""

_STATUSES = {status.value: status for status in CallStatus}
_ERROR_KINDS = {kind.value: kind for kind in ErrorKind}
_PROGRESS_KINDS = {kind.value: kind for kind in ProgressKind}

FlatEntry = tuple[int, float, str, Any]


def finished_call(config: ToolCallConfig, state: ToolCallState) -> FinishedCall:
    """The record of a call that has ended (``state.status`` is final)."""
    error = state.error
    log = state.log
    fields = (
        config.call_id,
        config.session_id,
        config.tool_name,
        config.tool_input,
        config.provider_call_id,
        config.conversation_id,
        config.turn_id,
        config.parent_call_id,
        config.label,
        config.deferred,
        config.from_cache,
        config.disposition,
        STATUS_TEXT[state.status],
        state.submitted_at,
        state.started_at,
        state.completed_at,
        state.result,
        None if error is None else (error.kind.value, error.message),
        None if log is None else _flat_log(log),
        state.progress_seq,
        state.version,
        state.cancel_reason,
        state.overdue > 0,
    )
    try:
        return kept_bytes(marshal.dumps(fields))
    except ValueError:  # a value of a type of its own: each packed value is packed alone
        return (
            *fields[:_INPUT],
            pack(fields[_INPUT]),
            *fields[_INPUT + 1 : _RESULT],
            pack(fields[_RESULT]),
            fields[_ERROR],
            pack(fields[_LOG]),
            *fields[_LOG + 1 :],
        )


def _fields(record: FinishedCall) -> tuple[Any, ...]:
    """The record's flat tuple (its input, result and progress packed if it kept a tuple)."""
    return marshal.loads(record) if type(record) is bytes else record  # type: ignore[return-value]


def finished_snapshot(record: FinishedCall) -> CallSnapshot:
    """The call's snapshot, built again from its record: equal to the one it ended with."""
    if type(record) is bytes:
        fields = marshal.loads(record)
        tool_input, result, log = fields[_INPUT], fields[_RESULT], fields[_LOG]
    else:
        fields = record
        tool_input, result = unpack(fields[_INPUT]), unpack(fields[_RESULT])
        log = unpack(fields[_LOG])
    partial = line = None
    dropped = 0
    if log is not None:
        flat, dropped, partial, line = log
        entries = tuple(_entry(entry) for entry in flat)
    elif fields[_STARTED] is not None:
        entries = (started_entry(fields[_STARTED]),)
    else:
        entries = ()
    error = fields[_ERROR]
    return CallSnapshot._make(
        (
            *fields[:_INPUT],
            tool_input,
            _STATUSES[fields[_STATUS]],
            *fields[_SHOWN_FIRST],
            *fields[_TIMES],
            result,
            None if error is None else CallError(_ERROR_KINDS[error[0]], error[1]),
            entries,
            dropped,
            *fields[_COUNTS],
            *fields[_SHOWN_LAST],
            None if partial is None else _entry(partial),
            None if line is None else _entry(line),
            None,
        )
    )


@dataclass(slots=True)
class FinishedCalls:
    """The record of each call that has ended, by entity id, until retention forgets it.

    Every call is kept the same ``Limits.retention_seconds`` and the clock only moves on, so
    calls are forgotten in the order they ended: a queue of entity ids and, beside it, when
    each is due (an array of doubles), where a deadline in the heap
    cost each call ~130 bytes and made every other deadline's push and pop climb a heap as
    tall as all the calls kept.
    """

    records: dict[Entity, FinishedCall] = field(default_factory=dict)
    queue: deque[Entity] = field(default_factory=deque)
    """The entities of the records that are due some time, in the order they are due."""
    dues: array[float] = field(default_factory=lambda: array("d"))
    """When each of ``queue`` is due (monotonic seconds), in the same order, from ``head``
    on: 8 bytes each, not a float object per tick that ended calls."""
    head: int = 0

    def keep(self, entity: Entity, record: FinishedCall, due: float | None) -> None:
        """Keep ``record`` until ``due`` (None: until the runtime closes)."""
        self.records[entity] = record
        if due is not None:
            self.queue.append(entity)
            self.dues.append(due)

    def get(self, entity: Entity) -> FinishedCall | None:
        return self.records.get(entity)

    def __contains__(self, entity: Entity) -> bool:
        return entity in self.records

    def __getitem__(self, entity: Entity) -> FinishedCall:
        return self.records[entity]

    def pop_due(self, now: float) -> tuple[Entity, FinishedCall] | None:
        """The oldest record due at or before ``now``, forgotten; None if none is due."""
        dues, head = self.dues, self.head
        if head < len(dues) and dues[head] <= now:
            head += 1
            if head >= _COMPACT_AT and head * 2 >= len(dues):
                del dues[:head]  # the dues passed: a copy of the rest, now and then
                head = 0
            self.head = head
            entity = self.queue.popleft()
            return entity, self.records.pop(entity)
        return None

    def next_due(self) -> float | None:
        """When the oldest record is due (None: none ever is)."""
        return self.dues[self.head] if self.head < len(self.dues) else None


_COMPACT_AT = 1024
"""Dues passed before the array drops them (when they are half of it or more)."""


def finished_status(record: FinishedCall) -> CallStatus:
    return _STATUSES[_fields(record)[_STATUS]]


def finished_id(record: FinishedCall) -> CallId:
    return _fields(record)[0]  # type: ignore[no-any-return]


def finished_session(record: FinishedCall) -> SessionId:
    return _fields(record)[_SESSION]  # type: ignore[no-any-return]


def finished_provider_id(record: FinishedCall) -> str | None:
    return _fields(record)[_PROVIDER]  # type: ignore[no-any-return]


def finished_deferred(record: FinishedCall) -> bool:
    return _fields(record)[_DEFERRED]  # type: ignore[no-any-return]


def finished_why(record: FinishedCall) -> str | None:
    """The reason a cancel gave, else the error's message (a timeout's), else None."""
    fields = _fields(record)
    reason: str | None = fields[_CANCEL_REASON]
    if reason is not None:
        return reason
    error = fields[_ERROR]
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
