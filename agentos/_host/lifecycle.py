"""A host's sessions coming and going: created, resumed from the store, opened, unloaded.

``HostCore`` is what every part of a host shares; ``SessionLifecycle`` makes, starts and
forgets sessions with it, and is the ``ChildOpener`` its sub-agents open children with.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass
from typing import TypedDict
from typing import Unpack

import anyio

from agentos._errors import SessionBusyError
from agentos._errors import UnknownSessionError
from agentos._errors import UsageError
from agentos._host.children import SubAgents
from agentos._host.idle import unload_refusal
from agentos._host.leases import LeaseKeeper
from agentos._host.maker import NewSession
from agentos._host.maker import SessionMaker
from agentos._host.maker import SessionTask
from agentos._host.maker import run_session
from agentos._host.mirror import CallMirror
from agentos._host.registry import SessionRegistry
from agentos._host.remote_tasks import either
from agentos._host.remote_tasks import task_reattacher
from agentos._host.resume import nudge_if_news
from agentos._host.resume import restore
from agentos._kernel.interrupt import Interrupt
from agentos._kernel.runtime import Runtime
from agentos._model.function_model import FunctionModel
from agentos._model.provider import Provider
from agentos._sessions.scope import Scope
from agentos._sessions.scope import SessionLineage
from agentos._sessions.session import Session
from agentos._sessions.tokens import ContinuationTokens
from agentos._sessions.tool_access import ToolAccess
from agentos._sessions.toolbox import SystemToolbox
from agentos._store.protocol import SessionStore
from agentos._store.protocol import StoredSession
from agentos._turns.agent_config import AgentConfig
from agentos._turns.agent_problems import fit_problems
from agentos._turns.context_view import ContextView
from agentos._turns.events import SessionStatus


@dataclass(frozen=True, slots=True)
class HostCore:
    """What every part of one host shares: its runtime, default model and store, the
    sessions it has loaded, and the records kept across them."""

    runtime: Runtime
    provider: Provider
    store: SessionStore | None
    sessions: SessionRegistry
    lineage: SessionLineage
    tokens: ContinuationTokens
    leases: LeaseKeeper
    mirror: CallMirror | None


class Resumption(TypedDict, total=False):
    """``Host.resume``'s keywords: its model, whether to steal it, the agent it goes on as."""

    provider: Provider | None
    steal: bool
    config: AgentConfig | None


_ACCESSES_KEPT = 16


class SessionLifecycle:
    """Creates, resumes, opens and unloads the sessions of one host (``Host``'s methods of
    those names say what each does), and runs their tasks while the host is open.

    A session's task is a plain asyncio task with an ``Interrupt`` of its own (as a call's
    is, in ``Work``): anyio's ``start_soon`` adds a task handle, a scope and an event to
    each, and a scope anyio's task state, which a sub-agent's child pays for on every
    call."""

    def __init__(self, core: HostCore, view: ContextView, tracer_provider: object | None) -> None:
        self._core = core
        self._loop: asyncio.AbstractEventLoop | None = None
        """The host's event loop while it is open (None: closed)."""
        self._running: dict[asyncio.Task[None], SessionTask] = {}
        """Each session task that has not ended (the only strong reference to it)."""
        self._opening = anyio.Lock()
        self._accesses: dict[int, tuple[AgentConfig, ToolAccess]] = {}
        """By ``id(config)``, the config kept (so its id is not another's) and its access:
        the newest ``_ACCESSES_KEPT`` configs'."""
        self.children = SubAgents(core.runtime, core.sessions, self)
        self.toolbox = SystemToolbox(
            core.runtime, history=core.sessions, lineage=core.lineage, children=self.children
        )
        self._maker = SessionMaker(
            core.runtime,
            self.toolbox,
            view,
            core.tokens,
            core.store,
            core.lineage,
            core.mirror,
            tracer_provider,
        )

    def run_here(self) -> None:
        """The host opened: sessions' tasks start on this event loop from now on."""
        self._loop = asyncio.get_running_loop()

    async def end_sessions(self) -> None:
        """The host closes: no session starts from now on, and every session's task is
        cancelled and waited for (one that ignores its cancel holds the close, as a task
        group's child would)."""
        self._loop = None
        while self._running:
            for task in self._running.values():
                task.interrupt.cancel()
            await asyncio.wait(list(self._running))

    async def create_session(self, config: AgentConfig | None, how: NewSession) -> Session:
        core = self._core
        session_id, parent, history = how.session_id, how.parent, how.history
        if self._loop is None:
            raise UsageError("use 'async with Host(...)' before creating sessions")
        session_id = session_id or f"session-{uuid.uuid4()}"
        if session_id in core.sessions:
            raise ValueError(f"a session with id {session_id!r} already exists")
        if parent is not None:
            core.sessions.get(parent)
        config = config or AgentConfig()
        self.children.register(config)
        problems = fit_problems(config, core.runtime.tools, core.runtime.runners)
        if problems:
            raise UsageError(f"agent {config.name!r}: " + "; ".join(problems))
        access = self._access(config)
        model = self._provider_for(config, how.provider)
        version = None
        if core.store is not None:
            now = time.time()
            await core.store.create_session(
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
            version = await core.leases.acquire(session_id, steal=False)
        session = self._maker.make(
            session_id,
            config,
            model,
            access,
            scope=how.scope,
            parent=parent,
            version=version,
            parent_call=how.parent_call,
        )
        if history is not None:
            for tool_use_id, name in session.restore(history):
                session.lost(tool_use_id, name)
        return await self._start(session)

    def _provider_for(self, config: AgentConfig, provider: Provider | None) -> Provider:
        """``provider`` if given, else the function the agent's ``model`` names by import path
        (``module:function``), else the host's; ``UsageError`` if that function is not there."""
        if provider is not None:
            return provider
        try:
            named = FunctionModel.named(config.model, config.import_path)
        except UsageError as error:
            raise UsageError(f"agent {config.name!r}: model: {error}") from None
        return named or self._core.provider

    async def resume(self, session_id: str, **how: Unpack[Resumption]) -> Session:
        provider, config = how.get("provider"), how.get("config")
        if self._core.store is None:
            raise UsageError(
                "resume needs a Host with a store (without one, an unloaded session is gone)"
            )
        async with self._core.sessions.resuming(session_id):
            return await self._resume(session_id, provider, how.get("steal", False), config)

    async def _resume(
        self,
        session_id: str,
        provider: Provider | None,
        steal: bool,
        config: AgentConfig | None,
    ) -> Session:
        core = self._core
        assert core.store is not None
        loaded = core.sessions.find(session_id)
        if loaded is not None:
            if not loaded.ended:
                return loaded  # live here already: resuming again changes nothing
            await self.unload(session_id)  # ended: resumed from what the store holds
        # What the session needs is found before its lease is taken: a model or tool this
        # process cannot have leaves the process holding it undisturbed.
        ahead = await core.store.load_session(session_id)
        if ahead is None:
            raise UnknownSessionError(session_id)
        prepared = self._prepare(config or AgentConfig.model_validate(ahead.config), provider)
        version = await core.leases.acquire(session_id, steal=steal)
        if version is None:
            raise UnknownSessionError(session_id)
        try:  # loaded once the lease is ours, so nobody changes it meanwhile
            stored = await core.store.load_session(session_id)
            if stored is None:
                raise UnknownSessionError(session_id)
            if config is None and stored.config != ahead.config:  # changed meanwhile
                prepared = self._prepare(AgentConfig.model_validate(stored.config), provider)
            config, access, model = prepared
            mirrored = await core.store.mirrored_calls(session_id=session_id)
        except BaseException:
            await core.leases.release(session_id)
            raise
        session = self._maker.make(
            session_id,
            config,
            model,
            access,
            scope=Scope.OWN,
            parent=stored.parent_session_id,
            version=version,
            usage=stored.usage,
            title=stored.title,
        )
        tokens = await core.store.tokens_of(session_id)
        history = list(stored.history)
        asked = stored.status not in (SessionStatus.IDLE.value, SessionStatus.STOPPED.value)
        restored = restore(
            session,
            history,
            tokens,
            core.runtime,
            core.tokens,
            stored.board,
            asked=asked,
            reattach=either(
                await self.children.reattacher(core.store, session),
                task_reattacher(core.runtime, session_id, mirrored),
            ),
            mirrored=mirrored,
        )
        await self._start(session)
        for call_id, token in restored.completed_while_down:  # now the session hears of it
            error = token.expiry_text if token.expired else token.error
            core.runtime.complete(call_id, token.result, error=error)
        core.sessions.keep_restored(session_id, restored)
        return session

    def _prepare(
        self, config: AgentConfig, provider: Provider | None
    ) -> tuple[AgentConfig, ToolAccess, Provider]:
        """What a session of ``config`` runs with here: its tools and its model;
        ``UsageError`` if this process lacks one."""
        self.children.register(config)
        return config, self._access(config), self._provider_for(config, provider)

    def _access(self, config: AgentConfig) -> ToolAccess:
        """The agent's tool access, one for the sessions of one config (their tool
        definitions and facts with it, which it makes again once the runtime's tools
        change): a sub-agent's sessions and a host's like sessions open without building
        them."""
        kept = self._accesses.get(id(config))
        if kept is not None and kept[0] is config:
            return kept[1]
        access = ToolAccess(config, self._core.runtime)
        if len(self._accesses) >= _ACCESSES_KEPT:
            del self._accesses[next(iter(self._accesses))]
        self._accesses[id(config)] = (config, access)
        return access

    async def catch_up(self, session_id: str, nudge: str) -> bool:
        session = self._core.sessions.get(session_id)
        restored = self._core.sessions.take_restored(session_id)
        return await nudge_if_news(session, self._core.runtime, restored, nudge)

    async def open(self, session_id: str) -> Session:
        async with self._opening:
            store = self._core.store
            loaded = self._core.sessions.find(session_id)
            if loaded is not None and (not loaded.ended or store is None):
                return loaded
            if store is None or await store.load_session(session_id) is None:
                raise UnknownSessionError(session_id)
            return await self.resume(session_id)

    def taken_over(self, session_id: str, holder: str | None) -> None:
        """Another host took the session's lease: the session stops writing it."""
        session = self._core.sessions.find(session_id)
        if session is not None:
            session.disown(
                f"session {session_id!r} was taken over by {holder or 'another host'}; "
                "this host stops writing it, so nothing the other writes is lost"
            )

    async def _start(self, session: Session) -> Session:
        if self._loop is None:  # the host closed while this session was being opened
            raise UsageError("the host is closed: open sessions with 'async with Host(...)'")
        task = SessionTask(session.session_id, Interrupt(self._loop))
        self._core.sessions.add(session, task)
        session.prepare_run()  # it hears of its calls now: its task need not be waited for
        running = self._loop.create_task(run_session(session, task))
        self._running[running] = task
        running.add_done_callback(self._ended)
        return session

    def _ended(self, running: asyncio.Task[None]) -> None:
        self._core.sessions.ended(self._running.pop(running))

    async def unload(self, session_id: str, *, cancel: bool = False) -> None:
        core = self._core
        session = core.sessions.get(session_id)
        busy = None if cancel else unload_refusal(session, has_store=core.store is not None)
        if busy is not None:
            raise SessionBusyError(
                f"cannot unload session {session_id!r}: it {busy}; "
                "wait for it, or unload(..., cancel=True)"
            )
        task = core.sessions.task_of(session_id)
        failed = session.status is SessionStatus.FAILED and not session.ended
        session.stop(cancel_calls=False)
        if task is not None:
            if cancel:
                task.interrupt.cancel()
            await task.ended.wait()
        for call in core.runtime.list_calls(session_id, include_final=False):
            if cancel or call.deferred:
                core.runtime.cancel(call.call_id, "the session was unloaded")
        await session.commit()
        if failed and core.store is not None:  # unloading is no stop: a resume tries again
            await core.store.set_status(session_id, SessionStatus.FAILED.value)
        if core.sessions.find(session_id) is not session:
            return  # another unload finished first
        if core.mirror is not None:  # its calls' final states (the cancels just made)
            await core.mirror.write(answer=False)
            core.mirror.unwatch(session_id)
        core.sessions.remove(session)
        core.lineage.remove(session_id)
        core.tokens.forget(session_id)
        self.toolbox.forget(session_id)
        self.children.forget(session_id)
        core.runtime.close_session(session_id)
        await core.leases.release(session_id)
