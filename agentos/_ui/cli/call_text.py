"""Calls and stored sessions as the command line says them: ``agentos show``'s chat and
history, ``agentos status``'s facts, ``agentos cancel``'s answer (each call a
``CallView``, read from the store through ``agentos.stores``)."""

from __future__ import annotations

import json
from collections.abc import Iterable

from agentos._ui.durations import timestamp
from agentos._ui.terminal_text import one_line
from agentos.board import Board
from agentos.stores import CallView
from agentos.stores import CancelReport
from agentos.stores import ShownStatus
from agentos.stores import StoredSession
from agentos.stores import StoredToken
from agentos.stores import short_id
from agentos.stores import stored_calls
from agentos.stores import stored_chat
from agentos.turns import blocks_of
from components import CallStatus
from components import Question


def asking_text(question: Question) -> str:
    """``needs your answer: Which city?``: a running call that waits for the person's answer
    (in this process, or as the live process holding its session mirrored it)."""
    return f"needs your answer: {one_line(question.message)}"


def asking_note(count: int) -> str:
    """`` · 1 call needs an answer``, for a session's status in a listing ('' for none)."""
    if not count:
        return ""
    return f" · {count} call{'' if count == 1 else 's'} need{'s' if count == 1 else ''} an answer"


def outcome_text(call: CallView) -> str:
    """One line: the status and what came of the call."""
    if call.waits_for_token:
        return f"pending (deferred: token {call.continuation_token or '?'}, not completed)"
    if call.status is CallStatus.RUNNING and call.question is not None:
        return f"running, {asking_text(call.question)}"
    if call.status is CallStatus.RUNNING:
        note = "" if call.note is None else f" ({call.note})"
        return f"running{note}"
    if call.status is CallStatus.ORPHANED:
        return f"orphaned ({call.note or 'lost in a restart'})"
    if call.expired and call.continuation_token is not None:
        return f"failed: expired, token {call.continuation_token} was not completed in time"
    if call.status is CallStatus.CANCELLED:
        outcome = f"cancelled: {call.cancel_reason or 'no reason recorded'}"
    else:
        outcome = f"{call.status}: {brief(call.result)}"
    if call.continuation_token is not None:
        note = "" if call.note is None else f"; {call.note}"
        outcome += f"  [deferred, token {call.continuation_token}{note}]"
    return outcome


def call_facts(call: CallView) -> list[str]:
    """``agentos status``: one line per fact."""
    lines = [
        f"call      {call.call_id or '?'}  ({call.provider_call_id})",
        f"session   {call.session_id}, held by {call.holder or 'no live process'}",
        f"tool      {call.tool_name} {brief(call.tool_input, 120)}",
        f"status    {call.status}" + ("" if call.note is None else f" ({call.note})"),
    ]
    if call.disposition is not None:
        lines.append(f"runs      {call.disposition}")
    if call.question is not None and call.status is CallStatus.RUNNING:
        where = "" if call.holder is None else f" (answer it where {call.holder} runs it)"
        lines.append(f"asks      {asking_text(call.question)}{where}")
    if call.progress is not None:
        percent = "" if call.percent is None else f"{call.percent:.0f}%  "
        lines.append(f"progress  {percent}{brief(call.progress, 120)}")
    if call.log is not None:
        lines.append(f"log       {brief(call.log, 120)}")
    if call.cancel_reason is not None:
        lines.append(f"reason    {call.cancel_reason}")
    elif call.error is not None:
        lines.append(f"error     {call.error_kind}: {call.error}")
    if call.result is not None and call.status is not CallStatus.CANCELLED:
        lines.append(f"result    {brief(call.result, 120)}")
    if call.continuation_token is not None:
        lines.append(f"token     {call.continuation_token}")
    for name, at in (
        ("submitted", call.submitted_at),
        ("started", call.started_at),
        ("ended", call.ended_at),
        ("mirrored", call.updated_at),
    ):
        if at is not None:
            lines.append(f"{name:<9} {timestamp(at)}")
    return lines


def cancel_text(report: CancelReport) -> str:
    """``agentos cancel``'s answer in words."""
    call = report.call
    if report.outcome == "cancelled":
        return f"cancelled (was {report.previous_status})"
    if report.outcome == "queued":
        return (
            f"queued: {call.holder} holds session {call.session_id} but did not "
            "answer in time; the request stays queued and it applies it when it next looks "
            f"('agentos status {call.request_id}' shows whether it did)"
        )
    note = "" if call.note is None else f" ({call.note})"
    ended = f"had already ended, {report.status}{note}"
    return f"not cancelled: call {short_id(call.request_id)} {ended}"


def session_header(stored: StoredSession, status: ShownStatus) -> str:
    """The first line ``agentos show`` prints: which session, whose, how it stands."""
    agent = stored.config.get("name", "agent")
    return (
        f"session {short_id(stored.session_id)}  agent {agent}  status {status}  "
        f"updated {timestamp(stored.updated_at)}"
    )


def render_chat(
    stored: StoredSession, tokens: Iterable[StoredToken], status: ShownStatus, *, live: bool
) -> list[str]:
    """The chat a person sees (``StoredSession.chat``): what they said, the agent's answers
    to them, each call with its status and a quiet mark of what the runtime's own turns
    did with it; never a timer's nudge as their words. ``live``: a live process holds it."""
    calls: dict[str, CallView] = {}
    for call in stored_calls(stored, tokens, live=live):
        calls[call.provider_call_id or ""] = call
        if call.call_id is not None:
            calls.setdefault(call.call_id, call)
    lines = [session_header(stored, status)]
    for entry in stored_chat(stored):
        if entry.text:
            first, *rest = entry.text.splitlines() or [""]
            lines += [f"{entry.role}: {first}", *(f"  {line}" for line in rest)]
        for shown in entry.calls:
            known = calls.get(shown.call_id)
            ids = short_id(shown.call_id if known is None else known.request_id)
            note = f"  ({shown.note})" if shown.note else ""
            lines.append(f"  tool {shown.tool_name} {_dump(shown.tool_input)}  [{ids}]{note}")
            lines.append(f"    -> {shown.status.value if known is None else outcome_text(known)}")
    return lines


def render_session(
    stored: StoredSession, tokens: Iterable[StoredToken], status: ShownStatus, *, live: bool
) -> list[str]:
    """The history as readable lines, as the model read it: every message, and each call
    with its status (``agentos show --history``). ``live``: a live process holds it."""
    calls = {call.provider_call_id: call for call in stored_calls(stored, tokens, live=live)}
    lines = [session_header(stored, status)]
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
                lines.append(f"    -> {outcome_text(call)}")
    return lines


def brief(value: object, limit: int = 200) -> str:
    shown = value if isinstance(value, str) else _dump(value)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
