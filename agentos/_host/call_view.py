"""What a person sees of one call: one shape, built here, read by every front end.

The command line's spinner, ``agentos status`` and ``calls``, the page, the terminal UI
and the MCP server all draw a call from a ``CallView``: its ids, its status (a
``CallStatus``), its newest progress payload (what the tool gave ``ctx.progress``, and the
percent it says) and its newest log line apart, its times and its disposition. A log line
never replaces a percent, and a heartbeat, the ``started`` entry or an ``overdue`` event
replace neither. It is built from a call the runtime holds (``CallView.of``, a
``CallSnapshot``) or from what the store says of it (``CallView.stored``: its history's
word, merged with the row the live mirror wrote, ``_host/call_lookup.py``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import replace
from typing import TypeGuard

from agentos._host.shown import is_expiry
from agentos._store.protocol import MirroredCall
from components import CallSnapshot
from components import CallStatus
from components import Json
from components import JsonObject
from components import Question


@dataclass(frozen=True, slots=True)
class CallView:
    """One call as a person sees it. Times are epoch seconds (None: not yet, or not known).

    ``progress`` is the newest payload the tool reported with ``ctx.progress`` and
    ``percent`` the percentage it says, if any (``percent_of``); ``log`` is the newest
    line it logged (``ctx.log``) or its subprocess printed. ``status`` is a word of the
    status vocabulary; ``disposition`` how its session ran it (``run_async``,
    ``decorated:run_sync``, ...; None: not said).

    Read from the store (``CallView.stored``), it also says what its history left:
    ``note`` (why it has that status: deferred, expired, orphaned), its ``result`` and
    ``cancel_reason``, its continuation token if ``deferred``; who ``holder``s its session
    now and who ``mirrored_by`` wrote the live word on it (``live``: the same), with the
    mirror's ``progress_count``, ``error_kind`` and ``updated_at`` (None: never mirrored).
    ``call_id`` is None there when the history does not name the runtime's id.
    """

    call_id: str | None
    session_id: str
    provider_call_id: str | None
    tool_name: str
    tool_input: JsonObject
    status: CallStatus
    progress: Json = None
    percent: float | None = None
    log: str | None = None
    submitted_at: float | None = None
    started_at: float | None = None
    ended_at: float | None = None
    disposition: str | None = None
    error: str | None = None
    note: str | None = None
    result: Json = None
    cancel_reason: str | None = None
    continuation_token: str | None = None
    token_completed: bool | None = None
    deferred: bool = False
    holder: str | None = None
    mirrored_by: str | None = None
    progress_count: int | None = None
    error_kind: str | None = None
    updated_at: float | None = None
    question: Question | None = None
    """What the running call asks a person and waits to have answered (``ctx.ask``)."""

    def __post_init__(self) -> None:
        # A program may still build one with the status as text, as the field once was.
        if type(self.status) is not CallStatus:
            object.__setattr__(self, "status", CallStatus(self.status))

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
            status=snapshot.status,
            progress=progress,
            percent=percent_of(progress),
            log=None if line is None or line.payload is None else str(line.payload),
            submitted_at=snapshot.submitted_at,
            started_at=snapshot.started_at,
            ended_at=snapshot.completed_at,
            disposition=snapshot.disposition,
            error=None if error is None else error.message,
            question=snapshot.question,
        )

    @classmethod
    def mirrored(cls, row: MirroredCall, *, status: str | None = None) -> CallView:
        """The view of a call as the process holding its session last mirrored it;
        ``status``: what a reader decided it is now (``shown_call_status``), if not the
        row's own. Its question shows only while it is ``running``: nobody waits for the
        answer of a call that ended, or that no live process runs."""
        shown = CallStatus(row.status if status is None else status)
        asks = row.question is not None and shown is CallStatus.RUNNING
        return cls(
            call_id=row.call_id,
            session_id=row.session_id,
            provider_call_id=row.provider_call_id,
            tool_name=row.tool_name,
            tool_input=row.tool_input,
            status=shown,
            progress=row.progress,
            percent=percent_of(row.progress),
            log=row.log,
            submitted_at=row.created_at,
            started_at=row.started_at,
            ended_at=row.ended_at,
            disposition=row.disposition,
            error=row.error_message,
            mirrored_by=row.holder,
            progress_count=row.progress_count,
            error_kind=row.error_kind,
            updated_at=row.updated_at,
            question=Question.from_json(row.question) if asks else None,
        )

    @classmethod
    def stored(cls, said: CallView, row: MirroredCall | None, holder: str | None) -> CallView:
        """The view of a call the store knows: ``said`` is what its history says (its
        status already decided, ``call_lookup.merge``), ``row`` what the live mirror wrote
        of it (None: nothing), ``holder`` who holds its session now (None: nobody)."""
        if row is None:
            return replace(said, holder=holder)
        live = cls.mirrored(row, status=said.status)
        return replace(said, holder=holder, **{name: getattr(live, name) for name in _MIRRORED})

    @property
    def request_id(self) -> str:
        """The id to name it by: the runtime's, else the model's."""
        return self.call_id or self.provider_call_id or ""

    @property
    def live(self) -> bool:
        """Whether the mirrored word on it is that of the process holding its session now."""
        return self.holder is not None and self.mirrored_by == self.holder

    @property
    def waits_for_token(self) -> bool:
        """A deferred call still waiting: only its token (``agentos complete``) ends it."""
        return self.deferred and self.status is CallStatus.PENDING

    @property
    def expired(self) -> bool:
        """A deferred call that failed because nobody completed its token in time."""
        return self.status is CallStatus.FAILED and is_expiry(self.note)

    @property
    def final(self) -> bool:
        """Whether the call has ended (``orphaned`` counts: nothing runs it)."""
        return self.status.is_final

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
            "status": self.status.value,
            "progress": self.progress,
            "percent": self.percent,
            "log": self.log,
            "submitted_at": self.submitted_at,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "disposition": self.disposition,
            "error": self.error,
            "question": None if self.question is None else self.question.to_json(),
        }


_MIRRORED = (
    *("progress", "percent", "log", "submitted_at", "started_at", "ended_at", "disposition"),
    *("error", "mirrored_by", "progress_count", "error_kind", "updated_at", "question"),
)
"""What the live mirror says of a call, beside what its history says."""


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
