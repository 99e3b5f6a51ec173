"""Many sessions on one runtime: create, find, talk to, stop and list them.

With a store, a host owns each session it loads through a lease that it
renews while the session is loaded and gives up when it closes: another
host (another process) cannot load the session meanwhile unless it steals it,
and then this one stops writing it (``leases``); it also mirrors its
sessions' calls into the store and applies the cancel requests other
processes leave there (``mirror``). A host can unload sessions left at
rest (``idle``) and resume stored ones (``resume``).

``Host`` is a facade: the loaded sessions are a ``SessionRegistry`` (``registry``), and
creating, resuming, opening and unloading them is ``SessionLifecycle``'s (``lifecycle``).
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Self

import anyio

from agentos._errors import UsageError
from agentos._host.call_lookup import CANCEL_WAIT_SECONDS
from agentos._host.call_lookup import CancelReport
from agentos._host.call_lookup import cancel_call
from agentos._host.call_lookup import find_call
from agentos._host.call_view import CallView
from agentos._host.idle import unload_idle
from agentos._host.leases import LeaseKeeper
from agentos._host.lifecycle import HostCore
from agentos._host.lifecycle import SessionLifecycle
from agentos._host.listing import SessionSummary
from agentos._host.listing import every_summary
from agentos._host.listing import loaded_summary
from agentos._host.maker import NewSession
from agentos._host.mirror import CallMirror
from agentos._host.mirror import check_period
from agentos._host.naming import rename_session
from agentos._host.registry import SessionRegistry
from agentos._kernel.checks import check_seconds
from agentos._kernel.questions import AskPerson
from agentos._kernel.runtime import Runtime
from agentos._model.messages import Message
from agentos._model.provider import ModelRequest
from agentos._model.provider import ModelResponse
from agentos._model.provider import Provider
from agentos._sessions.scope import Scope
from agentos._sessions.scope import SessionLineage
from agentos._sessions.session import Session
from agentos._sessions.tokens import ContinuationTokens
from agentos._store.protocol import Completion
from agentos._store.protocol import SessionStore
from agentos._toolsets.mcp.server import McpServer
from agentos._turns.agent_config import AgentConfig
from agentos._turns.context_view import ContextView
from agentos._turns.context_view import TranscriptView
from agentos._turns.history import HistoryCall
from components import Answer
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
        ask_person: AskPerson | None = None,
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

        ``ask_person``: who answers the questions calls ask a person (an MCP server's
        elicitation, ``ctx.ask``): it returns an ``Answer``, or None to leave the question
        for ``answer`` (a page or a terminal shows it); the runtime's ``ask_person``. None:
        the runtime's own, and with none a question is declined, saying nobody can be asked.
        """
        leases = LeaseKeeper(store, holder, period=lease_period, expiry=lease_expiry)
        mirror_period = check_period(call_mirror_period)
        if unload_idle_after is not None:
            check_seconds("unload_idle_after", unload_idle_after)
        self.runtime = runtime
        if ask_person is not None:
            runtime.ask_person = ask_person
        for toolset in runtime.toolsets.values():
            if isinstance(toolset, McpServer) and toolset.sampler is None:
                toolset.sampler = self._sample
        self.provider = provider
        self.store = store
        self.holder = leases.holder
        self.lineage = SessionLineage()
        self.tokens = ContinuationTokens(runtime, store, ttl=token_ttl)
        mirror = (
            None
            if store is None or mirror_period is None
            else CallMirror(runtime, store, self.holder, mirror_period, self.tokens)
        )
        self._core = HostCore(
            runtime, provider, store, SessionRegistry(), self.lineage, self.tokens, leases, mirror
        )
        self._sessions = self._core.sessions
        self._lifecycle = SessionLifecycle(self._core, view or TranscriptView(), tracer_provider)
        self.toolbox = self._lifecycle.toolbox
        self._unload_idle_after = unload_idle_after

    @asynccontextmanager
    async def __asynccontextmanager__(self) -> AsyncGenerator[Self]:
        """Tokens expired over a week ago go first; while open, leases are kept and idle sessions
        unloaded; on the way out every session task ends, then the leases are given up."""
        core = self._core
        if self.store is not None:
            await self.store.delete_expired_tokens(grace=EXPIRED_TOKEN_GRACE)
        try:
            async with anyio.create_task_group() as group:
                self._lifecycle.run_here()
                clock = self.runtime.clock
                if self._unload_idle_after is not None:
                    after = self._unload_idle_after
                    group.start_soon(
                        unload_idle, self._sessions, self._lifecycle.unload, clock, after
                    )
                if self.store is not None:
                    group.start_soon(core.leases.keep, clock, self._lifecycle.taken_over)
                if core.mirror is not None:
                    group.start_soon(core.mirror.keep, clock)
                try:
                    yield self
                finally:
                    with anyio.CancelScope(shield=True):
                        await self._lifecycle.end_sessions()
                    group.cancel_scope.cancel()
        finally:
            if core.mirror is not None:  # the final states, while the leases still say ours
                with anyio.CancelScope(shield=True):
                    await core.mirror.write(answer=False)
                core.mirror.unwatch_all()
            await core.leases.release_all()

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
        how = NewSession(session_id, parent, provider, scope, history, parent_call)
        return await self._lifecycle.create_session(config, how)

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
        return await self._lifecycle.resume(
            session_id, provider=provider, steal=steal, config=config
        )

    async def catch_up(self, session_id: str, nudge: str) -> bool:
        """Let a resumed session's model catch up: once the outcomes that arrived while no
        process ran are heard, post ``nudge`` if the model has news (those, or calls lost
        in the restart) and no turn started by itself to tell it. Whether it posted."""
        return await self._lifecycle.catch_up(session_id, nudge)

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
        await self._lifecycle.unload(session_id, cancel=cancel)

    def child_of(self, call_id: str) -> Session | None:
        """The child session a running sub-agent call runs (None for another call)."""
        return self._lifecycle.children.child_of(call_id)

    def get(self, session_id: str) -> Session:
        return self._sessions.get(session_id)

    def post(self, session_id: str, text: str) -> None:
        self.get(session_id).post(text)

    def stop(self, session_id: str) -> None:
        self.get(session_id).stop()

    def answer(self, session_id: str, call_id: str, answer: Answer) -> bool:
        """Answer the question a call of a session loaded here asks (its runtime id or the
        model's); False when it asks none now. ``UnknownSessionError``, ``UnknownCallError``
        for ids it does not hold."""
        self.get(session_id)
        found = self.runtime.resolve(call_id, session_id=session_id)
        return self.runtime.answer(found, answer, session_id=session_id)

    async def _sample(self, session_id: str, request: ModelRequest) -> tuple[str, ModelResponse]:
        """An MCP server's sampling request, for the session whose call it serves."""
        return await self.get(session_id).sample(request)

    def list(self) -> list[SessionSummary]:
        """The sessions loaded here (an unloaded one is only in the store: see ``sessions``)."""
        return [loaded_summary(session) for session in self._sessions.loaded()]

    async def sessions(self) -> builtins.list[SessionSummary]:
        """Every session this host can ``open``: those loaded here and those only its store
        holds (``live=False``), oldest activity first."""
        return await every_summary(self._sessions, self.store, self.runtime)

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
        return await self._lifecycle.open(session_id)

    async def holders(self) -> dict[str, str]:
        """Who holds each session now (session -> holder): this host (``holder``) for the
        sessions it holds, else the store's live leases. Reading it is how a host learns at
        once that another took one of its sessions (it stops, as at the next renewal)."""
        if self.store is None:
            return dict.fromkeys(self._sessions.loaded_ids(), self.holder)
        return await self._core.leases.holders(self._lifecycle.taken_over)

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
        """What a loaded session's history says of a call (the registry answers the
        toolbox's ``HistoryLookup`` with it)."""
        return self._sessions.find_call(session_id, call_id)
