"""How a host sets up one session (its place in the lineage, the runtime and the mirror,
from the parts every session of the host shares) and runs its task."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field

import anyio
import anyio.abc

from agentos._host.mirror import CallMirror
from agentos._kernel.interrupt import Interrupt
from agentos._kernel.runtime import Runtime
from agentos._model.messages import Message
from agentos._model.provider import Provider
from agentos._sessions.error_record import ErrorRecord
from agentos._sessions.scope import Scope
from agentos._sessions.scope import SessionLineage
from agentos._sessions.session import Session
from agentos._sessions.tokens import ContinuationTokens
from agentos._sessions.tool_access import ToolAccess
from agentos._sessions.toolbox import SystemToolbox
from agentos._sessions.tracing import configured_tracer
from agentos._store.protocol import SessionStore
from agentos._turns.agent_config import AgentConfig
from agentos._turns.context_view import ContextView
from agentos._turns.result_cache import ResultCache
from agentos._turns.tool_policy import ExecutionMode


@dataclass(frozen=True, slots=True)
class SessionMaker:
    """What the sessions of one host share; ``make`` builds one (its task not started)."""

    runtime: Runtime
    toolbox: SystemToolbox
    view: ContextView
    tokens: ContinuationTokens
    store: SessionStore | None
    lineage: SessionLineage
    mirror: CallMirror | None
    tracer_provider: object | None = None
    results: ResultCache = field(default_factory=ResultCache)
    """The cache decorator's results, shared by every session of the host."""

    def make(
        self,
        session_id: str,
        config: AgentConfig,
        provider: Provider,
        access: ToolAccess,
        *,
        scope: Scope,
        parent: str | None,
        version: int | None,
        parent_call: str | None = None,
        usage: Mapping[str, int] | None = None,
        title: str | None = None,
    ) -> Session:
        if parent is not None:
            self.lineage.add(session_id, parent)
        cap = config.max_running_per_session
        if cap is None and config.execution_mode is ExecutionMode.SYNCHRONOUS:
            cap = 1  # the blocking loop: a turn's calls run one after another, in order
        if cap is not None:
            self.runtime.set_session_cap(session_id, cap)
        self.runtime.open_session(session_id, agent=config.name, model=config.model, parent=parent)
        if self.mirror is not None:
            self.mirror.watch(session_id)
        return Session(
            session_id,
            config,
            runtime=self.runtime,
            provider=provider,
            toolbox=self.toolbox,
            view=self.view,
            tokens=self.tokens,
            scope=scope,
            store=self.store,
            version=version,
            access=access,
            parent_call=parent_call,
            usage=usage,
            tracer=configured_tracer(self.tracer_provider),
            title=title,
            cache=self.results,
        )


@dataclass(slots=True)
class SessionTask:
    """A loaded session's running task: cancelled by ``unload(cancel=True)``, awaited by
    unload (its parts asyncio's own: a sub-agent's call opens a session).
    The registry forgets it once the task has ended."""

    session_id: str
    interrupt: Interrupt
    """How the host cancels the task (an anyio scope would make anyio's task state in
    each session's task: a sub-agent's call opens a session)."""
    ended: asyncio.Event = field(default_factory=asyncio.Event)


async def run_session(
    session: Session,
    task: SessionTask,
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """The session's task while its host is open: a crash ends that session only, recorded;
    the host's cancel (``task.interrupt``) ends it quietly."""
    interrupt = task.interrupt
    interrupt.enter()
    try:
        await session.run(task_status=task_status)
    except asyncio.CancelledError:
        if not interrupt.absorb():
            raise
    except Exception as error:
        message = f"{type(error).__name__}: {error}"
        session.errors.append(
            ErrorRecord("session_crashed", message, at=time.time(), turn=session.requests)
        )
    finally:
        interrupt.over()
        task.ended.set()


@dataclass(frozen=True, slots=True)
class NewSession:
    """Where a new session goes and what it starts from (``Host.create_session`` says each)."""

    session_id: str | None
    parent: str | None
    provider: Provider | None = None
    scope: Scope = Scope.OWN
    history: list[Message] | None = None
    parent_call: str | None = None
