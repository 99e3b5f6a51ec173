"""The components of a session entity: who it is, and what it is doing."""

from __future__ import annotations

from dataclasses import dataclass

from components._ids import SessionId
from components._status import SessionStatus


@dataclass(slots=True, frozen=True)
class SessionConfig:
    """Fixed when the session opens."""

    session_id: SessionId
    agent: str
    model: str
    parent_session_id: SessionId | None = None


@dataclass(slots=True)
class SessionState:
    """What the session is doing; written by ticks from ``UpdateSession`` messages."""

    status: SessionStatus = SessionStatus.IDLE
    requests: int = 0
    errors: int = 0
    opened_at: float = 0.0
    updated_at: float = 0.0
