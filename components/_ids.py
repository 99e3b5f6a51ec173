"""Identifiers that name calls, sessions, conversations and turns."""

from __future__ import annotations

import uuid
from typing import NewType

CallId = NewType("CallId", str)
SessionId = NewType("SessionId", str)
ConversationId = NewType("ConversationId", str)
TurnId = NewType("TurnId", str)
Entity = int
"""An esper entity id: an int that is never reused within one world."""


def new_call_id() -> CallId:
    """A fresh internal call id: a random UUID in its canonical text form."""
    return CallId(str(uuid.uuid4()))
