"""One conversation with a model: what its caller uses (``Session``).

A session's turn is a pure machine (``TurnMachine``, or ``BoardMachine`` for
a board); ``Session`` is its API (post, stop, wait, read) and holds the parts
that do the work: a ``SessionTask`` (``task.py``, the async shell that performs
what the machine decides), its ``Usage``, its ``CallSubmitter`` and its ``SessionWriter``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Mapping

import anyio
from anyio.abc import TaskStatus

from agentos._board.board import Board
from agentos._errors import SessionEndedError
from agentos._errors import UnknownCallError
from agentos._kernel.runtime import Runtime
from agentos._kernel.snapshot import SessionStatistics
from agentos._model.messages import Message
from agentos._model.provider import ModelRequest
from agentos._model.provider import ModelResponse
from agentos._model.provider import PartialReply
from agentos._model.provider import Provider
from agentos._sessions.changes import SessionChanges
from agentos._sessions.error_record import ErrorRecord
from agentos._sessions.machines import board_of
from agentos._sessions.machines import machine_for
from agentos._sessions.machines import replies_since
from agentos._sessions.resumable import Resumable
from agentos._sessions.scope import Caller
from agentos._sessions.scope import Scope
from agentos._sessions.spans import spans_for
from agentos._sessions.submission import CallSubmitter
from agentos._sessions.submission import request_of
from agentos._sessions.task import SessionTask
from agentos._sessions.tokens import ContinuationTokens
from agentos._sessions.tool_access import ToolAccess
from agentos._sessions.toolbox import SystemToolbox
from agentos._sessions.usage import Usage
from agentos._sessions.writer import SessionWriter
from agentos._sessions.writer import trace_of
from agentos._store.protocol import SessionStore
from agentos._turns.agent_config import AgentConfig
from agentos._turns.chat import ChatEntry
from agentos._turns.context_view import ContextView
from agentos._turns.events import SessionStatus
from agentos._turns.events import StopRequested
from agentos._turns.events import UserPosted
from agentos._turns.history import MessageHistory
from agentos._turns.result_cache import ResultCache
from agentos._turns.title import first_words
from agentos._turns.title import session_title
from components import CallSnapshot


class Session(Resumable):
    """A conversation: its history, its calls, and the task that performs its turns.

    Created by ``Host.create_session``; ``post`` a user message and the session
    answers when the model has spoken. ``history`` is Anthropic Messages.
    """

    def __init__(
        self,
        session_id: str,
        config: AgentConfig,
        *,
        runtime: Runtime,
        provider: Provider,
        toolbox: SystemToolbox,
        view: ContextView,
        tokens: ContinuationTokens,
        scope: Scope = Scope.OWN,
        store: SessionStore | None = None,
        version: int | None = None,
        access: ToolAccess | None = None,
        parent_call: str | None = None,
        usage: Mapping[str, int] | None = None,
        tracer: object | None = None,
        title: str | None = None,
        cache: ResultCache | None = None,
    ) -> None:
        """``version``: the stored version this session owns (from its lease); every
        commit expects it, so none replaces another host's writes. ``access``: which
        tools the agent may call (made from ``config`` and ``runtime`` if not given).
        ``parent_call``: the call it runs as a sub-agent of (its calls nest under it).
        ``usage``: the requests and token counts it made before a restart (the store's).
        ``tracer``: an OpenTelemetry ``Tracer``, when the application configured tracing.
        ``title``: the name it was given before a restart (the store's).
        ``cache``: where the cache decorator keeps results (its host's, shared by the
        sessions whose agents' parameters are alike; None: its own)."""
        self.session_id = session_id
        self._name = title
        self._store = store
        self.config = config
        self.parent_call = parent_call
        self.errors: list[ErrorRecord] = []
        """What went wrong, oldest first: failed model requests, failed writes, a crash."""
        access = access or ToolAccess(config, runtime)
        facts = access.facts(tokens.ttl)
        self._machine = machine_for(
            session_id, config, access, facts, runtime=runtime, view=view, cache=cache
        )
        self._waiting = {}
        self._runtime = runtime
        self._changes = SessionChanges(session_id)
        self._spans = spans_for(tracer, session_id, config.name, earlier=trace_of(usage))
        self._usage = Usage(config)
        if usage:
            self._usage.restore(usage)
        self._task = SessionTask(
            session_id,
            config,
            self._machine,
            runtime=runtime,
            provider=provider,
            writer=SessionWriter(
                session_id, store, version, SessionStatus.IDLE, self._usage, self._spans
            ),
            usage=self._usage,
            submitter=CallSubmitter(
                session_id,
                runtime,
                toolbox,
                tokens,
                Caller(session_id, scope=scope),
                parent_call,
                self._spans,
            ),
            access=access,
            errors=self.errors,
            changes=self._changes,
            spans=self._spans,
        )

    async def sample(self, request: ModelRequest) -> tuple[str, ModelResponse]:
        """Ask the session's model outside its turns, as an MCP server's sampling does: its
        provider, model, budget and ``request_timeout``, counted in its usage, kept out of
        its history. The model's name and answer; ``ProviderError`` if it fails."""
        return await self._task.sample(request)

    @property
    def changed_at(self) -> float:
        """When (the runtime's clock) the status last changed: how long it has been idle."""
        return self._task.changed_at

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """The session's own task (the host runs it): it performs what the machine asks."""
        await self._task.run(task_status=task_status)

    def prepare_run(self) -> None:
        """What ``run`` does first, done now: once it is, the task need not be waited for
        to start (the host calls it, then starts ``run`` without waiting)."""
        self._task.prepare()

    # ------------------------------------------------------------------ the API

    @property
    def status(self) -> SessionStatus:
        return self._machine.view.status

    @property
    def streaming(self) -> PartialReply | None:
        """The model's reply as it forms: its text so far and the ``tool_use`` blocks
        already whole (a provider that streams, as ``AnthropicProvider`` does); None
        between replies. ``on_change`` fires each time it grows; the machine sees the
        reply once it is whole, and then this is None again."""
        return self._task.streaming

    @property
    def history(self) -> list[Message]:
        """The conversation's messages (a board session's: none, its board is its record)."""
        return list(self._machine.view.history)

    @property
    def message_count(self) -> int:
        """How many messages ``history`` holds, without building them (a listing's count)."""
        return self._machine.view.length

    @property
    def title(self) -> str:
        """What to call the session: the name ``rename`` gave it, else the first thing the
        person said (on one line, cut at 80 characters); empty while nothing is said."""
        if self._name is not None:
            return self._name
        view = self._machine.view
        return first_words([*view.posts, *view.queued_posts])

    async def rename(self, title: str) -> str:
        """Name the session, in its store too (a label, not a turn: nothing else is written,
        and a session ended or taken over can be renamed as well); returns its title now.

        Whitespace (newlines too) becomes single spaces; an empty ``title`` gives the
        session its first words back. ``TypeError`` for a title that is not a str,
        ``ValueError`` for one longer than 80 characters; ``StoreError`` if the write
        fails (then the name is unchanged). ``on_change`` callbacks hear of it.
        """
        name = session_title(title)
        if self._store is not None:
            await self._store.set_title(self.session_id, name)
        self._name = name
        self._changes.report()
        return self.title

    @property
    def requests(self) -> int:
        """Model requests made so far."""
        return self._machine.view.requests

    def calls_after(self, requests: int) -> list[CallSnapshot]:
        """The calls its model asked for in the requests after its first ``requests``, ended
        or not: with ``requests`` read just before a post, the calls the turns since started
        (not those of a request already out, nor any another caller submitted)."""
        return [
            call
            for call in self._runtime.list_calls(self.session_id)
            if (request_of(call.turn_id) or 0) > requests
        ]

    def statistics(self) -> SessionStatistics:
        """Model requests made by this session and the tokens they used, prompt-cache reads
        and writes included (from the responses' usage, kept across a restart with a store),
        and their cost at the model's prices."""
        return self._usage.statistics()

    @property
    def calls(self) -> MessageHistory:
        """What this session's history says of each call: the source of ``orphaned``."""
        return self._machine.view.calls

    def post(self, text: str, *, reply_to: int | None = None) -> None:
        """A user message: it grants a turn, and cuts short a wait for background calls.

        A board session takes ``reply_to``, the node the message answers (None: a
        new thread); ``KeyError`` for a node the board does not have. Call it on the
        event loop's thread (``WrongThreadError`` elsewhere: use ``post_threadsafe``).
        """
        self._task.feed(self._user_posted(text, reply_to))

    async def _post_here(self, text: str) -> None:
        """``post``, its turn performed in the calling task (a sub-agent's call runs its
        child's turn itself: the child's task is not woken for it)."""
        await self._task.take_here(self._user_posted(text, None))

    def _user_posted(self, text: str, reply_to: int | None) -> UserPosted:
        """The event of a post, or the error ``post`` raises."""
        self._runtime.check_thread("Session.post_threadsafe")
        if reply_to is not None and type(reply_to) is not int:
            raise TypeError(f"reply_to is a node's id (an int), got {type(reply_to).__name__}")
        if not isinstance(text, str):
            raise TypeError(f"a user message is a str, got {type(text).__name__}")
        if not text.strip():
            raise ValueError("a user message must not be empty")
        view = self._machine.view
        if view.ended or view.stopping:
            state = "failed" if view.status is SessionStatus.FAILED else "stopped"
            raise SessionEndedError(f"session {self.session_id!r} is {state}")
        return UserPosted(text, reply_to, at=time.time())

    def post_threadsafe(self, text: str, *, reply_to: int | None = None) -> None:
        """``post`` for code running in another thread (a UI thread): it runs on the event
        loop's thread, and raises here what ``post`` raises."""
        self._runtime.from_thread(lambda: self.post(text, reply_to=reply_to))

    def on_change(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Call ``callback`` (no arguments) after each event the session takes: a post, a
        model reply, a call's end, a stop. It must be quick and must not call back
        into the session; for a UI that redraws what changed. Returns what stops it."""
        return self._changes.listen(callback)

    def next_messages(self) -> list[Message]:
        """What the model would read if asked now: the board drawn now, or the history
        through the context view (the system prompt and tools aside)."""
        return list(self._machine.next_messages())

    @property
    def board(self) -> Board | None:
        """A board session's message board (None for a transcript session)."""
        return board_of(self._machine)

    @property
    def chat(self) -> list[ChatEntry]:
        """What a person sees of the conversation: every message of a transcript, the board's
        projection of a board."""
        return self._machine.chat()

    @property
    def queued_posts(self) -> list[str]:
        """Messages posted while the model was busy that ``chat`` does not show yet: a
        transcript takes them in at its next turn (a board shows a post at once)."""
        return list(self._machine.view.queued_posts)

    def stop(self, *, cancel_calls: bool = True) -> None:
        """End the session. A model request in flight is cut (a streaming reply's
        connection is closed at once) and the turn ends unanswered.

        Its calls still running are cancelled (reason ``"session stopped"``),
        deferred ones aside; ``cancel_calls=False`` leaves them running in the
        runtime. A turn waiting for calls ends at once, with placeholders for
        the calls left running. On the event loop's thread (elsewhere: ``stop_threadsafe``).
        """
        if self._machine.view.ended:
            return
        self._runtime.check_thread("Session.stop_threadsafe")
        self._task.feed(StopRequested(cancel_calls))
        self._task.stop_request()

    def stop_threadsafe(self, *, cancel_calls: bool = True) -> None:
        """``stop`` for code running in another thread."""
        self._runtime.from_thread(lambda: self.stop(cancel_calls=cancel_calls))

    @property
    def ended(self) -> bool:
        """Stopped, or failed for good (a crash). A failed model request ends nothing: the
        status reads ``failed`` until a post (or a call's outcome) tries again."""
        return self._machine.view.ended

    @property
    def idle(self) -> bool:
        """No turn runs and none is queued: the model has answered all it was given. The
        status says whether anything can still happen (``waiting`` for calls it will hear
        of, ``waiting_external``, ``failed``) or nothing will until someone speaks (``idle``)."""
        view = self._machine.view
        return view.free and not view.stopping and view.at_rest and not self._task.busy

    @property
    def at_rest(self) -> bool:
        """Ended, or idle with nothing queued: no turn would be cut."""
        view = self._machine.view
        return view.ended or (view.at_rest and not self._task.busy)

    @property
    def external_only(self) -> bool:
        """Only an outside completion (``Host.complete``, or its token expiring) can move the
        session now: it waits for deferred calls alone, with nothing queued, nothing being
        performed and no yield timer armed."""
        task = self._task
        return (
            self.status is SessionStatus.WAITING_EXTERNAL and not task.busy and not task.timer_armed
        )

    async def wait_idle(self) -> None:
        """Until the model has answered everything posted and no event is waiting, or only
        an outside completion can move the session (``external_only``).

        Returns at once if that is so already, and once the session is stopped or
        failed. A turn waits for its calls as its strategy says: every call final
        (``yield_when_all_done``, and synchronous mode, one after another), one
        final (``yield_on_any_progress``), or one final or ``milliseconds`` passed
        (``yield_on_timeout``); a deferred call is final once ``Host.complete``
        gives it its outcome. A user message or an overdue call ends the wait
        early; the calls still running then get placeholders and their outcomes a
        later turn, so the session may be busy again (see ``wait_settled``).
        """
        await self._changes.until(self._waits_for_nothing)

    def _waits_for_nothing(self) -> bool:
        """``wait_idle``'s end: a method, not a closure (one object while it waits, not four)."""
        return self.idle or self.external_only or (self.ended and not self._task.busy)

    def outstanding(self) -> list[CallSnapshot]:
        """Calls the model got a placeholder for and whose outcome is not delivered yet
        (and that the runtime still holds: a stopped session's may have been forgotten)."""
        snapshots = []
        for call_id in self._machine.view.outstanding:
            try:
                snapshots.append(self._runtime.status(call_id))
            except UnknownCallError:
                continue
        return snapshots

    async def wait_settled(self, *, include_deferred: bool = False) -> None:
        """Until idle with no outstanding call, or ended: ``wait_idle``, and more.

        Every call the model got a placeholder for has ended and the model has
        heard its outcome and answered (under ``yield_when_all_done`` outcomes
        are told once every outstanding call that can end by itself is final,
        otherwise as each ends). Deferred calls count only with
        ``include_deferred``; without it, a turn that waits for deferred calls
        alone (``external_only``) is settled too.
        """
        while True:
            waiting = [call for call in self.outstanding() if include_deferred or not call.deferred]
            if (self.ended and not self._task.busy) or (self.idle and not waiting):
                return
            if self.external_only and not include_deferred:
                return
            await self._changes.next_change()

    @property
    def replies(self) -> list[str]:
        """The text of every assistant message, in order (a board session's: every agent
        node's, shown to the person or not; ``chat`` is what a person sees)."""
        return self._machine.view.replies

    def _replies_since(self, mark: int) -> tuple[list[str], int]:
        """``replies`` after ``mark`` (0 at first) and the mark to read on from: a
        sub-agent's call follows its child's words reading each message once."""
        return replies_since(self._machine, mark)

    def _last_role(self) -> str | None:
        """The newest message's role, the one message built (None without a history)."""
        view = self._machine.view
        return str(view.history[-1].get("role")) if view.length else None

    async def commit(self) -> None:
        """Write what the store does not have yet, and the status; ``StoreError`` if it fails.

        The write names the session's version: one another host took over is refused.
        """
        await self._task.commit()
