"""What a session's web page shows, as JSON: the chat, a widget per call, the model's context.

Plain data built from the session's public reads (``chat``, ``next_messages``)
and the runtime's snapshots, so the page, its event stream and the tests see
one shape; a session this server does not run is drawn in the same shape from
the store (``stored_page_state``: its history, and the calls as its holder
mirrors them). Every value is data: the page's script puts it in the DOM as text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TypeGuard

from agentos import CallSnapshot, PartialReply, Runtime, Session, child_session_id
from agentos._ui.stored.live import LiveCall
from agentos.board import Board, ChatCall, ChatEntry
from agentos.stores import CallView, ShownStatus, StoredSession, shown_session_status, stored_chat
from agentos.turns import EXPECTED_SECONDS, Message, blocks_of
from components import CallStatus, Json, JsonObject

ERRORS_SHOWN = 3
"""The session's latest errors the page shows (a failed model request, say)."""
PREVIEW_CHARS = 2_000
"""A result or payload longer than this is cut in widgets (the peek shows it whole)."""
_WAITING = frozenset({"running", "pending"})
"""A stored call's statuses that are not final (a deferred one waiting is ``pending``)."""


def page_state(session: Session, runtime: Runtime, now: float) -> JsonObject:
    """Everything the session page draws (``now``: epoch seconds, for elapsed times)."""
    chat = session.chat
    calls: JsonObject = dict(call_widgets(chat, runtime.list_calls(session.session_id), now))
    for widget in calls.values():  # a sub-agent's call: its child's chat is a page of its own
        if isinstance(widget, dict) and widget["tool_name"] in session.config.agents:
            widget["child"] = child_session_id(str(widget["tool_name"]), str(widget["call_id"]))
    entries: list[Json] = [chat_entry(entry) for entry in chat]
    entries += [queued_entry(words) for words in session.queued_posts]
    return {
        "session_id": session.session_id,
        "title": session.title,
        "status": session.status.value,
        "status_note": shown_session_status(session.status, live=True).note,
        "view": session.config.context_view,
        "chat": entries,
        "calls": calls,
        "context": context_text(session.next_messages()),
        "errors": folded(session.errors)[-ERRORS_SHOWN:],
        "streaming": streaming(session.streaming),
    }


def streaming(partial: PartialReply | None) -> Json:
    """The model's reply as it forms: its text, and each tool it asks for once whole."""
    if partial is None:
        return None
    calls: list[Json] = [
        {
            "provider_call_id": use.get("id"),
            "tool_name": use.get("name"),
            "tool_input": use.get("input"),
        }
        for use in partial.tool_uses
    ]
    return {"text": partial.text, "calls": calls}


def stored_page_state(
    stored: StoredSession, calls: Sequence[LiveCall], status: ShownStatus, now: float
) -> JsonObject:
    """A session this server does not run, as ``page_state`` draws one: its stored chat,
    its ``status`` (``stored_session_status``), and each call as its holder last mirrored
    it (else as the history left it)."""
    found = {key: call for call in calls for key in _keys(call)}
    chat = stored_chat(stored)
    agents = stored.config.get("agents")
    widgets: JsonObject = {
        call.call_id: stored_widget(call, found.get(call.call_id), now)
        for entry in chat
        for call in entry.calls
    }
    for key, widget in widgets.items():  # a sub-agent's call: the child it ran, by its id
        live = found.get(key)
        internal = None if live is None else live.call.call_id
        if isinstance(widget, dict) and isinstance(agents, dict) and internal is not None:
            tool = str(widget["tool_name"])
            widget["child"] = child_session_id(tool, internal) if tool in agents else None
    if stored.board is not None:
        context = Board.from_json(stored.board).render().text
    else:
        context = context_text(stored.history)
    return {
        "session_id": stored.session_id,
        "title": stored.shown_title(),
        "status": status.status,
        "status_note": status.note,
        "view": str(stored.config.get("context_view", "transcript")),
        "chat": [chat_entry(entry) for entry in chat],
        "calls": widgets,
        "context": context,
        "errors": [],
        "streaming": None,
    }


def stored_widget(call: ChatCall, live: LiveCall | None, now: float) -> JsonObject:
    """A call of a session run elsewhere (or nowhere): the chat's widget, with the status,
    progress and times the store holds."""
    widget = chat_widget(call)
    if live is None:
        return widget
    row, status = live.row, live.call.status
    widget.update(status=status, final=status not in _WAITING)
    if live.call.note is not None:  # why it has that status: deferred, expired, orphaned
        marks = [str(widget["note"])] if widget["note"] else []
        widget["note"] = " · ".join([*marks, live.call.note])
    if row is not None:
        view = CallView.mirrored(row, status=status)
        elapsed = view.elapsed(now)
        widget.update(
            percent=view.percent,
            latest=_brief(view.progress),
            log=_brief(view.log),
            elapsed=None if elapsed is None else round(elapsed, 1),
            error=view.error,
            disposition=view.disposition,
        )
    return widget


def stored_peek(live: LiveCall, now: float | None = None) -> JsonObject:
    """``peek`` of a call the store knows: its latest progress (the log stays with its holder)."""
    row, call = live.row, live.call
    elapsed = None if row is None or now is None else CallView.mirrored(row).elapsed(now)
    return {
        "call_id": call.call_id or call.provider_call_id,
        "tool_name": call.tool_name,
        "tool_input": call.tool_input,
        "status": call.status,
        "progress": [] if row is None or row.progress is None else [{"payload": row.progress}],
        "progress_dropped": 0,
        "result": call.result if call.status == "completed" else None,
        "error": None if row is None else row.error_message,
        "cancel_reason": call.cancel_reason,
        "expected_seconds": _expected(call.tool_input)
        if isinstance(call.tool_input, dict)
        else None,
        "elapsed": None if elapsed is None else round(elapsed, 1),
    }


def _keys(live: LiveCall) -> list[str]:
    """The ids a chat may know a stored call by: the model's, and the runtime's."""
    return [key for key in (live.call.provider_call_id, live.call.call_id) if key]


def folded(errors: Sequence[str]) -> list[Json]:
    """``errors`` with each run of one repeated error said once, with its count (a store
    that refuses every commit fails each of them the same way)."""
    runs: list[tuple[str, int]] = []
    for error in errors:
        if runs and runs[-1][0] == error:
            runs[-1] = (error, runs[-1][1] + 1)
        else:
            runs.append((error, 1))
    return [error if count == 1 else f"{error} (x{count})" for error, count in runs]


def chat_entry(entry: ChatEntry) -> JsonObject:
    return {
        "node_id": entry.node_id,
        "role": entry.role,
        "text": entry.text,
        "at": entry.at,
        "calls": [call.call_id for call in entry.calls],
        "queued": False,
    }


def queued_entry(words: str) -> JsonObject:
    """A message posted while the model was busy, which it has not read yet."""
    return {"node_id": None, "role": "user", "text": words, "at": None, "calls": [], "queued": True}


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
    }


def live_widget(snapshot: CallSnapshot, call: ChatCall, now: float) -> JsonObject:
    """A call the runtime holds: its status, newest progress and newest log line (apart:
    ``percent`` and ``latest`` come from the progress, ``log`` beside), and times."""
    view = CallView.of(snapshot)
    elapsed = view.elapsed(now)
    status = call.status if call.status is CallStatus.ORPHANED else snapshot.status
    return {
        "call_id": snapshot.call_id,
        "tool_name": snapshot.tool_name,
        "tool_input": _shown_args(call.tool_input),
        "status": status.value,
        "final": status.is_final,
        "expected_seconds": _expected(call.tool_input),
        "percent": view.percent,
        "latest": _brief(view.progress),
        "log": _brief(view.log),
        "elapsed": None if elapsed is None else round(elapsed, 1),
        "error": view.error,
        "note": call.note,  # what the runtime's own turns did with it: overdue, looked at
        "child": None,  # a sub-agent's call: the child session it runs (``page_state``)
        "disposition": view.disposition,
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
    }


def context_text(messages: Sequence[Message]) -> str:
    """Messages as a developer reads them: each block on its own lines, by role."""
    lines: list[str] = []
    for message in messages:
        role = str(message.get("role", "?"))
        for block in blocks_of(message):
            kind = block.get("type")
            if kind == "text":
                lines.append(f"[{role}] {block.get('text', '')}")
            elif kind == "tool_use":
                lines.append(f"[{role}] tool_use {block.get('name')} {_dump(block.get('input'))}")
            elif kind == "tool_result":
                lines.append(f"[{role}] tool_result {_content_text(block.get('content'))}")
    return "\n".join(lines)


def _content_text(content: object) -> str:
    """A tool result's content as the model reads it: its text, not a JSON-quoted string."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(block.get("text", "")) if isinstance(block, Mapping) else _dump(block)
            for block in content
        )
    return _dump(content)


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
