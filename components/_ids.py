"""Identifiers that name calls, sessions, conversations and turns."""

from __future__ import annotations

import os
from typing import NewType

CallId = NewType("CallId", str)
SessionId = NewType("SessionId", str)
ConversationId = NewType("ConversationId", str)
TurnId = NewType("TurnId", str)
Entity = int
"""An esper entity id: an int that is never reused within one world."""


_random_bytes: list[bytes] = []


def same_conversation(a: str | None, b: str | None) -> bool:
    """Whether two calls' (or a caller's and a call's) conversations are one: equal, or one
    of them has none (a call submitted without one belongs to all of its session's)."""
    return a is None or b is None or a == b


def new_call_id() -> CallId:
    """A fresh internal call id: a random (version 4) UUID in its canonical text form.

    Same format as ``str(uuid.uuid4())`` at a third of the cost: randomness is
    read 4 KiB at a time and the text is formatted directly.
    """
    try:
        chunk = _random_bytes.pop()
    except IndexError:
        block = os.urandom(4096)
        _random_bytes.extend(block[i : i + 16] for i in range(16, 4096, 16))
        chunk = block[:16]
    raw = bytearray(chunk)
    raw[6] = raw[6] & 0x0F | 0x40
    raw[8] = raw[8] & 0x3F | 0x80
    h = raw.hex()
    return CallId(f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}")
