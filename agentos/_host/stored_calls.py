"""What a stored session says of its tool calls, as ``CallView``s, with no runtime.

Read from the stored history and the session's continuation tokens only: a call is
``completed``, ``failed`` or ``cancelled`` (with its reason) when the history holds its
outcome (``failed`` noting ``expired: ...`` when its token ran out); ``orphaned`` when it
was lost in a restart; and otherwise what ``shown_call_status`` says: by its token,
``pending`` (noting it is deferred) while it waits, ``completed`` (or ``failed``) once its
token was completed and the session has yet to deliver it, ``failed`` (noting it expired)
once the token's time ran out; with no token (it was running when stored), ``running``
while a live process holds the session, else ``orphaned``. ``call_lookup`` merges in what
a live process holding the session mirrors.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypedDict

from agentos._board.board import Board
from agentos._host.call_view import CallView
from agentos._host.shown import ShownStatus
from agentos._host.shown import calls_running_when_stored
from agentos._host.shown import shown_call_status
from agentos._host.shown import shown_session_status
from agentos._model.messages import blocks_of
from agentos._store.protocol import StoredSession
from agentos._store.protocol import StoredToken
from agentos._turns.history import MessageHistory
from components import CallStatus
from components import Json
from components import JsonObject

_LOST_RESULT = "lost in a restart"
_CANCELLED = "cancelled: "
"""How a cancelled call's result starts (``failure_text``); the reason follows."""


def stored_calls(
    stored: StoredSession, tokens: Iterable[StoredToken], *, live: bool = False
) -> list[CallView]:
    """Every ``tool_use`` of the history, in order, with its status (a board session's:
    every call on its board); ``live``: a live process holds the session (a call the
    history has no outcome for runs there, else nowhere: ``shown_call_status``)."""
    if stored.board is not None:
        return _board_calls(stored.session_id, Board.from_json(stored.board), tokens, live)
    history = stored.history
    index = MessageHistory()
    index.load("stored", history)
    by_use = {token.provider_call_id: token for token in tokens}
    uses = [b for message in history for b in blocks_of(message) if b.get("type") == "tool_use"]
    reasons = _cancel_reasons(uses)
    calls = []
    for use in uses:
        use_id = str(use.get("id"))
        token = by_use.get(use_id)
        known = index.find_call("stored", use_id)
        result: Json = None
        reason = note = None
        if known is not None and known.status is not None:
            result = known.result
            shown = shown_call_status(known.status.value, live=live, result=result)
            status, note = CallStatus(shown.status), shown.note
            if status is CallStatus.FAILED and str(result).startswith(_LOST_RESULT):
                status = CallStatus.ORPHANED
            if status is CallStatus.CANCELLED:
                said = str(result) if isinstance(result, str) else ""
                reason = said.removeprefix(_CANCELLED) if said.startswith(_CANCELLED) else None
                reason = reason or reasons.get(use_id) or reasons.get(str(known.internal_id))
        else:
            status, note, result = _without_outcome(token, live)
        calls.append(
            CallView(
                call_id=None if known is None else known.internal_id,
                session_id=stored.session_id,
                provider_call_id=use_id,
                tool_name=str(use.get("name", "")),
                tool_input=_arguments(use.get("input")),
                status=status,
                result=result,
                cancel_reason=reason,
                note=note,
                **_token_fields(token),
            )
        )
    return calls


class _TokenFields(TypedDict):
    continuation_token: str | None
    token_completed: bool | None
    deferred: bool


def _token_fields(token: StoredToken | None) -> _TokenFields:
    """What a stored call's continuation token says of it (a call with one was deferred)."""
    if token is None:
        return {"continuation_token": None, "token_completed": None, "deferred": False}
    done = token.completed_at is not None
    return {"continuation_token": token.token, "token_completed": done, "deferred": True}


def _arguments(arguments: object) -> JsonObject:
    """A ``tool_use``'s input (an object, as the model gives it)."""
    return arguments if isinstance(arguments, dict) else {}


def _without_outcome(token: StoredToken | None, live: bool) -> tuple[CallStatus, str | None, Json]:
    """A call its history (or board) holds no outcome for: its status and note as its token
    and its session's holder say (``shown_call_status``), and what completing its token gave
    it (its error, if it failed; None while nothing did)."""
    shown = shown_call_status(None, live=live, token=token)
    outcome: Json = None
    if token is not None:
        outcome = token.result if token.error is None else token.error
    return CallStatus(shown.status), shown.note, outcome


def _board_calls(
    session_id: str, board: Board, tokens: Iterable[StoredToken], live: bool
) -> list[CallView]:
    """Every call on a stored board, in the order made, with its status."""
    tokens = list(tokens)
    by_use = {token.provider_call_id: token for token in tokens}
    by_call = {token.call_id: token for token in tokens}
    calls = []
    for node in board.nodes.values():
        for call in node.calls:
            token = by_use.get(call.use_id or "") or by_call.get(call.call_id)
            result: Json = call.outcome
            status, reason, note = call.status, None, None
            if not call.status.is_final:
                status, note, result = _without_outcome(token, live)
            elif status is CallStatus.FAILED:
                note = shown_call_status(status.value, live=live, result=result).note
            elif status is CallStatus.CANCELLED:
                reason = str(result).removeprefix(_CANCELLED) if result else None
            calls.append(
                CallView(
                    call_id=call.call_id if call.background else None,
                    session_id=session_id,
                    provider_call_id=call.use_id or call.call_id,
                    tool_name=call.tool_name,
                    tool_input=call.tool_input,
                    status=status,
                    result=result,
                    cancel_reason=reason,
                    note=note,
                    **_token_fields(token),
                )
            )
    return calls


def _cancel_reasons(uses: Iterable[dict[str, object]]) -> dict[str, str]:
    """The reason the model gave for each call it cancelled with ``cancel_tool_call``."""
    reasons = {}
    for use in uses:
        arguments = use.get("input")
        if use.get("name") == "cancel_tool_call" and isinstance(arguments, dict):
            reason = arguments.get("reason", "cancelled by the model")
            reasons[str(arguments.get("tool_call_id"))] = str(reason)
    return reasons


def session_status(stored: StoredSession, tokens: Iterable[StoredToken], live: bool) -> ShownStatus:
    """How the stored session stands (``shown_session_status``), its history and tokens at
    hand."""
    running = calls_running_when_stored(stored, tokens)
    return shown_session_status(stored.status, live=live, were_running=len(running))
