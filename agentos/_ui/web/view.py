"""What a session's web page shows, as JSON: the chat, a widget per call, the model's context.

Plain data built from the session's public reads (``chat``, ``next_messages``)
and the runtime's snapshots, so the page, its event stream and the tests see
one shape; a session this server does not run is drawn in the same shape from
the store (``stored_page_state``: its history, and the calls as its holder
mirrors them, ``agentos.stores.session_calls``). Each call's widget is
``call_json``'s, as the terminal UI draws it. Every value is data: the page's
script puts it in the DOM as text.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentos import PartialReply
from agentos import Runtime
from agentos import Session
from agentos import child_session_id
from agentos._ui.call_json import call_widgets
from agentos._ui.call_json import stored_widget
from agentos._ui.context_text import context_text
from agentos.board import Board
from agentos.board import ChatEntry
from agentos.stores import CallView
from agentos.stores import SessionCalls
from agentos.stores import shown_session_status
from agentos.stores import stored_chat
from agentos.stores import stored_title
from components import Json
from components import JsonObject

ERRORS_SHOWN = 3
"""The session's latest errors the page shows (a failed model request, say)."""


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


def stored_page_state(looked: SessionCalls, now: float) -> JsonObject:
    """A session this server does not run, as ``page_state`` draws one: its stored chat,
    its status, and each call as its holder last mirrored it (else as the history left
    it), as ``session_calls`` read them."""
    stored, status = looked.session, looked.status
    found = {key: call for call in looked.calls for key in _keys(call)}
    chat = stored_chat(stored)
    agents = stored.config.get("agents")
    widgets: JsonObject = {
        call.call_id: stored_widget(call, found.get(call.call_id), now)
        for entry in chat
        for call in entry.calls
    }
    for key, widget in widgets.items():  # a sub-agent's call: the child it ran, by its id
        live = found.get(key)
        internal = None if live is None else live.call_id
        if isinstance(widget, dict) and isinstance(agents, dict) and internal is not None:
            tool = str(widget["tool_name"])
            widget["child"] = child_session_id(tool, internal) if tool in agents else None
    if stored.board is not None:
        context = Board.from_json(stored.board).render().text
    else:
        context = context_text(stored.history)
    return {
        "session_id": stored.session_id,
        "title": stored_title(stored),
        "status": status.status,
        "status_note": status.note,
        "view": str(stored.config.get("context_view", "transcript")),
        "chat": [chat_entry(entry) for entry in chat],
        "calls": widgets,
        "context": context,
        "errors": [],
        "streaming": None,
    }


def _keys(call: CallView) -> list[str]:
    """The ids a chat may know a stored call by: the model's, and the runtime's."""
    return [key for key in (call.provider_call_id, call.call_id) if key]


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
