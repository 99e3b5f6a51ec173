"""What a stored session says of its tool calls, for ``agentos show`` and ``agentos calls``.

Read from the stored history and the session's continuation tokens only, so
it works with no runtime: a call is ``completed``, ``failed`` or
``cancelled`` (with its reason) when the history holds its outcome (``failed``
noting ``expired: ...`` when its token ran out); ``orphaned`` when it was lost in
a restart; and otherwise what ``shown_call_status`` says: by its token, ``pending``
(noting it is deferred) while it waits, ``completed`` (or ``failed``) once its
token was completed and the session has yet to deliver it, ``failed`` (noting it
expired) once the token's time ran out; with no token (it was running when stored),
``running`` while a live process holds the session, else ``orphaned``. ``live``
merges in what a live process holding the session mirrors.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from agentos.board import Board
from agentos.stores import (
    ShownStatus,
    StoredSession,
    StoredToken,
    calls_running_when_stored,
    is_expiry,
    short_id,
    shown_call_status,
    shown_session_status,
    stored_chat,
)
from agentos.turns import MessageHistory, blocks_of
from components import CallStatus, Json, JsonObject

_LOST_RESULT = "lost in a restart"
_CANCELLED = "cancelled: "
"""How a cancelled call's result starts (``failure_text``); the reason follows."""


@dataclass(frozen=True, slots=True)
class StoredCall:
    provider_call_id: str
    tool_name: str
    tool_input: Json
    status: str
    call_id: str | None = None
    """The runtime's id, when the history names it (placeholders do)."""
    result: Json = None
    continuation_token: str | None = None
    token_completed: bool | None = None
    cancel_reason: str | None = None
    note: str | None = None
    """What the status alone does not say (``shown_call_status``: deferred, expired, ...)."""
    deferred: bool = False
    """Whether a continuation token ends the call (not the runtime): ``pending`` is then
    waiting for that token."""

    @property
    def waits_for_token(self) -> bool:
        """A deferred call still waiting: only its token (``agentos complete``) ends it."""
        return self.deferred and self.status == CallStatus.PENDING.value

    @property
    def expired(self) -> bool:
        """A deferred call that failed because nobody completed its token in time."""
        return self.status == CallStatus.FAILED.value and is_expiry(self.note)

    def to_json(self) -> JsonObject:
        return {
            "provider_call_id": self.provider_call_id,
            "call_id": self.call_id,
            "tool_name": self.tool_name,
            "tool_input": self.tool_input,
            "status": self.status,
            "result": self.result,
            "continuation_token": self.continuation_token,
            "token_completed": self.token_completed,
            "cancel_reason": self.cancel_reason,
            "deferred": self.deferred,
            "note": self.note,
        }

    def describe(self) -> str:
        """One line: the status and what came of the call."""
        if self.waits_for_token:
            return f"pending (deferred: token {self.continuation_token or '?'}, not completed)"
        if self.status == "running":
            note = "" if self.note is None else f" ({self.note})"
            return f"running{note}"
        if self.status == "orphaned":
            return f"orphaned ({self.note or 'lost in a restart'})"
        if self.expired and self.continuation_token is not None:
            return f"failed: expired, token {self.continuation_token} was not completed in time"
        if self.status == "cancelled":
            outcome = f"cancelled: {self.cancel_reason or 'no reason recorded'}"
        else:
            outcome = f"{self.status}: {brief(self.result)}"
        if self.continuation_token is not None:
            note = "" if self.note is None else f"; {self.note}"
            outcome += f"  [deferred, token {self.continuation_token}{note}]"
        return outcome


def stored_calls(
    stored: StoredSession, tokens: Iterable[StoredToken], *, live: bool = False
) -> list[StoredCall]:
    """Every ``tool_use`` of the history, in order, with its status (a board session's:
    every call on its board); ``live``: a live process holds the session (a call the
    history has no outcome for runs there, else nowhere: ``shown_call_status``)."""
    if stored.board is not None:
        return _board_calls(Board.from_json(stored.board), tokens, live)
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
            status, note = shown.status, shown.note
            if status == "failed" and str(result).startswith(_LOST_RESULT):
                status = "orphaned"
            if status == "cancelled":
                said = str(result) if isinstance(result, str) else ""
                reason = said.removeprefix(_CANCELLED) if said.startswith(_CANCELLED) else None
                reason = reason or reasons.get(use_id) or reasons.get(str(known.internal_id))
        else:
            shown = shown_call_status(None, live=live, token=token)
            status, note = shown.status, shown.note
            result = None if token is None else _token_outcome(token)
        calls.append(
            StoredCall(
                provider_call_id=use_id,
                tool_name=str(use.get("name", "")),
                tool_input=use.get("input"),
                status=status,
                call_id=None if known is None else known.internal_id,
                result=result,
                continuation_token=None if token is None else token.token,
                token_completed=None if token is None else token.completed_at is not None,
                cancel_reason=reason,
                note=note,
                deferred=token is not None,
            )
        )
    return calls


def _token_outcome(token: StoredToken) -> Json:
    """What completing a deferred call's token gave it (its error, if it failed)."""
    return token.result if token.error is None else token.error


def _board_calls(board: Board, tokens: Iterable[StoredToken], live: bool) -> list[StoredCall]:
    """Every call on a stored board, in the order made, with its status."""
    tokens = list(tokens)
    by_use = {token.provider_call_id: token for token in tokens}
    by_call = {token.call_id: token for token in tokens}
    calls = []
    for node in board.nodes.values():
        for call in node.calls:
            token = by_use.get(call.use_id or "") or by_call.get(call.call_id)
            result: Json = call.outcome
            status, reason, note = call.status.value, None, None
            if not call.status.is_final:
                shown = shown_call_status(None, live=live, token=token)
                status, note = shown.status, shown.note
                result = None if token is None else _token_outcome(token)
            elif status == "failed":
                note = shown_call_status(status, live=live, result=result).note
            elif status == "cancelled":
                reason = str(result).removeprefix(_CANCELLED) if result else None
            calls.append(
                StoredCall(
                    provider_call_id=call.use_id or call.call_id,
                    tool_name=call.tool_name,
                    tool_input=call.tool_input,
                    status=status,
                    call_id=call.call_id if call.background else None,
                    result=result,
                    continuation_token=None if token is None else token.token,
                    token_completed=None if token is None else token.completed_at is not None,
                    cancel_reason=reason,
                    note=note,
                    deferred=token is not None,
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
    """How the stored session stands (``shown_session_status``), its history at hand."""
    running = calls_running_when_stored(stored, tokens)
    return shown_session_status(stored.status, live=live, were_running=len(running))


def session_header(stored: StoredSession, status: ShownStatus) -> str:
    """The first line ``agentos show`` prints: which session, whose, how it stands."""
    agent = stored.config.get("name", "agent")
    return (
        f"session {short_id(stored.session_id)}  agent {agent}  status {status}  "
        f"updated {timestamp(stored.updated_at)}"
    )


def render_chat(stored: StoredSession, tokens: Iterable[StoredToken], *, live: bool) -> list[str]:
    """The chat a person sees (``StoredSession.chat``): what they said, the agent's answers
    to them, each call with its status and a quiet mark of what the runtime's own turns
    did with it; never a timer's nudge as their words. ``live``: a live process holds it."""
    tokens = list(tokens)
    calls: dict[str, StoredCall] = {}
    for call in stored_calls(stored, tokens, live=live):
        calls[call.provider_call_id] = call
        if call.call_id is not None:
            calls.setdefault(call.call_id, call)
    lines = [session_header(stored, session_status(stored, tokens, live))]
    for entry in stored_chat(stored):
        if entry.text:
            first, *rest = entry.text.splitlines() or [""]
            lines += [f"{entry.role}: {first}", *(f"  {line}" for line in rest)]
        for shown in entry.calls:
            known = calls.get(shown.call_id)
            ids = short_id(
                shown.call_id if known is None else known.call_id or known.provider_call_id
            )
            note = f"  ({shown.note})" if shown.note else ""
            lines.append(f"  tool {shown.tool_name} {_dump(shown.tool_input)}  [{ids}]{note}")
            lines.append(f"    -> {shown.status.value if known is None else known.describe()}")
    return lines


def render_session(
    stored: StoredSession, tokens: Iterable[StoredToken], *, live: bool
) -> list[str]:
    """The history as readable lines, as the model read it: every message, and each call
    with its status (``agentos show --history``). ``live``: a live process holds it."""
    tokens = list(tokens)
    calls = {call.provider_call_id: call for call in stored_calls(stored, tokens, live=live)}
    lines = [session_header(stored, session_status(stored, tokens, live))]
    if stored.board is not None:
        lines.append("board (what the model reads):")
        board = Board.from_json(stored.board).render().text
        lines += ["  " + line for line in board.splitlines()]
    for message in stored.history:
        role = str(message.get("role", "?"))
        for block in blocks_of(message):
            kind = block.get("type")
            if kind == "text" and str(block.get("text", "")).strip():
                lines.append(f"{role}: {block['text']}")
            elif kind == "tool_use":
                call = calls[str(block.get("id"))]
                lines.append(
                    f"  tool {call.tool_name} {_dump(call.tool_input)}  [{call.provider_call_id}]"
                )
                lines.append(f"    -> {call.describe()}")
    return lines


def brief(value: object, limit: int = 200) -> str:
    shown = value if isinstance(value, str) else _dump(value)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def timestamp(epoch: float) -> str:
    return datetime.fromtimestamp(epoch).astimezone().isoformat(timespec="seconds")


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
