"""A transcript session's chat: what the person sees, as the board's ``ChatEntry`` list.

UIs read ``Session.chat`` for either context view, so a transcript follows the board's
table of what the user sees (``SHOWN_WORDS``), as the board does: the person's own
words; the agent's words when they answer the person (a turn the person started, or a
result landing that ends with the agent's last word); each background call with its
live state. Turns the runtime prompted (an overdue call, a result that only led to
another look) put no words on screen, only a quiet mark on their call ("overdue ·
looked at 0:12"). Tool results, late outcomes and nudges are the model's business.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

from agentos._model.messages import Block
from agentos._model.messages import Message
from agentos._model.messages import blocks_of
from agentos._turns.capabilities import CAPABILITIES
from agentos._turns.chat import SHOWN_WORDS
from agentos._turns.chat import ChatCall
from agentos._turns.chat import ChatEntry
from agentos._turns.chat import clock_text
from agentos._turns.history import MessageHistory
from agentos._turns.transcript import read_outcome
from agentos._turns.transcript import read_overdue
from components import CallSnapshot
from components import CallStatus

LOOK = "get_tool_call_status"


def transcript_chat(
    history: Sequence[Message],
    calls: Sequence[CallSnapshot],
    index: MessageHistory,
    session_id: str,
) -> list[ChatEntry]:
    """One entry per person's message and per agent message the person is shown (or that
    started background work: its calls, with no words when the turn talked to the board);
    ids count messages from 1.

    A call's state is the runtime's while it holds the call, else what the history told
    (``index``), else ``orphaned``."""

    known: dict[str, CallStatus | None] = {}

    def told(tool_use_id: str) -> CallStatus | None:
        if not known:  # once, not a look-up (that may open sealed calls) per call
            known.update((call.call_id, call.status) for call in index.calls(session_id))
        return known.get(tool_use_id)

    marks = _marks(history)
    by_use = {c.provider_call_id: c for c in calls if c.provider_call_id is not None}
    entries = []
    trigger = "user"
    for number, message in enumerate(history, start=1):
        blocks = blocks_of(message)
        if message.get("role") == "user":
            words, trigger = _user_turn(blocks, trigger)
            if words:
                entries.append(ChatEntry(number, "user", words, 0.0))
            continue
        uses = [b for b in blocks if b.get("type") == "tool_use"]
        background = [u for u in uses if str(u.get("name")) not in CAPABILITIES]
        act = "started" if background else "looked" if uses else "final"
        text = ""
        if (trigger, act) in SHOWN_WORDS:
            text = "\n".join(
                str(b.get("text", "")) for b in blocks if b.get("type") == "text"
            ).strip()
        widgets = tuple(
            _widget(number, use, by_use.get(str(use.get("id"))), told, marks) for use in background
        )
        if text or widgets:
            entries.append(ChatEntry(number, "agent", text, 0.0, widgets))
    return entries


def _user_turn(blocks: list[Block], trigger: str) -> tuple[str, str]:
    """The person's words in a user message, and what the turn it opens was prompted by:
    the person, a result landing, a timer, or (tool results only) the same as before."""
    words: list[str] = []
    landed = nudged = False
    for block in blocks:
        if block.get("type") != "text":
            continue
        text = str(block.get("text", ""))
        if read_outcome(text) is not None:
            landed = True
        elif read_overdue(text) is not None:
            nudged = True
        elif text.strip():
            words.append(text)
    if words:
        return "\n".join(words), "user"
    if landed:
        return "", "result"
    if nudged:
        return "", "timer"
    return "", trigger


@dataclass(slots=True)
class _Mark:
    overdue: bool = False
    overdue_at: int | None = None
    """Seconds the call had run at its newest overdue nudge (None: not said)."""
    looked: bool = False
    looked_at: int | None = None

    def text(self) -> str:
        """``overdue at 0:07``, ``overdue · looked at 0:12``, ``looked``."""
        overdue = "overdue"
        if not self.looked and self.overdue_at is not None:
            overdue = f"overdue at {clock_text(self.overdue_at)}"
        looked = "looked" if self.looked_at is None else f"looked at {clock_text(self.looked_at)}"
        return " · ".join([overdue] * self.overdue + [looked] * self.looked)


def _marks(history: Sequence[Message]) -> dict[str, str]:
    """A quiet mark per call the runtime nudged the model about or the model looked at
    (by tool_use id): what those hidden turns did, in a few words."""
    marks: dict[str, _Mark] = {}
    for message in history:
        for block in blocks_of(message):
            kind = block.get("type")
            if kind == "text" and message.get("role") == "user":
                nudge = read_overdue(str(block.get("text", "")))
                if nudge is not None:
                    mark = marks.setdefault(nudge.tool_use_id, _Mark())
                    mark.overdue, mark.overdue_at = True, nudge.ran_seconds
            elif kind == "tool_use" and block.get("name") == LOOK:
                arguments = block.get("input")
                looked = arguments.get("tool_call_id") if isinstance(arguments, dict) else None
                if isinstance(looked, str):
                    mark = marks.setdefault(looked, _Mark())
                    mark.looked = True
                    mark.looked_at = mark.overdue_at
    return {use: mark.text() for use, mark in marks.items()}


def _widget(
    number: int,
    use: dict[str, object],
    call: CallSnapshot | None,
    told: Callable[[str], CallStatus | None],
    marks: dict[str, str],
) -> ChatCall:
    arguments = use.get("input")
    use_id = str(use.get("id"))
    status = call.status if call is not None else told(use_id) or CallStatus.ORPHANED
    note = marks.get(use_id, "")
    if call is not None and not note:
        note = marks.get(call.call_id, "")
    return ChatCall(
        number,
        use_id if call is None else call.call_id,
        str(use.get("name")),
        dict(arguments) if isinstance(arguments, dict) else {},
        status,
        note,
    )
