"""What makes a history invalid Messages: shared by the session and turn-machine tests."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from agentos.testing import blocks_of
from agentos.turns import Message


def transcript_problem(messages: Sequence[Message], *, may_end_unanswered: bool) -> str | None:
    """What makes ``messages`` invalid Messages (a session's history may be empty), or None:
    a stacked partial turn, a tool use without its positional result, a result twice."""
    if messages and messages[0]["role"] != "user":
        return "does not start with a user message"
    for index, message in enumerate(messages):
        if index and message["role"] == messages[index - 1]["role"]:
            return f"two {message['role']} messages in a row at {index}"
        uses = [b["id"] for b in blocks_of(message) if b.get("type") == "tool_use"]
        if message["role"] != "assistant" or not uses:
            continue
        if index + 1 == len(messages):
            return None if may_end_unanswered else f"tool uses {uses} left unanswered"
        answers = [b.get("tool_use_id") for b in blocks_of(messages[index + 1])]
        if answers[: len(uses)] != uses:
            return f"tool uses {uses} answered by {answers}"
    results = Counter(
        b["tool_use_id"] for m in messages for b in blocks_of(m) if b.get("type") == "tool_result"
    )
    repeated = [tool_use_id for tool_use_id, count in results.items() if count > 1]
    return f"tool uses answered twice: {repeated}" if repeated else None
