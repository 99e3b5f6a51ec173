"""Many sessions on one runtime: create, find, talk to, stop and list them."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from types import TracebackType
from typing import Self

import anyio
from anyio.abc import TaskGroup

from agentos._agent_config import AgentConfig
from agentos._context_view import ContextView, TranscriptView
from agentos._errors import AgentOSError
from agentos._history import HistoryCall
from agentos._provider import Message, Provider
from agentos._runtime import Runtime
from agentos._scope import Scope, SessionLineage
from agentos._session import Session, SessionStatus
from agentos._store import Completion
from agentos._tokens import ContinuationTokens
from agentos._toolbox import SystemToolbox
from components import Json


class UnknownSessionError(AgentOSError, LookupError):
    def __init__(self, session_id: object) -> None:
        self.session_id = session_id
        super().__init__(f"no session with id {session_id!r}")


@dataclass(frozen=True, slots=True)
class SessionSummary:
    session_id: str
    agent: str
    status: SessionStatus
    requests: int
    messages: int
    errors: int


class Host:
    """Runs sessions on one ``Runtime``, each in its own task, all sharing the caps.

    One session's failing provider or crashing loop touches no other session.
    """

    def __init__(
        self,
        runtime: Runtime,
        provider: Provider,
        *,
        view: ContextView | None = None,
    ) -> None:
        self.runtime = runtime
        self.provider = provider
        self.lineage = SessionLineage()
        self.tokens = ContinuationTokens(runtime)
        self.toolbox = SystemToolbox(runtime, history=self, lineage=self.lineage)
        self._view = view or TranscriptView()
        self._sessions: dict[str, Session] = {}
        self._group: TaskGroup | None = None

    async def __aenter__(self) -> Self:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        assert self._group is not None
        self._group.cancel_scope.cancel()
        return await self._group.__aexit__(exc_type, exc, tb)

    async def create_session(
        self,
        config: AgentConfig | None = None,
        *,
        session_id: str | None = None,
        parent: str | None = None,
        provider: Provider | None = None,
        scope: Scope = Scope.OWN,
        history: list[Message] | None = None,
    ) -> Session:
        """Start a session's loop; ``parent`` records who spawned it (for ``children`` scope).

        ``history`` restores an earlier conversation (Anthropic Messages): calls
        it mentions that this runtime does not hold report ``orphaned``.
        """
        if self._group is None:
            raise RuntimeError("use 'async with Host(...)' before creating sessions")
        session_id = session_id or f"session-{uuid.uuid4()}"
        if session_id in self._sessions:
            raise ValueError(f"a session with id {session_id!r} already exists")
        if parent is not None:
            self.get(parent)
            self.lineage.add(session_id, parent)
        config = config or AgentConfig()
        if config.max_running_per_session is not None:
            self.runtime.set_session_cap(session_id, config.max_running_per_session)
        session = Session(
            session_id,
            config,
            runtime=self.runtime,
            provider=provider or self.provider,
            toolbox=self.toolbox,
            view=self._view,
            tokens=self.tokens,
            scope=scope,
        )
        if history is not None:
            session.restore(history)
        self.runtime.open_session(session_id, agent=config.name, model=config.model, parent=parent)
        self._sessions[session_id] = session
        await self._group.start(self._run, session)
        return session

    async def _run(self, session: Session, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        try:
            await session.run(task_status=task_status)
        except Exception as error:  # one session's bug ends that session only
            session.errors.append(f"session_crashed: {type(error).__name__}: {error}")

    def get(self, session_id: str) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise UnknownSessionError(session_id)
        return session

    def post(self, session_id: str, text: str) -> None:
        self.get(session_id).post(text)

    def stop(self, session_id: str) -> None:
        self.get(session_id).stop()

    def list(self) -> list[SessionSummary]:
        return [
            SessionSummary(
                s.session_id,
                s.config.name,
                s.status,
                s.requests,
                len(s.history),
                len(s.errors),
            )
            for s in self._sessions.values()
        ]

    async def complete(
        self, token: str, result: Json = None, *, error: str | None = None
    ) -> Completion:
        """Complete a deferred call by its continuation token (idempotent)."""
        return await self.tokens.complete(token, result, error=error)

    def find_call(self, session_id: str, call_id: str) -> HistoryCall | None:
        """The ``HistoryLookup`` the toolbox asks: what a session's history says of a call."""
        session = self._sessions.get(session_id)
        return None if session is None else session.calls.find_call(session_id, call_id)
