"""What the store tests build records from: a user message (``said``) and a stored session."""

from __future__ import annotations

from agentos.stores import StoredSession
from agentos.turns import Message


def session(session_id: str = "s1", history: tuple[Message, ...] = ()) -> StoredSession:
    return StoredSession(session_id, {"model": "m"}, "idle", 1.0, 1.0, history=history)


def said(words: str) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": words}]}
