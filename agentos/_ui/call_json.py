"""A call as JSON for every front end that draws one: the page's and the terminal UI's
widgets and peeks, and what ``agentos show``, ``calls`` and ``status`` print.

Each is shaped from a ``CallView`` (``agentos.stores``): built from the runtime's
snapshot for a call this process runs, from the store for one it does not, so the page
(live or read from the store), the terminal UI and the command line say one call alike.
Every value is data: the page's script puts it in the DOM as text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TypeGuard

from agentos import CallSnapshot
from agentos._ui.durations import timestamp
from agentos.board import ChatCall
from agentos.board import ChatEntry
from agentos.stores import CallView
from agentos.turns import EXPECTED_SECONDS
from components import CallStatus
from components import Json
from components import JsonObject

PREVIEW_CHARS = 2_000
"""A result or payload longer than this is cut in widgets (the peek shows it whole)."""


def call_widgets(
    chat: Sequence[ChatEntry], snapshots: Sequence[CallSnapshot], now: float
) -> dict[str, JsonObject]:
    """A widget per call the chat shows (``call_widget``), by call id."""
    held: dict[str, CallSnapshot] = {snapshot.call_id: snapshot for snapshot in snapshots}
    return {
        call.call_id: call_widget(call, held.get(call.call_id), now)
        for entry in chat
        for call in entry.calls
    }


def call_widget(call: ChatCall, snapshot: CallSnapshot | None, now: float) -> JsonObject:
    """A call's widget: live while the runtime holds it (``snapshot``), else what the chat
    knows (its tool, arguments and status, ``orphaned`` included)."""
    return live_widget(snapshot, call, now) if snapshot else chat_widget(call)


def chat_widget(call: ChatCall) -> JsonObject:
    """A call known only from the chat (ended, forgotten or lost in a restart)."""
    return {
        "call_id": call.call_id,
        "tool_name": call.tool_name,
        "tool_input": _shown_args(call.tool_input),
        "status": call.status.value,
        "final": call.status.is_final,
        "expected_seconds": _expected(call.tool_input),
        "percent": None,
        "latest": None,
        "log": None,
        "elapsed": None,
        "error": None,
        "note": call.note,
        "child": None,
        "disposition": None,
        "question": None,
    }


def live_widget(snapshot: CallSnapshot, call: ChatCall, now: float) -> JsonObject:
    """A call the runtime holds: its status, newest progress and newest log line (apart:
    ``percent`` and ``latest`` come from the progress, ``log`` beside), times, and the
    ``question`` it waits to have answered."""
    view = CallView.of(snapshot)
    status = call.status if call.status is CallStatus.ORPHANED else snapshot.status
    widget = chat_widget(call)
    widget.update(call_id=snapshot.call_id, tool_name=snapshot.tool_name)
    widget.update(status=status.value, final=status.is_final, **_live_fields(view, now))
    return widget  # ``note``: what the runtime's own turns did with it (overdue, looked at)


def stored_widget(call: ChatCall, stored: CallView | None, now: float) -> JsonObject:
    """A call of a session run elsewhere (or nowhere): the chat's widget, with the status,
    progress and times the store holds (``stored``: the call as ``session_calls`` read it)."""
    widget = chat_widget(call)
    if stored is None:
        return widget
    widget.update(status=stored.status.value, final=stored.final)
    if stored.note is not None:  # why it has that status: deferred, expired, orphaned
        marks = [str(widget["note"])] if widget["note"] else []
        widget["note"] = " · ".join([*marks, stored.note])
    if stored.updated_at is not None:  # mirrored: its live word
        widget.update(_live_fields(stored, now))
    return widget


def _live_fields(view: CallView, now: float) -> JsonObject:
    elapsed = view.elapsed(now)
    return {
        "percent": view.percent,
        "latest": _brief(view.progress),
        "log": _brief(view.log),
        "elapsed": None if elapsed is None else round(elapsed, 1),
        "error": view.error,
        "disposition": view.disposition,
        "question": None if view.question is None else view.question.to_json(),
    }


def peek(snapshot: CallSnapshot, now: float | None = None) -> JsonObject:
    """A call's progress log and its result or error, whole. Each progress entry's
    ``after`` is the seconds since the call started; with ``now`` (epoch seconds),
    ``elapsed`` is how long it has run (until it ended), for a page to say in words."""
    started = snapshot.started_at
    elapsed = None if now is None else CallView.of(snapshot).elapsed(now)
    return {
        "call_id": snapshot.call_id,
        "tool_name": snapshot.tool_name,
        "tool_input": snapshot.tool_input,
        "status": snapshot.status.value,
        "progress": [
            {
                "seq": entry.seq,
                "at": entry.at,
                "after": None if started is None else round(max(0.0, entry.at - started), 1),
                "kind": entry.kind.value,
                "payload": entry.payload,
            }
            for entry in snapshot.progress
        ],
        "progress_dropped": snapshot.progress_dropped,
        "result": snapshot.result if snapshot.status is CallStatus.COMPLETED else None,
        "error": None if snapshot.error is None else snapshot.error.message,
        "cancel_reason": snapshot.cancel_reason,
        "expected_seconds": _expected(snapshot.tool_input),
        "elapsed": None if elapsed is None else round(elapsed, 1),
        "question": None if snapshot.question is None else snapshot.question.to_json(),
    }


def stored_peek(call: CallView, now: float | None = None) -> JsonObject:
    """``peek`` of a call the store knows: its latest progress (the log stays with its holder)."""
    elapsed = None if now is None else call.elapsed(now)
    return {
        "call_id": call.request_id,
        "tool_name": call.tool_name,
        "tool_input": call.tool_input,
        "status": call.status.value,
        "progress": [] if call.progress is None else [{"payload": call.progress}],
        "progress_dropped": 0,
        "result": call.result if call.status is CallStatus.COMPLETED else None,
        "error": call.error,
        "cancel_reason": call.cancel_reason,
        "expected_seconds": _expected(call.tool_input),
        "elapsed": None if elapsed is None else round(elapsed, 1),
    }


def stored_call_json(call: CallView) -> JsonObject:
    """A call as its stored history says it (``agentos show --json``'s ``calls``)."""
    return {
        "provider_call_id": call.provider_call_id,
        "call_id": call.call_id,
        "tool_name": call.tool_name,
        "tool_input": call.tool_input,
        "status": call.status.value,
        "result": call.result,
        "continuation_token": call.continuation_token,
        "token_completed": call.token_completed,
        "cancel_reason": call.cancel_reason,
        "deferred": call.deferred,
        "note": call.note,
    }


def looked_up_json(call: CallView) -> JsonObject:
    """A call as the store says it, history and live mirror (``agentos status`` and
    ``calls``): ``stored_call_json`` with who holds its session, and the mirror's word
    (the ``question`` it waits to have answered among it)."""
    return stored_call_json(call) | {
        "session_id": call.session_id,
        "holder": call.holder,
        "live": call.live,
        "progress": call.progress,
        "percent": call.percent,
        "log": call.log,
        "disposition": call.disposition,
        "progress_count": call.progress_count,
        "error": call.error,
        "created_at": _when(call.submitted_at),
        "started_at": _when(call.started_at),
        "ended_at": _when(call.ended_at),
        "updated_at": _when(call.updated_at),
        "question": None if call.question is None else call.question.to_json(),
    }


def _when(at: float | None) -> str | None:
    return None if at is None else timestamp(at)


def _shown_args(arguments: Mapping[str, Json]) -> JsonObject:
    return {name: value for name, value in arguments.items() if name != EXPECTED_SECONDS}


def _expected(arguments: Mapping[str, Json]) -> float | None:
    value = arguments.get(EXPECTED_SECONDS)
    return float(value) if _number(value) else None


def _number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _brief(value: Json) -> Json:
    if value is None or isinstance(value, int | float | bool):
        return value
    text = value if isinstance(value, str) else _dump(value)
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
