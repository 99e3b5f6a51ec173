"""Identifiers that name calls, sessions, conversations and turns."""

from __future__ import annotations

import os
from typing import NewType
from typing import cast

CallId = NewType("CallId", str)
SessionId = NewType("SessionId", str)
ConversationId = NewType("ConversationId", str)
TurnId = NewType("TurnId", str)
Entity = int
"""An esper entity id: an int that is never reused within one world."""


_fresh_ids: list[CallId] = []
"""Call ids formatted ahead, from one read of randomness; a forked child empties it (it
would hand out the ids its parent will)."""
os.register_at_fork(after_in_child=_fresh_ids.clear)


def same_conversation(a: str | None, b: str | None) -> bool:
    """Whether two calls' (or a caller's and a call's) conversations are one: equal, or one
    of them has none (a call submitted without one belongs to all of its session's)."""
    return a is None or b is None or a == b


def new_call_id() -> CallId:
    """A fresh internal call id: a random (version 4) UUID in its canonical text form.

    Same format as ``str(uuid.uuid4())`` at a fraction of the cost: randomness is read
    4 KiB at a time, and the 256 ids it makes are formatted together.
    """
    try:
        return _fresh_ids.pop()
    except IndexError:  # this thread takes one of its own read: another may empty the pool
        fresh = _formatted(bytearray(os.urandom(4096)))
        call_id = fresh.pop()
        _fresh_ids.extend(fresh)
        return call_id


_VERSION_4 = bytes(byte & 0x0F | 0x40 for byte in range(256))
_VARIANT_1 = bytes(byte & 0x3F | 0x80 for byte in range(256))
"""Byte tables that set a UUID's version (its 7th byte) and variant (its 9th)."""


def _formatted(block: bytearray) -> list[CallId]:
    """Each 16 bytes of ``block`` as a version 4 UUID's text."""
    block[6::16] = block[6::16].translate(_VERSION_4)
    block[8::16] = block[8::16].translate(_VARIANT_1)
    h = block.hex()
    texts = [
        f"{h[i : i + 8]}-{h[i + 8 : i + 12]}-{h[i + 12 : i + 16]}-"
        f"{h[i + 16 : i + 20]}-{h[i + 20 : i + 32]}"
        for i in range(0, len(h), 32)
    ]
    return cast(list[CallId], texts)
