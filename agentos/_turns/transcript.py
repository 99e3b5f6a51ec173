"""The transcript format: every text agentos writes into a conversation, and its reader.

Writers and readers sit side by side (like h11's), so the format is written
once: tool results, placeholders for calls still running, late outcomes,
overdue and lost-call notices. The session writes them; the history index,
the CLI and the demo read them back through the functions here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from typing import NamedTuple

from agentos._model.messages import Message
from agentos._model.messages import TextBlock
from agentos._model.messages import ToolResultBlock
from agentos._model.messages import blocks_of
from agentos._model.messages import content_value
from agentos._model.messages import text_block
from agentos._model.messages import text_of
from agentos._model.messages import tool_result
from agentos._model.transcript_marks import LOST_RESULT as LOST_RESULT
from agentos._model.transcript_marks import OUTCOME
from agentos._model.transcript_marks import OVERDUE
from agentos._model.transcript_marks import PLACEHOLDER_KEY as PLACEHOLDER_KEY
from components import CallStatus
from components import Json
from components import OverdueNews

# ---------------------------------------------------------------- writers


def placeholder(
    tool_use_id: str, call_id: str, status: CallStatus, token: str | None = None
) -> ToolResultBlock:
    """The result of a call still running: its outcome arrives later, once.

    ``tool_call_id`` is the id the model used (``tool_use_id``); the runtime's
    own id is ``internal_id``. Both work with the capabilities.
    """
    note: dict[str, Json] = {
        PLACEHOLDER_KEY: True,
        "tool_call_id": tool_use_id,
        "internal_id": call_id,
        "status": status.value,
        "note": (
            "Still running; its outcome will arrive later as a message that names this "
            f"call. get_tool_call_status(tool_call_id={tool_use_id!r}) shows its progress; "
            "cancel_tool_call stops it."
        ),
    }
    if token is not None:
        note["continuation_token"] = token
        note["note"] = "Deferred: it completes from outside, with this continuation token."
    return tool_result(tool_use_id, json.dumps(note))


def outcome_text(tool_use_id: str, tool_name: str, status: CallStatus, outcome: str) -> str:
    """``[tool call ID (tool) finished: STATUS] result: ...`` or ``... error: ...``."""
    return f"[tool call {tool_use_id} ({tool_name}) finished: {status.value}] {outcome}"


def overdue_text(tool_use_id: str, news: OverdueNews | None = None) -> str:
    """The runtime's nudge about a call still running past its interval: what the model
    needs to decide whether waiting is worth it (knowing when to give up)."""
    return (
        f"[tool call {tool_use_id} is overdue: {overdue_evidence(news)} Wait, look with "
        "get_tool_call_status, or cancel it with cancel_tool_call.]"
    )


def overdue_evidence(news: OverdueNews | None, *, again: bool = True) -> str:
    """``it has run 12 s; its progress: {...}; its last log line: '...'; if it still runs, you
    will be asked again in 16 s.``, each part only when known (the last with ``again``)."""
    if news is None:
        return "it is still running."
    parts = [f"it has run {news.ran_seconds:.0f} s"]
    if news.progress is not None:
        parts.append(f"its progress: {_brief(news.progress)}")
    if news.log is not None:
        parts.append(f"its last log line: {_brief(news.log)}")
    if again and news.next_seconds is not None:
        parts.append(f"if it still runs, you will be asked again in {news.next_seconds:.0f} s")
    elif again:
        parts.append("it is still running")
    return "; ".join(parts) + "."


def _brief(value: Json, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def lost_notice(tool_use_id: str, tool_name: str) -> TextBlock:
    """A call that was waiting when the process ended and did not survive the restart."""
    return text_block(
        outcome_text(
            tool_use_id,
            tool_name,
            CallStatus.ORPHANED,
            "error: lost in a restart; call it again if it is still needed",
        )
    )


NOT_RUN = "not run: the session stopped"


# ---------------------------------------------------------------- readers


class Outcome(NamedTuple):
    """A late outcome (or lost-call notice) read back from its text."""

    tool_use_id: str
    tool_name: str
    status: CallStatus
    value: Json
    """The result (parsed when it is JSON), or the error text."""


def read_outcome(text: str) -> Outcome | None:
    """The late outcome ``text`` tells, or None if it is not one."""
    found = OUTCOME.match(text)
    if found is None:
        return None
    value: Json = found["rest"]
    if found["kind"] == "result":
        value = content_value(found["rest"])
    return Outcome(found["id"], found["tool"], CallStatus(found["status"]), value)


class Overdue(NamedTuple):
    """An overdue nudge read back from its text."""

    tool_use_id: str
    ran_seconds: int | None
    """How long the call had run when the model was nudged (None: an older text)."""


def read_overdue(text: str) -> Overdue | None:
    """The overdue nudge ``text`` is, or None if it is not one."""
    found = OVERDUE.match(text)
    if found is None:
        return None
    ran = found["ran"]
    return Overdue(found["id"], None if ran is None else int(ran))


def read_placeholder(content: object) -> dict[str, Json] | None:
    """A placeholder's fields, or None if this tool_result content is not a placeholder."""
    value = content_value(content)
    if isinstance(value, dict) and value.get(PLACEHOLDER_KEY) is True:
        return value
    return None


# ---------------------------------------------------------------- whole histories


def repair_history(
    history: list[Any], held: Mapping[str, ToolResultBlock] | None = None
) -> list[Any]:
    """A copy in which every ``tool_use`` has a ``tool_result`` in the next user message.

    A restored history may end (or break off) after the model's tool calls;
    each unanswered one gets a result saying it was lost in a restart, or
    its entry in ``held`` (by tool_use id: a placeholder for a call that
    outlived the restart, such as a deferred call with its token).
    """
    held = held or {}
    repaired = [dict(message) for message in history]
    index = 0
    while index < len(repaired):
        message = repaired[index]
        uses = [b["id"] for b in blocks_of(message) if b.get("type") == "tool_use"]
        if message.get("role") == "assistant" and uses:
            following = repaired[index + 1] if index + 1 < len(repaired) else None
            if following is None or following.get("role") != "user":
                following = {"role": "user", "content": []}
                repaired.insert(index + 1, following)
            blocks = blocks_of(following)
            answered = {b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"}
            lost = [
                held.get(use) or tool_result(use, LOST_RESULT, error=True)
                for use in uses
                if use not in answered
            ]
            following["content"] = [*lost, *blocks]
        index += 1
    return repaired


def unique_tool_use_ids(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The model's answer with every ``tool_use`` id unique: a repeat becomes ``<id>_<n>``.

    A model may (wrongly) give two calls in one answer the same id. Each call
    must keep its own result, and the Messages API refuses duplicate ids, so
    the repeat is renamed before the answer is stored.
    """
    ids = [block.get("id") for block in content if block.get("type") == "tool_use"]
    if len(set(ids)) == len(ids):
        return content
    taken = set(ids)
    seen: set[object] = set()
    unique: list[dict[str, Any]] = []
    for block in content:
        if block.get("type") == "tool_use":
            tool_use_id = block.get("id")
            if tool_use_id in seen:
                suffix = 2
                while f"{tool_use_id}_{suffix}" in taken:
                    suffix += 1
                block = {**block, "id": f"{tool_use_id}_{suffix}"}
                taken.add(block["id"])
            seen.add(block["id"])
        unique.append(block)
    return unique


def said(message: Message) -> str:
    """What a message says: an assistant's text (``text_of``), a user's blocks' texts
    joined with spaces (a user turn of tool results says blanks)."""
    if message.get("role") == "assistant":
        return text_of(message["content"])
    return " ".join(text_of([block]) for block in blocks_of(message))
