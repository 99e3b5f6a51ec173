"""Sessions as entities of the world: opened, updated and closed through the inbox.

A host opens an entity per session and records what the session is doing on
it; the runtime keeps per-session caps for the scheduler. Calls are not the
session entity's: they end and are forgotten as any call is.
"""

from __future__ import annotations

import esper

from agentos._errors import UnknownSessionError
from agentos._kernel.checks import check_positive_int
from agentos._kernel.checks import check_text
from agentos._kernel.parts import RuntimeCore
from agentos._kernel.snapshot import SessionSnapshot
from components import CloseSession
from components import OpenSession
from components import SessionConfig
from components import SessionId
from components import SessionState
from components import SessionStatus
from components import SetSessionCap
from components import UpdateSession


class SessionEntities:
    """The session-entity methods of ``Runtime``."""

    def __init__(self, core: RuntimeCore) -> None:
        self._core = core

    def open_session(
        self, session_id: str, *, agent: str, model: str, parent: str | None = None
    ) -> None:
        self._core.check_open()
        check_text("session_id", session_id)
        config = SessionConfig(
            SessionId(session_id), agent, model, None if parent is None else SessionId(parent)
        )
        self._core.kernel.post_unhurried(OpenSession(config))

    def close_session(self, session_id: str) -> None:
        check_text("session_id", session_id)
        if not self._core.kernel.closed:
            self._core.post(CloseSession(SessionId(session_id)))

    def update_session(self, session_id: str, *, status: str, requests: int, errors: int) -> None:
        if not self._core.kernel.closed:
            update = UpdateSession(
                SessionId(session_id),
                status if type(status) is SessionStatus else SessionStatus(status),
                requests,
                errors,
                self._core.clock.wall(),
            )
            self._core.kernel.post_quietly(update)  # no tick acts on it; reads flush first

    def session(self, session_id: str) -> SessionSnapshot:
        self._core.flush()
        entity = self._core.ctx.sessions.by_id.get(SessionId(session_id))
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
        check_text("session_id", session_id)
        check_positive_int("cap", cap, optional=True)
        self._core.post(SetSessionCap(SessionId(session_id), cap))  # a raise admits at once

    def sessions(self) -> list[SessionId]:
        self._core.flush()
        return list(self._core.ctx.index.by_session)
