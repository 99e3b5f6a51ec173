"""What a person sees of one call: one shape, built here, read by every front end.

The command line's spinner and ``agentos status``, the page, the terminal UI and the
MCP server all draw a call from a ``CallView``: its ids, its status, its newest
progress payload (what the tool gave ``ctx.progress``, and the percent it says) and its
newest log line apart, its times and its disposition. A log line never replaces a
percent, and a heartbeat, the ``started`` entry or an ``overdue`` event replace neither.
It is built from a call the runtime holds (``CallView.of``, a ``CallSnapshot``) or from
the row the live mirror wrote of it (``CallView.mirrored``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeGuard

from agentos._store.protocol import MirroredCall
from components import CallSnapshot, CallStatus, Json, JsonObject


@dataclass(frozen=True, slots=True)
class CallView:
    """One call as a person sees it. Times are epoch seconds (None: not yet, or not known).

    ``progress`` is the newest payload the tool reported with ``ctx.progress`` and
    ``percent`` the percentage it says, if any (``percent_of``); ``log`` is the newest
    line it logged (``ctx.log``) or its subprocess printed. ``status`` is a word of the
    status vocabulary; ``disposition`` how its session ran it (``run_async``,
    ``decorated:run_sync``, ...; None: not said).
    """

    call_id: str
    session_id: str
    provider_call_id: str | None
    tool_name: str
    tool_input: JsonObject
    status: str
    progress: Json = None
    percent: float | None = None
    log: str | None = None
    submitted_at: float | None = None
    started_at: float | None = None
    ended_at: float | None = None
    disposition: str | None = None
    error: str | None = None

    @classmethod
    def of(cls, snapshot: CallSnapshot) -> CallView:
        """The view of a call the runtime holds."""
        partial, line = snapshot.newest_progress, snapshot.newest_log
        progress = None if partial is None else partial.payload
        error = snapshot.error
        return cls(
            call_id=snapshot.call_id,
            session_id=snapshot.session_id,
            provider_call_id=snapshot.provider_call_id,
            tool_name=snapshot.tool_name,
            tool_input=snapshot.tool_input,
            status=snapshot.status.value,
            progress=progress,
            percent=percent_of(progress),
            log=None if line is None or line.payload is None else str(line.payload),
            submitted_at=snapshot.submitted_at,
            started_at=snapshot.started_at,
            ended_at=snapshot.completed_at,
            disposition=snapshot.disposition,
            error=None if error is None else error.message,
        )

    @classmethod
    def mirrored(cls, row: MirroredCall, *, status: str | None = None) -> CallView:
        """The view of a call as the process holding its session last mirrored it;
        ``status``: what a reader decided it is now (``shown_call_status``), if not the
        row's own."""
        return cls(
            call_id=row.call_id,
            session_id=row.session_id,
            provider_call_id=row.provider_call_id,
            tool_name=row.tool_name,
            tool_input=row.tool_input,
            status=row.status if status is None else status,
            progress=row.progress,
            percent=percent_of(row.progress),
            log=row.log,
            submitted_at=row.created_at,
            started_at=row.started_at,
            ended_at=row.ended_at,
            disposition=row.disposition,
            error=row.error_message,
        )

    @property
    def final(self) -> bool:
        """Whether the call has ended (``orphaned`` counts: nothing runs it)."""
        return self.status not in _WAITING

    def elapsed(self, now: float) -> float | None:
        """Seconds it ran, until it ended or ``now``; None before it started."""
        if self.started_at is None:
            return None
        end = self.ended_at if self.ended_at is not None else now
        return max(0.0, end - self.started_at)

    def progress_text(self) -> str:
        """One line of what it reported: ``40% · fetched page 4``; the payload itself when it
        says no percent; '' when it reported nothing."""
        parts = []
        if self.percent is not None:
            parts.append(f"{self.percent:.0f}%")
        elif self.progress is not None:
            parts.append(compact(self.progress))
        if self.log is not None:
            parts.append(self.log)
        return " · ".join(parts)

    def to_json(self) -> JsonObject:
        return {
            "call_id": self.call_id,
            "session_id": self.session_id,
            "provider_call_id": self.provider_call_id,
            "tool_name": self.tool_name,
            "tool_input": self.tool_input,
            "status": self.status,
            "progress": self.progress,
            "percent": self.percent,
            "log": self.log,
            "submitted_at": self.submitted_at,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "disposition": self.disposition,
            "error": self.error,
        }


_WAITING = frozenset({CallStatus.PENDING.value, CallStatus.RUNNING.value})
"""Statuses of a call not ended (a deferred one waiting for its token is ``pending``)."""


def percent_of(payload: Json) -> float | None:
    """A progress payload's percentage, when it says one: ``{"percent": 40}``, or a part
    of a whole (``{"page": 3, "of": 10}``, ``{"done": 3, "total": 10}``)."""
    if not isinstance(payload, Mapping):
        return None
    value = payload.get("percent")
    if _number(value):
        return max(0.0, min(100.0, float(value)))
    for part, whole in (("page", "of"), ("done", "total")):
        have, of = payload.get(part), payload.get(whole)
        if _number(have) and _number(of) and of:
            return max(0.0, min(100.0, 100.0 * float(have) / float(of)))
    return None


def compact(value: Json) -> str:
    """A payload on one line: a string as it is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
