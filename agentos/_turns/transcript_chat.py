"""A transcript session's chat: every message, as the board's ``ChatEntry`` list.

UIs read ``Session.chat`` for either context view; a transcript shows
everything: each user text, each assistant text with the calls it made.
Late outcomes and tool results are the model's business, not the person's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agentos._model.messages import Message, blocks_of
from agentos._turns.chat import ChatCall, ChatEntry
from agentos._turns.history import MessageHistory
from agentos._turns.transcript import read_outcome
from components import CallSnapshot, CallStatus


def transcript_chat(
    history: Sequence[Message],
    calls: Sequence[CallSnapshot],
    index: MessageHistory,
    session_id: str,
) -> list[ChatEntry]:
    """One entry per user or assistant message with text or calls; ids count messages from 1.

    A call's state is the runtime's while it holds the call, else what the history told
    (``index``), else ``orphaned``."""

    def told(tool_use_id: str) -> CallStatus | None:
        known = index.find_call(session_id, tool_use_id)
        return None if known is None else known.status

    by_use = {c.provider_call_id: c for c in calls if c.provider_call_id is not None}
    entries = []
    for number, message in enumerate(history, start=1):
        role = "user" if message.get("role") == "user" else "agent"
        blocks = blocks_of(message)
        texts = [
            str(b.get("text", ""))
            for b in blocks
            if b.get("type") == "text" and read_outcome(str(b.get("text", ""))) is None
        ]
        widgets = tuple(
            _widget(number, b, by_use.get(str(b.get("id"))), told)
            for b in blocks
            if b.get("type") == "tool_use"
        )
        text = "\n".join(t for t in texts if t.strip())
        if text or widgets:
            entries.append(ChatEntry(number, role, text, 0.0, widgets))
    return entries


def _widget(
    number: int,
    use: dict[str, object],
    call: CallSnapshot | None,
    told: Callable[[str], CallStatus | None],
) -> ChatCall:
    arguments = use.get("input")
    use_id = str(use.get("id"))
    status = call.status if call is not None else told(use_id) or CallStatus.ORPHANED
    return ChatCall(
        number,
        use_id if call is None else call.call_id,
        str(use.get("name")),
        dict(arguments) if isinstance(arguments, dict) else {},
        status,
    )
