"""One conversation with a model: the event loop that grants it turns.

Events grant turns: a user message, a call finishing (as the yield strategy
allows), a call going overdue. Within a turn the model's tool calls become
runtime entities; capabilities answer at once; the turn waits for calls as
the disposition and the yield strategy say, and a user message cuts the wait
short. Every ``tool_use`` gets exactly one ``tool_result`` in the next request:
a call still running gets a placeholder, and its outcome arrives once, later,
as a new message that names it. A ``tool_use`` id the model repeats within
one answer is renamed (``<id>_2``) before the answer is stored, so each
call keeps its own result.

A turn moves in steps, and waiting for calls is not a task awaiting: the
step that the end of a call allows runs in that call's own task
(``Runtime.hand_off``), so the next request goes out at once however busy
the event loop is.
"""

from __future__ import annotations

import json
import math
from collections import deque
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import anyio
from anyio.abc import TaskStatus

from agentos._agent_config import (
    AgentConfig,
    Decorate,
    Disposition,
    YieldOnAnyProgress,
    YieldOnTimeout,
)
from agentos._context_view import ContextView, ViewInput
from agentos._errors import UnknownCallError
from agentos._history import PLACEHOLDER_KEY, HistoryCall, MessageHistory, blocks_of
from agentos._json import dumps
from agentos._provider import Block, Message, ModelRequest, ModelResponse, Provider, ProviderError
from agentos._runtime import Runtime
from agentos._scope import Caller, Scope
from agentos._snapshot import CallSnapshot
from agentos._store import SessionConflictError, SessionStore, StoreError
from agentos._tokens import ContinuationTokens
from agentos._toolbox import CAPABILITIES, SystemToolbox
from components import CallEvent, CallEventKind, CallId, CallStatus, Json


class SessionStatus(StrEnum):
    IDLE = "idle"
    THINKING = "thinking"
    """Waiting for the model."""
    WAITING = "waiting"
    """Waiting for tool calls, as the disposition and yield strategy say."""
    STOPPED = "stopped"


@dataclass(frozen=True, slots=True)
class _UserMessage:
    text: str


@dataclass(frozen=True, slots=True)
class _CallFinished:
    call_id: CallId


@dataclass(frozen=True, slots=True)
class _CallOverdue:
    call_id: CallId


_Event = _UserMessage | _CallFinished | _CallOverdue
_FINAL_EVENTS = frozenset(
    {
        CallEventKind.COMPLETED,
        CallEventKind.FAILED,
        CallEventKind.CANCELLED,
        CallEventKind.TIMED_OUT,
    }
)


@dataclass(slots=True)
class _Wait:
    """A turn suspended at the model's tool calls until they (or the user) let it go on."""

    uses: list[Block]
    results: dict[str, Block]
    """Answers known at once (capabilities, cache hits, refusals, deferred placeholders)."""
    sync: dict[CallId, str]
    """``run_sync`` calls -> tool_use id: the turn waits for all of them."""
    background: dict[CallId, str]
    """``run_async`` calls -> tool_use id: the turn waits as the yield strategy says."""
    deadline: float = math.inf
    """``yield_on_timeout``: when (the runtime's clock) the background calls stop holding it."""


class Session:
    """A conversation: its history, its calls, and the loop that runs its turns.

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
    ) -> None:
        """``version``: the stored version this session owns (from its lease); every
        commit expects it, so none replaces another host's writes."""
        self.session_id = session_id
        self.config = config
        self.history: list[Message] = []
        self.errors: list[str] = []
        self.requests = 0
        self.status = SessionStatus.IDLE
        self.changed_at = runtime.clock.monotonic()
        """When (the runtime's clock) the status last changed: how long it has been idle."""
        self.calls = MessageHistory()
        """What this session's history says of each call: the source of ``orphaned``."""
        self._runtime = runtime
        self._provider = provider
        self._toolbox = toolbox
        self._view = view
        self._tokens = tokens
        self._caller = Caller(session_id, conversation_id=session_id, scope=scope)
        self._events: deque[_Event] = deque()
        self._wait: _Wait | None = None
        self._stepping = False
        """A step runs (in the session's task or, handed off, in a finishing call's)."""
        self._stopping = False
        self._steps_left = 0
        self._step_scope: anyio.CancelScope | None = None
        self._arrived: anyio.Event | None = None
        self._outstanding: dict[CallId, str] = {}
        self._final: dict[CallId, CallSnapshot] = {}
        """Final snapshots of calls the session still has to tell the model about, taken
        when they end: retention may forget a call before a slow turn reads it."""
        """Calls answered by a placeholder whose outcome is not delivered yet -> tool_use id."""
        self._held: list[CallId] = []
        self._shapes: dict[CallId, _Shape] = {}
        self._lost: list[tuple[str, str]] = []
        self._store = store
        self._version = version
        self._dirty_from = 0
        """History from this index on is not in the store yet."""
        self._cache: dict[tuple[str, str], Json] = {}
        """Results of ``cache``-decorated calls, by tool and input (this session only)."""
        self._changed: anyio.Event | None = None
        self._tools = self._tool_definitions()

    # ------------------------------------------------------------------ the API

    def post(self, text: str) -> None:
        """A user message: it grants a turn, and cuts short a wait for calls."""
        if not isinstance(text, str):
            raise TypeError(f"a user message is a str, got {type(text).__name__}")
        if not text.strip():
            raise ValueError("a user message must not be empty")
        if self._stopping or self.status is SessionStatus.STOPPED:
            raise RuntimeError(f"session {self.session_id!r} is stopped")
        self._enqueue(_UserMessage(text))
        self._wake()

    def restore(self, history: list[Message]) -> list[tuple[str, str]]:
        """Take over an earlier conversation (before the loop starts).

        A ``tool_use`` left without a result gets one saying the call was lost.
        Returns the calls that were still waiting (placeholder, no outcome
        delivered) as ``(tool_use_id, tool_name)``: the host re-creates the
        deferred ones and calls ``lost`` for the rest.
        """
        self.history = repair_history(history)
        self._dirty_from = len(history) if self.history == history else 0
        self.calls.load(self.session_id, self.history)
        return waiting_calls(self.history)

    def lost(self, tool_use_id: str, tool_name: str) -> None:
        """The model will be told, before its next request, that this call did not survive."""
        self._lost.append((tool_use_id, tool_name))

    def await_outcome(self, call_id: CallId, tool_use_id: str) -> None:
        """Deliver this call's outcome later, as for any call that got a placeholder."""
        self._outstanding[call_id] = tool_use_id

    def _lost_notices(self) -> list[Block]:
        notices: list[Block] = [
            {
                "type": "text",
                "text": f"[tool call {tool_use_id} ({name}) finished: orphaned] error: lost in "
                "a restart; call it again if it is still needed",
            }
            for tool_use_id, name in self._lost
        ]
        self._lost.clear()
        return notices

    def disown(self, reason: str) -> None:
        """Another host owns this session now: record why, write nothing more, and stop."""
        if self._store is None:
            return
        self._store = None
        self.errors.append(f"store: {reason}")
        self.stop()

    def stop(self) -> None:
        """End the session once the model request in flight (if any) is answered.

        A turn waiting for calls ends at once, with placeholders for the calls
        still running; they go on in the runtime.
        """
        if not self._stopping and self.status is not SessionStatus.STOPPED:
            self._stopping = True
            self._wake()
            self._notify_change()

    @property
    def idle(self) -> bool:
        return self.status is SessionStatus.IDLE and not (
            self._events or self._stepping or self._stopping
        )

    @property
    def at_rest(self) -> bool:
        """Stopped, or idle (perhaps stopping) with nothing posted: no turn would be cut."""
        if self.status is SessionStatus.STOPPED:
            return True
        return self.status is SessionStatus.IDLE and not (self._events or self._stepping)

    async def wait_idle(self) -> None:
        """Until the model has answered everything posted and no event is waiting."""
        while not (self.idle or self.status is SessionStatus.STOPPED):
            await self._next_change()

    def outstanding(self) -> list[CallSnapshot]:
        """Calls the model got a placeholder for and whose outcome is not delivered yet
        (and that the runtime still holds: a stopped session's may have been forgotten)."""
        snapshots = []
        for call_id in self._outstanding:
            try:
                snapshots.append(self._runtime.status(call_id))
            except UnknownCallError:
                continue
        return snapshots

    async def wait_settled(self, *, include_deferred: bool = False) -> None:
        """Until idle with no outstanding call (deferred ones count only if asked)."""
        while True:
            waiting = [call for call in self.outstanding() if include_deferred or not call.deferred]
            if self.status is SessionStatus.STOPPED or (self.idle and not waiting):
                return
            await self._next_change()

    async def _next_change(self) -> None:
        if self._changed is None:
            self._changed = anyio.Event()
        await self._changed.wait()

    @property
    def replies(self) -> list[str]:
        """The text of every assistant message, in order."""
        return [
            "".join(b.get("text", "") for b in m["content"] if b.get("type") == "text")
            for m in self.history
            if m["role"] == "assistant"
        ]

    # ------------------------------------------------------------------ the loop

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """The session's own task: it advances the session whenever nobody else does."""
        unsubscribe = self._runtime.on_call_events(self.session_id, self._on_call_event)
        forget_clock = self._runtime.clock.on_advance(self._wake)
        for call in self.outstanding():  # awaited from before a resume, and over since
            if call.is_final:
                self._enqueue(_CallFinished(call.call_id))
        task_status.started()
        try:
            while True:
                self._arrived = anyio.Event()
                await self._advance()
                if self._stopping and not self._stepping:
                    break
                await self._sleep()
        finally:
            unsubscribe()
            forget_clock()
            if self._step_scope is not None:
                self._step_scope.cancel()  # a step running in a call's task ends with us
            self._events.clear()
            self._set_status(SessionStatus.STOPPED)

    def _on_call_event(self, event: CallEvent) -> None:
        """Called by the kernel right after the tick that made the change."""
        if event.kind in _FINAL_EVENTS:
            if self._awaits(event.call_id):
                self._final[event.call_id] = self._runtime.status(event.call_id)
            self._enqueue(_CallFinished(event.call_id))
        elif event.kind is CallEventKind.OVERDUE:
            self._enqueue(_CallOverdue(event.call_id))
        else:
            return
        if self._stepping:
            return  # the running step looks at the queue before it ends
        if self._wait is not None and not self._wait_over(self._wait):
            return  # the turn still waits for other calls
        if not self._runtime.hand_off(self._advance):
            self._wake()

    async def _sleep(self) -> None:
        """Until an event arrives, or the suspended turn's yield deadline passes."""
        assert self._arrived is not None
        clock = self._runtime.clock
        budget = None
        if self._wait is not None and self._wait.deadline > clock.monotonic():
            budget = clock.sleep_budget(self._wait.deadline)  # else run_sync calls hold it
        with anyio.move_on_after(math.inf if budget is None else budget):
            await self._arrived.wait()

    async def _advance(self) -> None:
        """Take steps while the events allow; a session moves in one task at a time.

        Run by the session's own task, or (through ``Runtime.hand_off``) by the
        task of the call whose end lets the turn go on: the next request then
        goes out without queueing behind the rest of the event loop.
        """
        if self._stepping or self.status is SessionStatus.STOPPED:
            return
        self._stepping = True
        try:
            with anyio.CancelScope() as self._step_scope:
                while (blocks := self._next_step()) is not None:
                    await self._step(blocks)
        except Exception as error:  # one session's bug ends that session only
            self.errors.append(f"session_crashed: {type(error).__name__}: {error}")
            self._stopping = True
        finally:
            self._stepping = False
            self._step_scope = None
            if self._stopping:
                self._wake()
            self._notify_change()

    def _next_step(self) -> list[Block] | None:
        """The user-turn content to go on with: a suspended turn's, a new turn's, or none."""
        wait = self._wait
        if wait is not None:
            if not self._wait_over(wait):
                return None
            self._wait = None
            return self._wait_results(wait)
        if self._stopping or not self._events:
            return None
        batch = list(self._events)
        self._events.clear()
        blocks = self._blocks_for(batch)
        if not blocks:
            return None
        self._steps_left = self.config.max_steps_per_turn
        return self._lost_notices() + blocks

    def _blocks_for(self, batch: list[_Event]) -> list[Block]:
        """The user-turn content a batch of events adds (empty: it grants no turn)."""
        blocks: list[Block] = [
            {"type": "text", "text": event.text}
            for event in batch
            if isinstance(event, _UserMessage)
        ]
        for event in batch:
            if isinstance(event, _CallFinished) and event.call_id in self._outstanding:
                self._held.append(event.call_id)
            elif isinstance(event, _CallOverdue) and event.call_id in self._outstanding:
                blocks.append(self._overdue_block(event.call_id))
        if self._held and (blocks or self._may_deliver()):
            for call_id in self._held:
                block = self._outcome_block(call_id)
                if block is not None:
                    blocks.append(block)
            self._held.clear()
        return blocks

    def _may_deliver(self) -> bool:
        """Whether finished calls grant a turn now, as the yield strategy says."""
        if isinstance(self.config.async_yield_strategy, YieldOnAnyProgress | YieldOnTimeout):
            return True
        return all(self._status(c).is_final for c in self._outstanding)

    # ------------------------------------------------------------------ a turn

    async def _step(self, blocks: list[Block]) -> None:
        """Extend the user turn, then ask the model until the turn ends or waits for calls."""
        self._append_user(blocks)
        while self._steps_left > 0 and not self._stopping:
            self._steps_left -= 1
            self._set_status(SessionStatus.THINKING)
            response = await self._ask()
            if response is None or not response.content:
                break
            content = unique_tool_use_ids(response.content)
            self.history.append({"role": "assistant", "content": content})
            self._dirty_from = min(self._dirty_from, len(self.history) - 1)
            uses = [block for block in content if block.get("type") == "tool_use"]
            if not uses:
                break  # a tool_use is stored only together with its tool_result
            if self._stopping:
                self._append_user(
                    [
                        _tool_result(u["id"], "not run: the session stopped", error=True)
                        for u in uses
                    ]
                )
                break
            wait = await self._submit(uses)
            if not self._wait_over(wait):
                self._wait = wait
                if wait.deadline < math.inf:
                    self._wake()  # the session's task sleeps until the deadline, wherever we run
                self._set_status(SessionStatus.WAITING)
                return
            self._append_user(self._wait_results(wait))
        self.status = SessionStatus.IDLE
        await self._persist()  # committed before anyone is told the turn is over
        self._set_status(SessionStatus.IDLE)

    async def _ask(self) -> ModelResponse | None:
        """One model request; a failure is recorded and ends the turn (None).

        The history so far is committed alongside the request rather than
        before it, so the request goes out at once; the answer is taken only
        once the commit is done.
        """
        request = ModelRequest(
            model=self.config.model,
            system=self.config.system_prompt,
            messages=self._view.build(ViewInput(self.session_id, self.history, self._calls)),
            tools=self._tools,
            max_tokens=self.config.max_tokens,
            session_id=self.session_id,
        )
        self.requests += 1
        if self._store is None:
            return await self._request(request)
        async with anyio.create_task_group() as group:
            group.start_soon(self._persist)
            response = await self._request(request)
        return response

    async def _request(self, request: ModelRequest) -> ModelResponse | None:
        try:
            with anyio.fail_after(self.config.request_timeout):
                return await self._provider.complete(request)
        except TimeoutError:
            self.errors.append(
                f"timeout: no answer from the model in {self.config.request_timeout:g}s"
            )
        except ProviderError as error:
            self.errors.append(f"{error.kind}: {error.message}")
        except Exception as error:  # a provider's bug must not end the session
            self.errors.append(f"provider_bug: {type(error).__name__}: {error}")
        return None

    def _append_user(self, blocks: list[Block]) -> None:
        """Add to the pending user turn: a partial turn is extended, never stacked."""
        if self.history and self.history[-1]["role"] == "user":
            content = self.history[-1]["content"]
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            self.history[-1] = {"role": "user", "content": [*content, *blocks]}
        else:
            self.history.append({"role": "user", "content": blocks})
        self._dirty_from = min(self._dirty_from, len(self.history) - 1)

    async def _persist(self) -> None:
        """Commit what changed since the last commit, in one transaction."""
        if self._store is None or self._dirty_from > len(self.history):
            return
        try:
            await self.commit()
        except SessionConflictError as error:
            self.disown(str(error))
        except StoreError as error:  # kept in memory; the next commit tries again
            self.errors.append(f"store: {error}")

    async def commit(self) -> None:
        """Write what the store does not have yet, and the status; ``StoreError`` if it fails.

        The write names the session's version: one another host took over is refused.
        """
        if self._store is None:
            return
        keep = min(self._dirty_from, len(self.history))
        await self._store.commit_turn(
            self.session_id,
            status=self.status.value,
            keep=keep,
            messages=self.history[keep:],
            version=self._version,
        )
        self._dirty_from = len(self.history)
        if self._version is not None:
            self._version += 1

    async def _submit(self, uses: list[Block]) -> _Wait:
        """Answer what can be answered now and hand the rest to the runtime."""
        results: dict[str, Block] = {}
        waits: dict[CallId, str] = {}
        background: dict[CallId, str] = {}
        for use in uses:
            tool_use_id, name, arguments = use["id"], use["name"], use.get("input", {})
            if name in self.config.capabilities and name in CAPABILITIES:
                results[tool_use_id] = await self._capability(tool_use_id, name, arguments)
                continue
            if self.config.tools is not None and name not in self.config.tools:
                results[tool_use_id] = _tool_result(
                    tool_use_id, f"tool {name!r} is not available to this agent", error=True
                )
                continue
            disposition = self.config.disposition(name)
            shape = _Shape.of(self.config.decorators(name), name, arguments)
            if shape.cache_key is not None and shape.cache_key in self._cache:
                cached = self._cache[shape.cache_key]
                self.calls.record(
                    self.session_id,
                    HistoryCall(tool_use_id, name, None, CallStatus.COMPLETED, cached),
                )
                results[tool_use_id] = _tool_result(tool_use_id, shape.render(cached))
                continue
            options: dict[str, Any] = {}
            timeout = shape.timeout or self.config.call_timeout
            if timeout is not None:
                options["timeout"] = timeout
            if disposition is Disposition.RUN_ISOLATED:
                options["runner"] = self.config.isolated_runner
            if self.config.call_overdue_after is not None:
                options["overdue_after"] = self.config.call_overdue_after
            call_id = self._runtime.submit(
                name,
                _as_tool_input(arguments),
                session_id=self.session_id,
                provider_call_id=tool_use_id,
                conversation_id=self.session_id,
                turn_id=f"request-{self.requests}",
                deferred=disposition is Disposition.DEFER,
                retries=shape.retries,
                label=shape.label,
                **options,
            )
            if shape.cache_key is not None or shape.truncate is not None:
                self._shapes[call_id] = shape
            self.calls.record(self.session_id, HistoryCall(tool_use_id, name, call_id))
            if disposition is Disposition.DEFER:
                token = await self._tokens.issue(
                    self.session_id,
                    call_id,
                    provider_call_id=tool_use_id,
                    tool_name=name,
                    tool_input=self._runtime.status(call_id).tool_input,
                )
                results[tool_use_id] = self._placeholder(tool_use_id, call_id, token)
                self._outstanding[call_id] = tool_use_id
            elif disposition is Disposition.RUN_SYNC:
                waits[call_id] = tool_use_id
            else:
                background[call_id] = tool_use_id
        wait = _Wait(uses, results, waits, background)
        strategy = self.config.async_yield_strategy
        if background and isinstance(strategy, YieldOnTimeout):
            wait.deadline = self._runtime.clock.monotonic() + strategy.milliseconds / 1000
        return wait

    def _wait_over(self, wait: _Wait) -> bool:
        """Whether the calls (or a user message, or the clock) let the turn go on.

        A call is final once its final event is queued here (the kernel calls
        the listener right after the tick that ended it), so the queue says
        which waited calls are done without asking the runtime.
        """
        if self._stopping:
            return True
        finished = {event.call_id for event in self._events if isinstance(event, _CallFinished)}
        if not all(call_id in finished for call_id in wait.sync):
            return False
        if not wait.background:
            return True
        if any(isinstance(event, _UserMessage) for event in self._events):
            return True  # a user message ends the wait at once
        done = sum(1 for call_id in wait.background if call_id in finished)
        if done == len(wait.background):
            return True
        if done and isinstance(
            self.config.async_yield_strategy, YieldOnAnyProgress | YieldOnTimeout
        ):
            return True  # yield_on_timeout: at the first of a call ending and the timer
        return self._runtime.clock.monotonic() >= wait.deadline

    def _wait_results(self, wait: _Wait) -> list[Block]:
        """One result per ``tool_use`` (a placeholder if still running), then the
        user messages that cut the wait short."""
        results = dict(wait.results)
        for call_id, tool_use_id in (wait.sync | wait.background).items():
            snapshot = self._status(call_id)
            self._final.pop(call_id, None)
            if snapshot.is_final:
                results[tool_use_id] = self._result_block(tool_use_id, snapshot)
            else:
                results[tool_use_id] = self._placeholder(tool_use_id, call_id)
                self._outstanding[call_id] = tool_use_id
        blocks = [results[use["id"]] for use in wait.uses]
        kept: deque[_Event] = deque()
        for event in self._events:
            if isinstance(event, _UserMessage) and wait.background:
                blocks.append({"type": "text", "text": event.text})
            elif not (
                isinstance(event, _CallFinished)
                and (event.call_id in wait.sync or event.call_id in wait.background)
                and event.call_id not in self._outstanding
            ):
                kept.append(event)
        self._events = kept
        return blocks

    async def _capability(self, tool_use_id: str, name: str, arguments: object) -> Block:
        result = await self._toolbox.invoke(name, arguments, self._caller)
        content = result.content
        read = content.get("tool_call_id")
        final = name == "get_tool_call_status" and content.get("is_final") is True
        stopped = name == "cancel_tool_call" and content.get("cancelled") is True
        if (final or stopped) and isinstance(read, str) and CallId(read) in self._outstanding:
            self._record_outcome(CallId(read))  # the model knows: no late outcome
        return _tool_result(tool_use_id, result.to_json(), error=result.is_error)

    # ------------------------------------------------------------------ rendering

    def _result_block(self, tool_use_id: str, snapshot: CallSnapshot) -> Block:
        self.calls.record(self.session_id, _history_call(snapshot, tool_use_id))
        shape = self._shape_after(snapshot)
        if snapshot.status is CallStatus.COMPLETED:
            return _tool_result(tool_use_id, shape.render(snapshot.result))
        return _tool_result(tool_use_id, _failure_text(snapshot), error=True)

    def _shape_after(self, snapshot: CallSnapshot) -> _Shape:
        """The call's decorators; a completed cacheable result is remembered here."""
        shape = self._shapes.pop(snapshot.call_id, _NO_SHAPE)
        if shape.cache_key is not None and snapshot.status is CallStatus.COMPLETED:
            self._cache[shape.cache_key] = snapshot.result
        return shape

    def _placeholder(self, tool_use_id: str, call_id: CallId, token: str | None = None) -> Block:
        note: dict[str, Any] = {
            PLACEHOLDER_KEY: True,
            "tool_call_id": call_id,
            "status": self._status(call_id).status.value,
            "note": (
                "Still running; its outcome will arrive later as a message that names this "
                f"call. get_tool_call_status(tool_call_id={call_id!r}) shows its progress; "
                "cancel_tool_call stops it."
            ),
        }
        if token is not None:
            note["continuation_token"] = token
            note["note"] = "Deferred: it completes from outside, with this continuation token."
        return _tool_result(tool_use_id, json.dumps(note))

    def _outcome_block(self, call_id: CallId) -> Block | None:
        """The late outcome of a call that got a placeholder, delivered once."""
        tool_use_id = self._outstanding.get(call_id)
        if tool_use_id is None:
            return None  # already read through get_tool_call_status
        snapshot = self._record_outcome(call_id)
        shape = self._shape_after(snapshot)
        if snapshot.status is CallStatus.COMPLETED:
            outcome = "result: " + shape.render(snapshot.result)
        else:
            outcome = "error: " + _failure_text(snapshot)
        return {"type": "text", "text": outcome_text(tool_use_id, snapshot, outcome)}

    def _overdue_block(self, call_id: CallId) -> Block:
        tool_use_id = self._outstanding[call_id]
        return {
            "type": "text",
            "text": f"[tool call {tool_use_id} is overdue: it is still running. Wait, "
            "look with get_tool_call_status, or cancel it with cancel_tool_call.]",
        }

    def _record_outcome(self, call_id: CallId) -> CallSnapshot:
        snapshot = self._status(call_id)
        tool_use_id = self._outstanding.pop(call_id)
        self._final.pop(call_id, None)
        self.calls.record(self.session_id, _history_call(snapshot, tool_use_id))
        return snapshot

    # ------------------------------------------------------------------ plumbing

    def _calls(self) -> list[CallSnapshot]:
        return self._runtime.list_calls(self.session_id)

    def _status(self, call_id: CallId) -> CallSnapshot:
        try:
            return self._runtime.status(call_id)
        except UnknownCallError:
            snapshot = self._final.get(call_id)
            if snapshot is None:
                raise
            return snapshot

    def _awaits(self, call_id: CallId) -> bool:
        """Whether the model is still to hear how the call ended."""
        wait = self._wait
        return call_id in self._outstanding or (
            wait is not None and (call_id in wait.sync or call_id in wait.background)
        )

    def _tool_definitions(self) -> list[dict[str, Any]]:
        tools = self._runtime.tools
        names = sorted(tools) if self.config.tools is None else self.config.tools
        definitions = [
            {
                "name": tools[name].name,
                "description": tools[name].description,
                "input_schema": tools[name].input_schema,
            }
            for name in names
            if name in tools
        ]
        chosen = [name for name in self.config.capabilities if name in CAPABILITIES]
        return definitions + SystemToolbox.definitions(chosen)

    def _enqueue(self, event: _Event) -> None:
        if self.status is not SessionStatus.STOPPED:
            self._events.append(event)
            self._notify_change()

    def _wake(self) -> None:
        if self._arrived is not None:
            self._arrived.set()

    def _set_status(self, status: SessionStatus) -> None:
        self.status = status
        self.changed_at = self._runtime.clock.monotonic()
        self._runtime.update_session(
            self.session_id, status=status.value, requests=self.requests, errors=len(self.errors)
        )
        self._notify_change()

    def _notify_change(self) -> None:
        if self._changed is not None:  # only made when someone waits
            self._changed.set()
            self._changed = None


@dataclass(frozen=True, slots=True)
class _Shape:
    """What a ``decorate`` rule asks of one call."""

    timeout: float | None = None
    retries: int = 0
    label: str | None = None
    truncate: int | None = None
    cache_key: tuple[str, str] | None = None

    @staticmethod
    def of(decorate: Decorate | None, tool_name: str, arguments: object) -> _Shape:
        if decorate is None:
            return _NO_SHAPE
        cache_key = None
        if decorate.option("cache"):
            cache_key = (tool_name, json.dumps(arguments, sort_keys=True, default=str))
        return _Shape(
            timeout=decorate.option("timeout"),
            retries=decorate.option("retries") or 0,
            label=decorate.option("label"),
            truncate=decorate.option("truncate"),
            cache_key=cache_key,
        )

    def render(self, value: Json) -> str:
        text = value if isinstance(value, str) else dumps(value)
        if self.truncate is not None and len(text) > self.truncate:
            cut = len(text) - self.truncate
            return f"{text[: self.truncate]}... [truncated {cut} characters]"
        return text


_NO_SHAPE = _Shape()


def repair_history(history: list[Message]) -> list[Message]:
    """A copy in which every ``tool_use`` has a ``tool_result`` in the next user message.

    A restored history may end (or break off) after the model's tool calls;
    each unanswered one gets a result saying it was lost in a restart.
    """
    repaired = [dict(message) for message in history]
    index = 0
    while index < len(repaired):
        message = repaired[index]
        uses = [b["id"] for b in blocks_of(message) if b.get("type") == "tool_use"]
        if message.get("role") == "assistant" and uses:
            following = repaired[index + 1] if index + 1 < len(repaired) else None
            if following is None or following.get("role") != "user":
                following = {"role": "user", "content": []}
                repaired.insert(index + 1, following)
            blocks = blocks_of(following)
            answered = {b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"}
            lost = [
                _tool_result(use, "lost in a restart: the call no longer exists", error=True)
                for use in uses
                if use not in answered
            ]
            following["content"] = [*lost, *blocks]
        index += 1
    return repaired


def unique_tool_use_ids(content: list[Block]) -> list[Block]:
    """The model's answer with every ``tool_use`` id unique: a repeat becomes ``<id>_<n>``.

    A model may (wrongly) give two calls in one answer the same id. Each call
    must keep its own result, and the Messages API refuses duplicate ids, so
    the repeat is renamed before the answer is stored: history, results,
    capabilities and late outcomes then all name it by its new id.
    """
    ids = [block.get("id") for block in content if block.get("type") == "tool_use"]
    if len(set(ids)) == len(ids):
        return content
    taken = set(ids)
    seen: set[object] = set()
    unique: list[Block] = []
    for block in content:
        if block.get("type") == "tool_use":
            tool_use_id = block.get("id")
            if tool_use_id in seen:
                suffix = 2
                while f"{tool_use_id}_{suffix}" in taken:
                    suffix += 1
                block = {**block, "id": f"{tool_use_id}_{suffix}"}
                taken.add(block["id"])
            seen.add(block["id"])
        unique.append(block)
    return unique


def waiting_calls(history: list[Message]) -> list[tuple[str, str]]:
    """Calls answered by a placeholder whose end the history never told the model."""
    index = MessageHistory()
    index.load("", history)
    return [(call.call_id, call.tool_name) for call in index.calls("") if not call.has_result]


def _tool_result(tool_use_id: str, content: str, *, error: bool = False) -> Block:
    block: Block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if error:
        block["is_error"] = True
    return block


def _failure_text(snapshot: CallSnapshot) -> str:
    if snapshot.error is None:
        return snapshot.status.value
    return f"{snapshot.status.value} ({snapshot.error.kind.value}): {snapshot.error.message}"


def _history_call(snapshot: CallSnapshot, tool_use_id: str) -> HistoryCall:
    result = snapshot.result if snapshot.status is CallStatus.COMPLETED else _failure_text(snapshot)
    return HistoryCall(tool_use_id, snapshot.tool_name, snapshot.call_id, snapshot.status, result)


def outcome_text(tool_use_id: str, snapshot: CallSnapshot, outcome: str) -> str:
    """``[tool call ID (tool) finished: STATUS] result: ...`` (read back by MessageHistory)."""
    status = snapshot.status.value
    return f"[tool call {tool_use_id} ({snapshot.tool_name}) finished: {status}] {outcome}"


def _as_tool_input(arguments: object) -> dict[str, Any] | str:
    """What the model sent as a call's input, for the runtime to check: an object passes,
    anything else fails the call saying the arguments must be a JSON object."""
    if isinstance(arguments, dict | str):
        return arguments
    try:
        return json.dumps(arguments)
    except (TypeError, ValueError):
        return repr(arguments)
