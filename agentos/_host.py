"""Many sessions on one runtime: create, find, talk to, stop and list them."""

from __future__ import annotations

import time
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
from agentos._store import Completion, SessionStore, StoredSession
from agentos._tokens import ContinuationTokens, TokenRecord
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
        store: SessionStore | None = None,
        token_ttl: float | None = None,
    ) -> None:
        """``token_ttl``: seconds a continuation token stays valid (None: until used)."""
        self.runtime = runtime
        self.provider = provider
        self.store = store
        self.lineage = SessionLineage()
        self.tokens = ContinuationTokens(runtime, store, ttl=token_ttl)
        self.toolbox = SystemToolbox(runtime, history=self, lineage=self.lineage)
        self._view = view or TranscriptView()
        self._sessions: dict[str, Session] = {}
        self._group: TaskGroup | None = None

    async def __aenter__(self) -> Self:
        if self.store is not None:
            await self.store.delete_expired_tokens()
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
        config = config or AgentConfig()
        if self.store is not None:
            now = time.time()
            await self.store.create_session(
                StoredSession(
                    session_id,
                    config.model_dump(mode="json"),
                    SessionStatus.IDLE.value,
                    now,
                    now,
                    parent,
                    tuple(history or ()),
                )
            )
        session = self._new_session(session_id, config, provider, scope, parent)
        if history is not None:
            for tool_use_id, name in session.restore(history):
                session.lost(tool_use_id, name)
        return await self._start(session)

    async def resume(self, session_id: str, *, provider: Provider | None = None) -> Session:
        """Bring a stored session back, in this (possibly fresh) runtime.

        Calls its history waited for are ``orphaned`` now, and the model is told
        so before its next request; deferred calls come back ``pending`` and
        their tokens still complete them.
        """
        if self.store is None:
            raise RuntimeError("resume needs a Host with a store")
        if session_id in self._sessions:
            raise ValueError(f"session {session_id!r} is already running here")
        stored = await self.store.load_session(session_id)
        if stored is None:
            raise UnknownSessionError(session_id)
        config = AgentConfig.model_validate(stored.config)
        session = self._new_session(
            session_id, config, provider, Scope.OWN, stored.parent_session_id
        )
        waiting = dict(session.restore(list(stored.history)))
        completed_while_down = []
        for token in await self.store.tokens_of(session_id):
            if token.provider_call_id not in waiting:
                continue
            del waiting[token.provider_call_id]
            call_id = self.runtime.submit(
                token.tool_name,
                token.tool_input,
                session_id=session_id,
                provider_call_id=token.provider_call_id,
                conversation_id=session_id,
                deferred=True,
            )
            self.tokens.bind(
                TokenRecord(
                    token.token, session_id, call_id, token.provider_call_id, token.tool_name
                )
            )
            session.await_outcome(call_id, token.provider_call_id)
            if token.completed_at is not None:
                completed_while_down.append((call_id, token))
        for tool_use_id, name in waiting.items():
            session.lost(tool_use_id, name)
        await self._start(session)
        for call_id, token in completed_while_down:  # now the session hears of it
            self.runtime.complete(call_id, token.result, error=token.error)
        return session

    def _new_session(
        self,
        session_id: str,
        config: AgentConfig,
        provider: Provider | None,
        scope: Scope,
        parent: str | None,
    ) -> Session:
        if parent is not None:
            self.lineage.add(session_id, parent)
        if config.max_running_per_session is not None:
            self.runtime.set_session_cap(session_id, config.max_running_per_session)
        self.runtime.open_session(session_id, agent=config.name, model=config.model, parent=parent)
        return Session(
            session_id,
            config,
            runtime=self.runtime,
            provider=provider or self.provider,
            toolbox=self.toolbox,
            view=self._view,
            tokens=self.tokens,
            scope=scope,
            store=self.store,
        )

    async def _start(self, session: Session) -> Session:
        assert self._group is not None
        self._sessions[session.session_id] = session
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
