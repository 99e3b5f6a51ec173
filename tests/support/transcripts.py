"""What makes a history invalid Messages: shared by the session and turn-machine tests."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

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


def assert_valid_transcript(history: Sequence[Mapping[str, Any]]) -> None:
    """What the Messages API requires: alternating roles, one tool_result per tool_use, next."""
    assert history[0]["role"] == "user"
    for earlier, later in itertools.pairwise(history):
        assert earlier["role"] != later["role"], "roles must alternate"
    for index, message in enumerate(history):
        if message["role"] != "assistant":
            continue
        uses = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        if not uses:
            continue
        assert index + 1 < len(history), "a tool_use without its tool_result"
        reply = history[index + 1]["content"]
        results = [b["tool_use_id"] for b in reply if b["type"] == "tool_result"]
        assert results == uses, "exactly one tool_result per tool_use, first, in order"
