"""Sessions as entities of the world: opened, updated and closed through the inbox.

A host opens an entity per session and records what the session is doing on
it; the runtime keeps per-session caps for the scheduler. Calls are not the
session entity's: they end and are forgotten as any call is.
"""

from __future__ import annotations

import esper

from agentos._errors import UnknownSessionError
from agentos._kernel.checks import check_positive_int, check_text
from agentos._kernel.parts import RuntimeParts
from agentos._kernel.snapshot import SessionSnapshot
from components import (
    CloseSession,
    OpenSession,
    SessionConfig,
    SessionId,
    SessionState,
    SessionStatus,
    SetSessionCap,
    UpdateSession,
)


class SessionEntities(RuntimeParts):
    """The session-entity methods of ``Runtime``."""

    def open_session(
        self, session_id: str, *, agent: str, model: str, parent: str | None = None
    ) -> None:
        """Make the session an entity of the world (a second open changes nothing)."""
        self._check_open()
        check_text("session_id", session_id)
        config = SessionConfig(
            SessionId(session_id), agent, model, None if parent is None else SessionId(parent)
        )
        self._post(OpenSession(config))

    def close_session(self, session_id: str) -> None:
        """Forget the session entity and its cap (its host unloaded it); a later open is new.

        Its calls are not touched: they end and are forgotten as any call is.
        """
        check_text("session_id", session_id)
        if not self._kernel.closed:
            self._post(CloseSession(SessionId(session_id)))

    def update_session(self, session_id: str, *, status: str, requests: int, errors: int) -> None:
        """Record what a session is doing on its entity (applied by the next tick)."""
        if not self._kernel.closed:
            update = UpdateSession(SessionId(session_id), SessionStatus(status), requests, errors)
            self._post(update)

    def session(self, session_id: str) -> SessionSnapshot:
        """The session entity; LookupError if it was never opened."""
        self._flush()
        entity = self._ctx.sessions.by_id.get(SessionId(session_id))
        if entity is None:
            raise UnknownSessionError(session_id)
        config = esper.component_for_entity(entity, SessionConfig)
        state = esper.component_for_entity(entity, SessionState)
        return SessionSnapshot(
            config.session_id,
            config.agent,
            config.model,
            config.parent_session_id,
            state.status,
            state.requests,
            state.errors,
            state.opened_at,
            state.updated_at,
        )

    def set_session_cap(self, session_id: str, cap: int | None) -> None:
        """Let one session run up to ``cap`` calls at once (None: back to the default)."""
        check_text("session_id", session_id)
        check_positive_int("cap", cap, optional=True)
        self._post(SetSessionCap(SessionId(session_id), cap))

    def sessions(self) -> list[SessionId]:
        """Every session that has a call in the world."""
        self._flush()
        return list(self._ctx.index.by_session)
