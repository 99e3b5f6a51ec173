"""Many sessions on one runtime: create, find, talk to, stop and list them.

With a store, a host owns each session it loads through a lease that it
renews while the session is loaded and gives up when it closes: another
host (another process) cannot load the session meanwhile unless it steals it,
and then this one stops writing it (``leases``); it also mirrors its
sessions' calls into the store and applies the cancel requests other
processes leave there (``mirror``). A host can unload sessions left at
rest (``idle``) and resume stored ones (``resume``).
"""

from __future__ import annotations

import builtins
import time
import uuid
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Self

import anyio
from anyio.abc import TaskGroup

from agentos._errors import SessionBusyError, UnknownSessionError, UsageError
from agentos._host.call_lookup import CANCEL_WAIT_SECONDS, CancelReport, cancel_call, find_call
from agentos._host.call_view import CallView
from agentos._host.children import SubAgents
from agentos._host.idle import unload_idle, unload_refusal
from agentos._host.leases import LeaseKeeper
from agentos._host.listing import SessionSummary, loaded_summary, merged, stored_summaries
from agentos._host.maker import SessionMaker, SessionTask, run_session
from agentos._host.mirror import CallMirror, check_period
from agentos._host.naming import rename_session
from agentos._host.resume import Restored, nudge_if_news, restore
from agentos._kernel.checks import check_seconds
from agentos._kernel.runtime import Runtime
from agentos._model.function_model import FunctionModel
from agentos._model.messages import Message
from agentos._model.provider import Provider
from agentos._sessions.scope import Scope, SessionLineage
from agentos._sessions.session import Session
from agentos._sessions.tokens import ContinuationTokens
from agentos._sessions.tool_access import ToolAccess
from agentos._sessions.toolbox import SystemToolbox
from agentos._store.protocol import Completion, SessionStore, StoredSession
from agentos._turns.agent_config import AgentConfig
from agentos._turns.agent_problems import fit_problems
from agentos._turns.context_view import ContextView, TranscriptView
from agentos._turns.events import SessionStatus
from agentos._turns.history import HistoryCall
from components import Json

EXPIRED_TOKEN_GRACE = 7 * 24 * 3600.0
"""Seconds an expired token is kept, so a session resumed later tells its model it expired."""


class Host(anyio.AsyncContextManagerMixin):
    """Runs sessions on one ``Runtime``, each in its own task, all sharing the caps.

    One session's failing provider or crashing loop touches no other session.
    Use ``async with Host(...)``: sessions run in its task group.
    """

    def __init__(
        self,
        runtime: Runtime,
        provider: Provider,
        *,
        view: ContextView | None = None,
        store: SessionStore | None = None,
        token_ttl: float | None = None,
        unload_idle_after: float | None = None,
        lease_period: float = 5.0,
        lease_expiry: float | None = None,
        holder: str | None = None,
        call_mirror_period: float | None = 0.5,
        tracer_provider: object | None = None,
    ) -> None:
        """``token_ttl``: seconds a continuation token stays valid (None: until used).

        ``unload_idle_after``: seconds (on the runtime's clock) after which a
        session that is stopped, or idle with no call outstanding, is unloaded
        (see ``unload``); None: sessions stay loaded until unloaded.

        Leases: renewed every ``lease_period`` seconds of the runtime's clock,
        each good for ``lease_expiry`` (default three periods) after its last
        renewal. ``holder`` names this host in the store [default: ``pid N on
        HOSTNAME``, and ``, host K`` for the K-th host of a process].

        ``call_mirror_period``: with a store, every this many seconds of the
        runtime's clock the host writes the calls that changed to the store's
        live mirror and applies the cancel requests left there for its
        sessions, so other processes can look at and cancel them (None: no
        mirror, and such requests go unanswered).

        ``tracer_provider``: an OpenTelemetry ``TracerProvider`` to report spans to
        (``agentos[otel]``); None: the global one, once the application has set one, else
        no tracing at all.
        """
        self._leases = LeaseKeeper(store, holder, period=lease_period, expiry=lease_expiry)
        mirror_period = check_period(call_mirror_period)
        if unload_idle_after is not None:
            check_seconds("unload_idle_after", unload_idle_after)
        self.runtime = runtime
        self.provider = provider
        self.store = store
        self.lineage = SessionLineage()
        self.tokens = ContinuationTokens(runtime, store, ttl=token_ttl)
        self._children = SubAgents(runtime, self.get, self.create_session, self.resume)
        self.toolbox = SystemToolbox(
            runtime, history=self, lineage=self.lineage, children=self._children
        )
        self._sessions: dict[str, Session] = {}
        self._resuming: dict[str, anyio.Event] = {}
        """Sessions a ``resume`` is bringing back (it awaits the store) -> set once done."""
        self._opening = anyio.Lock()
        self._restored: dict[str, Restored] = {}
        """What each resume found, until ``catch_up`` tells the model."""
        self._tasks: dict[str, SessionTask] = {}
        self._unload_idle_after = unload_idle_after
        self._group: TaskGroup | None = None
        self.holder = self._leases.holder
        self._mirror = (
            None
            if store is None or mirror_period is None
            else CallMirror(runtime, store, self.holder, mirror_period, self.tokens)
        )
        self._maker = SessionMaker(
            runtime,
            self.toolbox,
            view or TranscriptView(),
            self.tokens,
            store,
            self.lineage,
            self._mirror,
            tracer_provider,
        )

    @asynccontextmanager
    async def __asynccontextmanager__(self) -> AsyncGenerator[Self]:
        """Tokens expired over a week ago go first; while open, leases are kept and idle sessions
        unloaded; on the way out every session task ends, then the leases are given up."""
        if self.store is not None:
            await self.store.delete_expired_tokens(grace=EXPIRED_TOKEN_GRACE)
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                if self._unload_idle_after is not None:
                    group.start_soon(
                        unload_idle,
                        self._sessions,
                        self.unload,
                        self.runtime.clock,
                        self._unload_idle_after,
                    )
                if self.store is not None:
                    group.start_soon(self._leases.keep, self.runtime.clock, self._taken_over)
                if self._mirror is not None:
                    group.start_soon(self._mirror.keep, self.runtime.clock)
                try:
                    yield self
                finally:
                    group.cancel_scope.cancel()
        finally:
            if self._mirror is not None:  # the final states, while the leases still say ours
                with anyio.CancelScope(shield=True):
                    await self._mirror.write(answer=False)
                self._mirror.unwatch_all()
            await self._leases.release_all()

    async def create_session(
        self,
        config: AgentConfig | None = None,
        *,
        session_id: str | None = None,
        parent: str | None = None,
        provider: Provider | None = None,
        scope: Scope = Scope.OWN,
        history: list[Message] | None = None,
        parent_call: str | None = None,
    ) -> Session:
        """Start a session's loop; ``parent`` records who spawned it (for ``children`` scope),
        ``parent_call`` the call it runs for as a sub-agent (its calls nest under it).

        ``UsageError`` if ``config`` names a tool the runtime lacks, or needs an
        isolated runner it does not have.

        The session's model is ``provider``, else the function ``config.model`` names by
        import path (``"module:function"``, a ``FunctionModel``), else the host's.

        ``history`` restores an earlier conversation (Anthropic Messages): calls
        it mentions that this runtime does not hold report ``orphaned``.
        """
        if self._group is None:
            raise UsageError("use 'async with Host(...)' before creating sessions")
        session_id = session_id or f"session-{uuid.uuid4()}"
        if session_id in self._sessions:
            raise ValueError(f"a session with id {session_id!r} already exists")
        if parent is not None:
            self.get(parent)
        config = config or AgentConfig()
        self._children.register(config)
        problems = fit_problems(config, self.runtime.tools, self.runtime.runners)
        if problems:
            raise UsageError(f"agent {config.name!r}: " + "; ".join(problems))
        access = ToolAccess(config, self.runtime)
        model = self._provider_for(config, provider)
        version = None
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
            version = await self._leases.acquire(session_id, steal=False)
        session = self._maker.make(
            session_id,
            config,
            model,
            access,
            scope=scope,
            parent=parent,
            version=version,
            parent_call=parent_call,
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
        return named or self.provider

    async def resume(
        self,
        session_id: str,
        *,
        provider: Provider | None = None,
        steal: bool = False,
        config: AgentConfig | None = None,
    ) -> Session:
        """Bring a stored session back, in this (possibly fresh) runtime.

        Calls its history waited for are ``orphaned`` now, and the model is told
        so before its next request; deferred calls come back ``pending`` and
        their tokens still complete them. ``SessionInUseError`` while another
        live host holds the session, unless ``steal`` (that host stops writing it);
        ``catch_up`` makes sure the model hears that news soon. Idempotent: a session live
        here already is returned as it is (nothing sent, nothing reloaded), and a second
        ``resume`` while the first is bringing it back waits for that one. ``config``
        continues it with another agent configuration (a changed agent file) instead of
        the stored one, in this process.
        """
        if self.store is None:
            raise UsageError(
                "resume needs a Host with a store (without one, an unloaded session is gone)"
            )
        while session_id in self._resuming:
            await self._resuming[session_id].wait()
        self._resuming[session_id] = done = anyio.Event()
        try:
            return await self._resume(session_id, provider, steal, config)
        finally:
            del self._resuming[session_id]
            done.set()

    async def _resume(
        self,
        session_id: str,
        provider: Provider | None,
        steal: bool,
        config: AgentConfig | None,
    ) -> Session:
        assert self.store is not None
        loaded = self._sessions.get(session_id)
        if loaded is not None:
            if not loaded.ended:
                return loaded  # live here already: resuming again changes nothing
            await self.unload(session_id)  # ended: resumed from what the store holds
        # What the session needs is found before its lease is taken: a model or tool this
        # process cannot have leaves the process holding it undisturbed.
        ahead = await self.store.load_session(session_id)
        if ahead is None:
            raise UnknownSessionError(session_id)
        prepared = self._prepare(config or AgentConfig.model_validate(ahead.config), provider)
        version = await self._leases.acquire(session_id, steal=steal)
        if version is None:
            raise UnknownSessionError(session_id)
        try:  # loaded once the lease is ours, so nobody changes it meanwhile
            stored = await self.store.load_session(session_id)
            if stored is None:
                raise UnknownSessionError(session_id)
            if config is None and stored.config != ahead.config:  # changed meanwhile
                prepared = self._prepare(AgentConfig.model_validate(stored.config), provider)
            config, access, model = prepared
            mirrored = await self.store.mirrored_calls(session_id=session_id)
        except BaseException:
            await self._leases.release(session_id)
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
        tokens = await self.store.tokens_of(session_id)
        history = list(stored.history)
        asked = stored.status not in (SessionStatus.IDLE.value, SessionStatus.STOPPED.value)
        restored = restore(
            session,
            history,
            tokens,
            self.runtime,
            self.tokens,
            stored.board,
            asked=asked,
            reattach=await self._children.reattacher(self.store, session),
            mirrored=mirrored,
        )
        await self._start(session)
        for call_id, token in restored.completed_while_down:  # now the session hears of it
            error = token.expiry_text if token.expired else token.error
            self.runtime.complete(call_id, token.result, error=error)
        self._restored[session_id] = restored
        return session

    def _prepare(
        self, config: AgentConfig, provider: Provider | None
    ) -> tuple[AgentConfig, ToolAccess, Provider]:
        """What a session of ``config`` runs with here: its tools and its model;
        ``UsageError`` if this process lacks one."""
        self._children.register(config)
        return config, ToolAccess(config, self.runtime), self._provider_for(config, provider)

    async def catch_up(self, session_id: str, nudge: str) -> bool:
        """Let a resumed session's model catch up: once the outcomes that arrived while no
        process ran are heard, post ``nudge`` if the model has news (those, or calls lost
        in the restart) and no turn started by itself to tell it. Whether it posted."""
        session = self.get(session_id)
        return await nudge_if_news(
            session, self.runtime, self._restored.pop(session_id, None), nudge
        )

    def _taken_over(self, session_id: str, holder: str | None) -> None:
        """Another host took the session's lease: the session stops writing it."""
        session = self._sessions.get(session_id)
        if session is not None:
            session.disown(
                f"session {session_id!r} was taken over by {holder or 'another host'}; "
                "this host stops writing it, so nothing the other writes is lost"
            )

    async def _start(self, session: Session) -> Session:
        assert self._group is not None
        self._sessions[session.session_id] = session
        self._tasks[session.session_id] = task = SessionTask()
        await self._group.start(run_session, session, task)
        return session

    async def unload(self, session_id: str, *, cancel: bool = False) -> None:
        """Stop the session and forget it here and in the runtime, so a long-lived
        host holds only the sessions in use; ``resume`` brings it back from the store.

        A session that is idle or stopped unloads at once. One that is mid-turn
        (thinking, or waiting for calls) is refused with ``SessionBusyError``, as
        is, without a store, one with calls whose outcome the model has not
        heard. ``cancel=True`` unloads it anyway: the model request in flight
        and the session's unfinished calls are cancelled. With a store the
        history is committed first (a ``StoreError`` leaves the session here,
        stopped); calls left running go on, and a ``resume`` in this host while
        the runtime still holds them delivers their outcome. Deferred calls
        leave the runtime; their tokens, kept by the store, still complete
        them. Without a store the session is gone.
        """
        session = self.get(session_id)
        busy = None if cancel else unload_refusal(session, has_store=self.store is not None)
        if busy is not None:
            raise SessionBusyError(
                f"cannot unload session {session_id!r}: it {busy}; "
                "wait for it, or unload(..., cancel=True)"
            )
        task = self._tasks[session_id]
        failed = session.status is SessionStatus.FAILED and not session.ended
        session.stop(cancel_calls=False)
        if cancel:
            task.scope.cancel()
        await task.ended.wait()
        for call in self.runtime.list_calls(session_id, include_final=False):
            if cancel or call.deferred:
                self.runtime.cancel(call.call_id, "the session was unloaded")
        await session.commit()
        if failed and self.store is not None:  # unloading is no stop: a resume tries again
            await self.store.set_status(session_id, SessionStatus.FAILED.value)
        if self._sessions.get(session_id) is not session:
            return  # another unload finished first
        if self._mirror is not None:  # its calls' final states (the cancels just made)
            await self._mirror.write(answer=False)
            self._mirror.unwatch(session_id)
        del self._sessions[session_id]
        del self._tasks[session_id]
        self._restored.pop(session_id, None)
        self.lineage.remove(session_id)
        self.tokens.forget(session_id)
        self.toolbox.forget(session_id)
        self._children.forget(session_id)
        self.runtime.close_session(session_id)
        await self._leases.release(session_id)

    def child_of(self, call_id: str) -> Session | None:
        """The child session a running sub-agent call runs (None for another call)."""
        return self._children.child_of(call_id)

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
        """The sessions loaded here (an unloaded one is only in the store: see ``sessions``)."""
        return [loaded_summary(session) for session in self._sessions.values()]

    async def sessions(self) -> builtins.list[SessionSummary]:
        """Every session this host can ``open``: those loaded here and those only its store
        holds (``live=False``), oldest activity first."""
        loaded = [loaded_summary(s, self.runtime) for s in self._sessions.values()]
        if self.store is None:
            return merged(loaded, [])
        held = await self.store.live_leases()
        return merged(loaded, await stored_summaries(self.store, held))

    async def rename(self, session_id: str, title: str) -> SessionSummary:
        """Name a session (``Session.rename``: an empty ``title`` gives back its first words)
        and return its summary; one only the store holds is renamed there, not resumed.
        ``UnknownSessionError`` if neither holds it. A title is a label, not a turn: a
        session another process holds can be renamed too (it shows there once reloaded)."""
        return await rename_session(self._sessions, self.store, self.runtime, session_id, title)

    async def open(self, session_id: str) -> Session:
        """The session: loaded here, else resumed from the store (as is one that ended here:
        stopped, or taken over by a host that has let it go since). ``UnknownSessionError``
        if neither holds it; two opens of one stored session resume it once."""
        async with self._opening:
            loaded = self._sessions.get(session_id)
            if loaded is not None and (not loaded.ended or self.store is None):
                return loaded
            if self.store is None or await self.store.load_session(session_id) is None:
                raise UnknownSessionError(session_id)
            return await self.resume(session_id)

    async def holders(self) -> dict[str, str]:
        """Who holds each session now (session -> holder): this host (``holder``) for the
        sessions it holds, else the store's live leases. Reading it is how a host learns at
        once that another took one of its sessions (it stops, as at the next renewal)."""
        if self.store is None:
            return dict.fromkeys(self._sessions, self.holder)
        return await self._leases.holders(self._taken_over)

    async def complete(
        self, token: str, result: Json = None, *, error: str | None = None
    ) -> Completion:
        """Complete a deferred call by its continuation token (idempotent)."""
        return await self.tokens.complete(token, result, error=error)

    async def look_up_call(self, call_id: str, *, session_id: str | None = None) -> CallView:
        """A call of any session the store holds, run here, elsewhere or nowhere, as a person
        sees it (``agentos.stores.find_call``: ids whole or their start)."""
        return await find_call(self._store_for("look_up_call"), call_id, session_id)

    async def cancel_call(
        self,
        call_id: str,
        reason: str,
        *,
        session_id: str | None = None,
        wait: float = CANCEL_WAIT_SECONDS,
    ) -> CancelReport:
        """Cancel a call of any session the store holds, through the process holding it
        (``agentos.stores.cancel_call``), waiting up to ``wait`` seconds for its answer."""
        store = self._store_for("cancel_call")
        return await cancel_call(
            store, await find_call(store, call_id, session_id), reason, wait=wait
        )

    def _store_for(self, what: str) -> SessionStore:
        if self.store is None:
            raise UsageError(f"{what} needs a Host with a store (it reads calls from there)")
        return self.store

    def find_call(self, session_id: str, call_id: str) -> HistoryCall | None:
        """The ``HistoryLookup`` the toolbox asks: what a session's history says of a call."""
        session = self._sessions.get(session_id)
        return None if session is None else session.calls.find_call(session_id, call_id)
