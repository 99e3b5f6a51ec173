"""A session's own task: it performs what its turn machine asks.

The machine (any ``Machine``) decides; ``SessionTask``
feeds it events (the model's answer, a call starting, ending or going
overdue, the yield timer) and performs the actions it returns: ask the
model, submit calls, arm the timer, cancel calls, commit. A model request and
the commit of the history before it run side by side.

Waiting for calls is not a task awaiting: the actions that the end of a call
allows run in that call's own task (``Runtime.hand_off``), so the next request
goes out at once however busy the event loop is. A step in the session's own task (a
post, the yield timer) waits for its turn in the loop's pass (``LoopShare``) when many
sessions are ready at once.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import TaskStatus

from agentos._errors import SessionConflictError
from agentos._errors import StoreError
from agentos._errors import UnknownCallError
from agentos._kernel.loop_share import loop_share
from agentos._kernel.runtime import Runtime
from agentos._model.provider import ModelRequest
from agentos._model.provider import ModelResponse
from agentos._model.provider import PartialReply
from agentos._model.provider import Provider
from agentos._sessions.borrowed_steps import TIMER_ACTIONS
from agentos._sessions.borrowed_steps import BorrowedSteps
from agentos._sessions.changes import SessionChanges
from agentos._sessions.error_record import ErrorRecord
from agentos._sessions.machines import heard_kinds
from agentos._sessions.model_call import ModelCall
from agentos._sessions.spans import SPANNED
from agentos._sessions.spans import SessionSpans
from agentos._sessions.submission import CallSubmitter
from agentos._sessions.submission import turn_of
from agentos._sessions.tool_access import ToolAccess
from agentos._sessions.usage import Usage
from agentos._sessions.writer import SessionWriter
from agentos._turns import events as ev
from agentos._turns.agent_config import AgentConfig
from agentos._turns.machine import Machine
from components import CallEvent
from components import CallEventKind
from components import CallId
from components import CallSnapshot

_CLOSE_GRACE = 5.0
"""Seconds a closing session waits for its last commit."""


class SessionTask(BorrowedSteps):
    """The performing half of a session: its task, the events it feeds the machine and the
    actions it performs. ``Session`` builds one and hands it everything it works on."""

    def __init__(
        self,
        session_id: str,
        config: AgentConfig,
        machine: Machine,
        *,
        runtime: Runtime,
        provider: Provider,
        writer: SessionWriter,
        usage: Usage,
        submitter: CallSubmitter,
        access: ToolAccess,
        errors: list[ErrorRecord],
        changes: SessionChanges,
        spans: SessionSpans | None = None,
    ) -> None:
        """``access``: whose tool definitions each request shows the model (as the
        runtime's tools are then: an MCP server's changed list reaches the next one)."""
        self.session_id = session_id
        self.config = config
        self.errors = errors
        """The session's ``errors``: this task appends what went wrong."""
        self.changed_at = runtime.clock.monotonic()
        """When (the runtime's clock) the status last changed."""
        self._machine = machine
        self._runtime = runtime
        self._writer = writer
        self._submitter = submitter
        self._model = ModelCall(
            config,
            provider,
            usage,
            owner=self,
            spans=spans,
        )
        self._changes = changes
        """Told after every event the machine took, and every step."""
        self._spans = spans
        self._access = access
        self._reported = machine.view.status
        self._todo: list[ev.Action] = []
        """A few actions at most: a list, a tenth of an empty deque's size."""
        self._stepping = False
        """Actions are being performed (in the session's task or, handed off, a call's)."""
        self._deadline = math.inf
        self._step = None
        """Around actions performed in a call's task: the session's end cancels them."""
        self._ended_before: dict[CallId, CallSnapshot] = {}
        """Calls awaited from before a restart whose end only the store kept."""
        self.resumes = False
        """Whether the session took over a stored conversation (``Resumable.restore``):
        then its machine hears that the task began (``Resumed``); a new one has nothing to
        take up."""
        self._arrived: asyncio.Event | None = None
        self._unsubscribe: Sequence[Callable[[], None]] | None = None
        """What stops the session hearing of its calls and the clock (``prepare``); empty
        once the task has ended."""
        self._commit_later = False
        """A ``Commit(wait=False)`` the session's task has yet to perform."""
        self.streaming: PartialReply | None = None
        """The model's reply as it forms (from a provider that streams); None between."""
        self._asking = None

    # ------------------------------------------------------------------ what Session asks

    async def sample(self, request: ModelRequest) -> tuple[str, ModelResponse]:
        """Ask the session's model outside its turns (``ModelCall.sample``)."""
        return await self._model.sample(request)

    @property
    def busy(self) -> bool:
        """Actions are being performed, or queued for a task that will perform them (once
        the session's task has ended, nothing queued ever is)."""
        return self._stepping or (bool(self._todo) and not self._task_ended)

    @property
    def timer_armed(self) -> bool:
        """A yield timer will end the turn's wait by itself."""
        return self._deadline != math.inf

    async def commit(self) -> None:
        """Write what the store does not have yet, and the status; ``StoreError`` if it fails."""
        await self._writer.write(self._machine)

    def disown(self, reason: str) -> None:
        """Another host owns this session now: record why, write nothing more, and stop."""
        if self._writer.store is None:
            return
        self._writer.store = None
        self.record_error("store", reason)
        self.feed(ev.StopRequested(cancel_calls=False))  # from the session's own task

    # ------------------------------------------------------------------ the task

    def prepare(self) -> None:
        """What ``run`` does before its task may be waited for: hear of the session's calls
        and of the clock, and take up the calls awaited from before a resume. A host calls it
        before it starts the task, so opening a session waits for no task to start."""
        if self._unsubscribe is not None:
            return
        runtime, spans = self._runtime, self._spans
        stops = [
            runtime.on_call_events(
                self.session_id, self._on_call_event, kinds=heard_kinds(self._machine)
            ),
            runtime.clock.on_advance(self._wake),
        ]
        if spans is not None:
            stops.append(runtime.on_call_events(self.session_id, spans.call_event, kinds=SPANNED))
        self._unsubscribe = stops
        self._arrived = asyncio.Event()
        if self.resumes:
            for call_id in list(self._machine.view.outstanding):  # awaited from before
                self._settle_if_final(call_id)
            self.feed(ev.Resumed())

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """The session's own task: it performs the actions whenever nobody else does."""
        prepared = self._unsubscribe is not None
        self.prepare()
        task_status.started()
        stops, arrived = self._unsubscribe, self._arrived
        assert stops is not None and arrived is not None
        try:
            if not prepared:  # whoever started us sees the session before it acts
                await anyio.lowlevel.checkpoint()
            share = loop_share()
            while True:
                arrived.clear()
                if self._todo and not self._stepping and share.spent():
                    await share.next_pass()  # a step handed off to a call's task never waits
                await self._advance()
                if self._machine.view.ended and not self._stepping:
                    break
                if self._commit_later:  # while it writes, a call's end is handed off as usual
                    self._commit_later = False
                    await self._persist()
                    continue
                await self._sleep()
        finally:
            for stop in stops:
                stop()
            self._unsubscribe, self._arrived = (), None  # an ended session keeps less
            if self._step is not None:
                self._step.cancel()  # actions running in a call's task end with us
            if self._stepping or self._unwritten():
                with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_GRACE):
                    await self._flush()
            self._machine.handle(ev.Abandoned())
            self._reported_change()
            if self._spans is not None:
                self._spans.close()

    async def _flush(self) -> None:
        """Once no step runs, write what the store does not have yet: a host that closes
        mid-turn loses nothing its session had decided."""
        while self._stepping:
            await self._changes.next_change()
        if self._unwritten():
            await self._persist()

    def _unwritten(self) -> bool:
        """Whether the store lacks some of what the machine holds (never, with no store)."""
        return self._writer.store is not None and self._writer.behind(self._machine)

    def _on_call_event(self, event: CallEvent) -> None:
        """Called by the kernel right after the tick that made the change."""
        if not self._machine.awaits(event.call_id):
            return
        if event.snapshot is not None:
            self.feed(ev.CallSettled(event.snapshot), hand_off=True)
        elif event.kind is CallEventKind.OVERDUE:
            self.feed(ev.CallOverdue(event.call_id, event.overdue), hand_off=True)
        elif event.kind is CallEventKind.STARTED:
            self._machine.handle(ev.CallRunning(event.call_id))  # changes no status, asks nothing

    def ended_before(self, snapshot: CallSnapshot) -> None:
        """A call awaited from before a restart ended before the process did: the store kept
        its end (``snapshot``), the runtime has no such call. The session hears of it as of
        any call's end once it runs."""
        self._ended_before[snapshot.call_id] = snapshot

    def _settle_if_final(self, call_id: CallId) -> None:
        try:
            snapshot = self._runtime.status(call_id)
        except UnknownCallError:
            ended = self._ended_before.pop(call_id, None)
            if ended is None:
                return
            snapshot = ended
        if snapshot.is_final:
            self.feed(ev.CallSettled(snapshot), hand_off=True)

    def feed(self, event: ev.Event, *, hand_off: bool = False, here: bool = False) -> None:
        """Give the machine an event (a post, a stop, news of a call); perform what it asks
        now, or have it performed (in the finishing call's task, with ``hand_off``; by the
        caller, with ``here``). What the machine refuses (``Refused``) is raised to the
        sender."""
        view, todo = self._machine.view, len(self._todo)
        try:
            self._todo.extend(self._machine.handle(event))
        except ev.Refused:
            raise
        except Exception as error:  # one session's bug (its context view's too) ends it only
            self._crashed(error)
        if self._machine.view is not view or len(self._todo) != todo:
            self._reported_change()
        else:  # a call ended and the turn waits on: its callbacks may show the call's end
            self._changes.report(moved=False)
        if self._stepping or not self._todo or here:
            return
        while self._todo and isinstance(self._todo[0], TIMER_ACTIONS):
            self._set_timer(self._todo.pop(0))
        if self._todo and not (hand_off and self._runtime.hand_off(self._advance_handed_off)):
            self._wake()

    async def _sleep(self) -> None:
        """Until an event arrives, or the yield timer is due."""
        assert self._arrived is not None
        clock = self._runtime.clock
        if self._deadline <= clock.monotonic():
            self._deadline = math.inf
            self.feed(ev.TimerFired(clock.monotonic()))
            return
        if self._deadline == math.inf:
            await self._arrived.wait()
            return
        with anyio.move_on_after(clock.sleep_budget(self._deadline)):
            await self._arrived.wait()

    async def _advance(self, only: tuple[type[ev.Action], ...] = ()) -> None:
        """Perform the queued actions (``only``: while the next is one of these; the rest
        wake the session's task); a session performs in one task at a time."""
        if self._stepping:
            return
        self._stepping = True
        try:
            while self._todo and (not only or isinstance(self._todo[0], only)):
                await self._perform(self._todo.pop(0))
        except Exception as error:  # one session's bug ends that session only
            self._crashed(error)
            await self._perform_all_quietly()
        finally:
            self._stepping = False
            self._step = None
            self._reported_change()
            if self._todo or self._machine.view.ended:
                self._wake()

    def _crashed(self, error: Exception) -> None:
        """Record the bug; what is left to do is what the crash asks."""
        self.record_error("session_crashed", f"{type(error).__name__}: {error}")
        self._todo.clear()
        self._todo.extend(self._machine.handle(ev.Crashed(str(error))))

    async def _perform_all_quietly(self) -> None:
        while self._todo:
            action = self._todo.pop(0)
            if isinstance(action, ev.Commit):
                await self._persist()

    async def _perform(self, action: ev.Action) -> None:
        if isinstance(action, ev.Commit):
            if self._writer.store is None:  # nothing to write to: no wake-up to do nothing
                return
            later = self._todo[0] if self._todo else None
            if isinstance(later, ev.SendRequest) or (
                isinstance(later, ev.Commit) and (later.wait or not action.wait)
            ):
                return  # committed alongside the request, or by the next commit
            if action.wait:
                await self._persist()
            else:
                self._commit_later = True
                self._wake()
        elif isinstance(action, ev.SendRequest):
            if action.may_move:  # drafted again if it moved meanwhile
                again = self._machine.handle(ev.Sending())
                action = next((a for a in again if isinstance(a, ev.SendRequest)), action)
            self._asking = action
            try:
                answer = await self._ask(action)
            finally:
                self.streaming = None  # the reply, whole, is told with the machine's step
            self._asking = None
            self.feed(ev.ModelReplied(answer, at=time.time()))
        elif isinstance(action, ev.SubmitCalls):
            # the calls start as the batch ends, once the machine knows them: no driver's tick
            # of their own (a busy runtime's coming tick takes them with other sessions')
            with self._runtime.batch(share_tick=True):
                turn_id = turn_of(self._machine.view.requests)
                self.feed(await self._submitter.submit(action, turn_id=turn_id))
        elif isinstance(action, ev.CancelCalls):
            for call_id in action.call_ids:
                self._runtime.cancel(call_id, action.reason)
            self.feed(ev.CancelsDone())
        else:
            self._set_timer(action)

    def _set_timer(self, action: ev.Action) -> None:
        self._deadline = action.deadline if isinstance(action, ev.ArmTimer) else math.inf
        self._wake()

    # ------------------------------------------------------------------ performing

    async def _ask(self, action: ev.SendRequest) -> list[Any] | None:
        """One model request, the history committed alongside; None if it failed."""
        request = self._model.draft(action, self._tools(), self.session_id)
        stopping = self._machine.view.stopping
        if self._writer.store is None:
            response = await self._model.answer(request, stopping=stopping)
        else:
            async with anyio.create_task_group() as group:
                group.start_soon(self._persist)
                response = await self._model.answer(request, stopping=stopping)
        return None if response is None else response.content

    def _tools(self) -> list[dict[str, Any]]:
        """The agent's tool definitions now (one list its sessions share), then the
        machine's own tools."""
        own = self._machine.own_tools
        defined = self._access.definitions()
        return [*defined, *own] if own else defined

    def stop_request(self) -> None:
        """Cut the model request in flight, if any (its reply would end the turn unheard)."""
        self._model.stop()

    def streamed(self, partial: PartialReply) -> None:
        """The model's reply as it forms (``ModelCall``'s ``Asker``)."""
        self.streaming = partial
        self._reported_change()

    async def _persist(self) -> None:
        """Commit what changed since the last commit, in one transaction."""
        if self._writer.store is None:
            return
        try:
            await self.commit()
        except SessionConflictError as error:
            self.disown(str(error))
        except StoreError as error:  # kept in memory; the next commit tries again
            self.record_error("store", str(error))

    # ------------------------------------------------------------------ plumbing

    def record_error(self, kind: str, message: str) -> None:
        """Append to the session's ``errors`` (also ``ModelCall``'s ``Asker``)."""
        turn = self._machine.view.requests
        self.errors.append(ErrorRecord(kind, message, at=time.time(), turn=turn))

    def _wake(self) -> None:
        if self._arrived is not None:
            self._arrived.set()

    def _reported_change(self) -> None:
        """Tell the runtime and any waiter what changed."""
        view = self._machine.view
        status = view.status
        if self._spans is not None:
            self._spans.turn(not view.free and not view.ended)
        if status is not self._reported:
            self._reported = status
            self.changed_at = self._runtime.clock.monotonic()
            self._runtime.update_session(
                self.session_id,
                status=status,  # a SessionStatus is its text
                requests=view.requests,
                errors=len(self.errors),
            )
        self._changes.report()
