"""A session's turns as a pure state machine: events in, actions out, no I/O.

Like h11's ``Connection`` (and the runtime's tick), ``TurnMachine.handle``
changes state synchronously and returns what the async shell (``Session``)
must do: send a request, submit calls, arm or disarm the yield timer, cancel
calls, commit. Time and call snapshots come in with the events; nothing here
awaits or reads a clock. The table of moves is ``TURN_TRANSITIONS``.

Every ``tool_use`` gets exactly one ``tool_result``, in the next user
message and in its position. A call the turn stops waiting for gets a
placeholder, and its outcome is told once, later, as a message naming it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import cast

from agentos._errors import UsageError
from agentos._model.messages import (
    Block,
    Message,
    ToolResultBlock,
    UserBlock,
    blocks_of,
    text_block,
    text_of,
    tool_result,
)
from agentos._turns.agent_config import AgentConfig, Disposition, YieldOnAnyProgress, YieldOnTimeout
from agentos._turns.call_ledger import Batch, CallLedger
from agentos._turns.call_options import NO_FACTS, ToolFacts
from agentos._turns.chat import ChatEntry
from agentos._turns.events import (
    WAITING,
    Action,
    ArmTimer,
    CallOverdue,
    CallRunning,
    CallSettled,
    CallsSubmitted,
    CancelCalls,
    CancelsDone,
    Commit,
    Crashed,
    DisarmTimer,
    Event,
    ModelReplied,
    SendRequest,
    SessionStatus,
    StopRequested,
    TimerFired,
    UserPosted,
)
from agentos._turns.history import MessageHistory, waiting_calls
from agentos._turns.machine import MachineBase
from agentos._turns.planning import plan
from agentos._turns.result_cache import ResultCache
from agentos._turns.transcript import (
    NOT_RUN,
    lost_notice,
    overdue_text,
    repair_history,
    unique_tool_use_ids,
)
from agentos._turns.transcript_chat import transcript_chat
from components import CallId, CallSnapshot, JsonObject

_NONE_EDITED = 2**62
"""``_edited_from`` when nothing was changed: above any index."""


class TurnMachine(MachineBase):
    """The state of one conversation's turns, moved only by ``handle``."""

    def __init__(
        self,
        session_id: str,
        config: AgentConfig,
        may_call: Callable[[str], bool] | None = None,
        *,
        cache: ResultCache | None = None,
        facts: ToolFacts = NO_FACTS,
    ) -> None:
        """``cache``: where the cache decorator keeps results (shared with the other
        sessions of a host; None: this session's own)."""
        super().__init__(session_id, config, may_call, facts=facts)
        self.history: list[Message] = []
        self.dirty_from = 0
        """History from this index on is not in the store yet."""
        self._edited_from = _NONE_EDITED
        """The lowest message changed since a commit in flight took its copy."""
        self.ledger = CallLedger(session_id, cache)
        self._queue: deque[UserPosted | CallSettled | CallOverdue] = deque()
        self._batch: Batch | None = None
        self._lost: list[tuple[str, str]] = []
        self._steps_left = 0
        self._cancelling = False
        """Stopping, and the shell has not yet cancelled the calls it was asked to."""

    # ------------------------------------------------------------------ queries

    @property
    def calls(self) -> MessageHistory:
        """What the history says of each call: the source of ``orphaned``."""
        return self.ledger.history

    @property
    def outstanding(self) -> dict[CallId, str]:
        """Calls answered by a placeholder whose outcome is not told yet -> tool_use id."""
        return self.ledger.outstanding

    @property
    def at_rest(self) -> bool:
        """Ended, or idle with nothing queued that would grant a turn."""
        return self.ended or (self.free and not self._grants_turn())

    @property
    def queued_posts(self) -> list[str]:
        """User messages posted while the model was busy: the next turn takes them in."""
        return [event.text for event in self._queue if isinstance(event, UserPosted)]

    @property
    def replies(self) -> list[str]:
        """The text of every assistant message, in order."""
        return [text_of(m["content"]) for m in self.history if m["role"] == "assistant"]

    def chat(self, calls: Callable[[], Sequence[CallSnapshot]]) -> list[ChatEntry]:
        """What a person sees: every message, with its calls (see ``transcript_chat``)."""
        return transcript_chat(self.history, calls(), self.calls, self.session_id)

    def check_reply(self, reply_to: int | None) -> None:
        """A transcript has no nodes to reply under."""
        if reply_to is not None:
            raise UsageError("reply_to is for board sessions (context_view='board')")

    def awaits(self, call_id: CallId) -> bool:
        """Whether the model is still to hear how this call ended (or may be: a batch
        whose calls are being submitted takes every call's news until it knows its own)."""
        batch = self._batch
        return call_id in self.outstanding or (
            batch is not None and (call_id in batch.waits or not batch.submitted)
        )

    def timer(self) -> float | None:
        """The yield deadline armed now, if any."""
        batch = self._batch
        if batch is None or batch.timer_fired or self.status not in WAITING:
            return None
        return batch.deadline

    # ------------------------------------------------------------------ setup

    def restore(
        self,
        history: list[Message],
        held: Mapping[str, ToolResultBlock],
        board: JsonObject | None = None,
        *,
        asked: bool = False,
    ) -> list[tuple[str, str]]:
        """Take over an earlier conversation, repaired (``repair_history``: a ``tool_use``
        left without a result gets ``held``'s placeholder, or a lost-call result). Returns the
        calls still waiting (a placeholder, no outcome told) as ``(tool_use_id, tool_name)``.
        ``asked``: stored mid-turn; a history that ends with the user's turn, none of whose
        calls still waits, is the model's to answer (``Resumed`` asks it)."""
        self.history = repair_history(history, held)
        self.dirty_from = len(history) if self.history == history else 0  # repaired: rewrite
        self.ledger.history.load(self.session_id, self.history)
        waiting = waiting_calls(self.history)
        last = self.history[-1] if self.history else None
        if asked and last is not None and last["role"] == "user":
            answers = {b.get("tool_use_id") for b in blocks_of(last)}
            self._ask_again = not any(tool_use_id in answers for tool_use_id, _ in waiting)
        return waiting

    def runtime_id_of(self, tool_use_id: str) -> CallId | None:
        """The runtime's id for a call of the history (placeholders name it)."""
        known = self.ledger.history.find_call(self.session_id, tool_use_id)
        return None if known is None or known.internal_id is None else CallId(known.internal_id)

    def lost(self, tool_use_id: str, tool_name: str) -> None:
        """Tell the model, before its next request, that this call did not survive."""
        self._lost.append((tool_use_id, tool_name))

    def await_outcome(self, call_id: CallId, tool_use_id: str, *, deferred: bool) -> None:
        """Tell this call's outcome later, as for any call that got a placeholder."""
        self.ledger.await_outcome(call_id, tool_use_id, deferred=deferred)
        self._rest()

    def committing(self) -> int:
        """A commit takes its copy of the history: its length. Messages changed while the
        write is in flight stay dirty (see ``committed``)."""
        self._edited_from = _NONE_EDITED
        return len(self.history)

    def committed(self, upto: int) -> None:
        """The store has the history up to ``upto``, as it was when ``committing`` was called."""
        self.dirty_from = min(upto, self._edited_from)
        self._edited_from = _NONE_EDITED

    # ------------------------------------------------------------------ the one entry point

    def handle(self, event: Event) -> list[Action]:
        """Apply one event; return what the shell must do, in order."""
        if self.ended:
            return []
        if isinstance(event, CallRunning):  # the most frequent news, and it moves nothing on
            if self.awaits(event.call_id):
                self.ledger.running(event.call_id)
            return []
        actions: list[Action] = []
        if isinstance(event, Crashed):
            self._crash()
            return [DisarmTimer(), Commit()]
        if isinstance(event, StopRequested):
            self._stop(event, actions)
        elif isinstance(event, UserPosted):
            self._queue.append(event)
            if self._batch is not None and self._batch.submitted:
                self._batch.cut = True
        elif isinstance(event, ModelReplied):
            self._replied(event, actions)
        elif isinstance(event, CallsSubmitted):
            self._submitted(event, actions)
        elif isinstance(event, CallSettled):
            self._settled(event)
        elif isinstance(event, CallOverdue):
            self._overdue(event)
        elif isinstance(event, CancelsDone):
            self._cancelling = False
        elif isinstance(event, TimerFired):
            batch = self._batch
            if batch is not None and batch.deadline is not None and event.now >= batch.deadline:
                batch.timer_fired = True
        self._go_on(actions)
        if self._rest():  # a call the model will hear of ended, or began to wait on others
            actions.append(Commit(wait=False))
        return actions

    # ------------------------------------------------------------------ events

    def _live_calls(self) -> list[CallId]:
        live = self.ledger.live(self._awaited())
        if live:
            self._cancelling = True
        return live

    def _cancel(self, call_ids: list[CallId], actions: list[Action]) -> None:
        live = self.ledger.live(call_ids)
        if live:
            self._cancelling = True
            actions.append(CancelCalls(live, "session stopped"))

    def _replied(self, event: ModelReplied, actions: list[Action]) -> None:
        if self.status is not SessionStatus.REQUESTING or self._batch is not None:
            return
        if not event.content:  # None: the request failed (the shell recorded why)
            self._end_turn(actions, failed=event.content is None)
            return
        content = unique_tool_use_ids(event.content)
        self._append({"role": "assistant", "content": content})
        uses = [block for block in content if block.get("type") == "tool_use"]
        if not uses:
            self._end_turn(actions)
        elif self._stopping:
            self._append_user([tool_result(u["id"], NOT_RUN, error=True) for u in uses])
            self._end_turn(actions)
        else:
            self._batch = Batch(uses)
            actions.append(plan(self.config, self.may_call, self.ledger, self._batch, self.facts))

    def _submitted(self, event: CallsSubmitted, actions: list[Action]) -> None:
        batch = self._batch
        if batch is None or batch.submitted:
            return
        batch.submitted = True
        batch.results.update(event.answers)
        for read in event.read:
            self.ledger.told_by_capability(read)
        for call in event.started:
            batch.waits[call.call_id] = call.tool_use_id
            self.ledger.started(call)
            if call.disposition is Disposition.RUN_SYNC:
                batch.sync.add(call.call_id)
        strategy = self.config.async_yield_strategy
        if isinstance(strategy, YieldOnTimeout) and len(batch.waits) > len(batch.sync):
            batch.deadline = event.now + strategy.milliseconds / 1000
            actions.append(ArmTimer(batch.deadline))
        if any(isinstance(queued, UserPosted) for queued in self._queue):
            batch.cut = True
        self.ledger.drop_untold(keep=set(batch.waits))  # news not this session's concern
        if self._stopping and self._cancel_on_stop:
            self._cancel(list(batch.waits), actions)

    def _settled(self, event: CallSettled) -> None:
        call_id = event.snapshot.call_id
        settled = self.awaits(call_id) and self.ledger.settled(event.snapshot)
        if settled and call_id in self.outstanding:
            self._queue.append(event)

    def _overdue(self, event: CallOverdue) -> None:
        batch = self._batch
        if (
            batch is not None
            and event.call_id in batch.waits
            and not self.ledger.is_final(event.call_id)
        ):
            batch.overdue[event.call_id] = event.news
        elif event.call_id in self.outstanding:
            self._queue.append(event)

    # ------------------------------------------------------------------ moving on

    def _go_on(self, actions: list[Action]) -> None:
        """Take every step the state allows now."""
        batch = self._batch
        if batch is not None and batch.submitted and self._wait_over(batch):
            if batch.deadline is not None and not batch.timer_fired:
                actions.append(DisarmTimer())
            self._batch = None
            last_step = self._stopping or self._steps_left <= 0
            self._append_user(self._close(batch, take_posts=not last_step))
            if last_step:
                self._end_turn(actions)
            else:
                self._request(actions)
        elif batch is not None and batch.submitted:
            external = all(
                self.ledger.is_deferred(c) or self.ledger.is_final(c) for c in batch.waits
            )
            waiting = SessionStatus.WAITING_EXTERNAL if external else SessionStatus.WAITING
            if waiting is not self.status:  # the store holds the calls' uses and the status
                self._move(waiting)
                actions.append(Commit(wait=False))
        if self.free and not self._stopping:
            blocks = self._next_turn()
            if blocks or self._ask_again:
                self._ask_again = False
                self._steps_left = self.config.max_steps_per_turn
                if blocks:
                    self._append_user(blocks)
                self._request(actions)

    def _wait_over(self, batch: Batch) -> bool:
        if self._stopping:
            return not self._cancelling
        if batch.overdue:
            return True
        pending = [c for c in batch.waits if not self.ledger.is_final(c)]
        if not pending:
            return True
        if any(c in batch.sync for c in pending):
            return False
        if batch.cut or batch.timer_fired:
            return True
        strategy = self.config.async_yield_strategy
        return len(pending) < len(batch.waits) and isinstance(
            strategy, YieldOnAnyProgress | YieldOnTimeout
        )

    def _close(self, batch: Batch, *, take_posts: bool) -> list[UserBlock]:
        """One result per use, in order; then what cut the wait short (the posts only when
        a request follows: else they stay queued, for a turn of their own)."""
        results = dict(batch.results)
        for call_id, tool_use_id in batch.waits.items():
            results[tool_use_id] = self.ledger.result(call_id, tool_use_id)
        blocks: list[UserBlock] = [results[use["id"]] for use in batch.uses]
        if take_posts and len(batch.waits) > len(batch.sync):
            blocks += [text_block(e.text) for e in self._queue if isinstance(e, UserPosted)]
            self._queue = deque(e for e in self._queue if not isinstance(e, UserPosted))
        blocks += [
            text_block(overdue_text(batch.waits[c], news))
            for c, news in batch.overdue.items()
            if c in self.outstanding
        ]
        return blocks

    def _next_turn(self) -> list[UserBlock]:
        """The user-turn content the queued events add (empty: they grant no turn)."""
        if not self._grants_turn():
            return []
        blocks: list[UserBlock] = [lost_notice(*lost) for lost in self._lost]
        self._lost.clear()
        settled: list[CallId] = []
        overdue: dict[CallId, CallOverdue] = {}  # one nudge per call: its newest news
        for event in self._queue:
            if isinstance(event, UserPosted):
                blocks.append(text_block(event.text))
            elif isinstance(event, CallOverdue) and self._overdue_news(event):
                overdue[event.call_id] = event
            elif isinstance(event, CallSettled):
                settled.append(event.snapshot.call_id)
        self._queue.clear()
        blocks += [
            text_block(overdue_text(self.outstanding[call_id], event.news))
            for call_id, event in overdue.items()
        ]
        told = (self.ledger.late_outcome(call_id) for call_id in settled)
        return blocks + [block for block in told if block is not None]

    def _grants_turn(self) -> bool:
        if self._ask_again:
            return True
        for event in self._queue:
            if isinstance(event, UserPosted):
                return True
            if self._overdue_news(event):
                return True
        settled = any(isinstance(e, CallSettled) for e in self._queue)
        if not settled:
            return False
        if isinstance(self.config.async_yield_strategy, YieldOnAnyProgress | YieldOnTimeout):
            return True
        return self.ledger.all_outstanding_final()

    def _overdue_news(self, event: object) -> bool:
        """An overdue event of a call that is still running and awaited."""
        return (
            isinstance(event, CallOverdue)
            and event.call_id in self.outstanding
            and not self.ledger.is_final(event.call_id)
        )

    def _request(self, actions: list[Action]) -> None:
        self._steps_left -= 1
        self._ask_model()
        actions += [Commit(), SendRequest()]

    def _end_turn(self, actions: list[Action], *, failed: bool = False) -> None:
        self._turn_over(actions, failed=failed)

    def _live_awaited(self) -> list[bool]:
        ledger = self.ledger
        return [ledger.is_deferred(c) for c in self.outstanding if not ledger.is_final(c)]

    # ------------------------------------------------------------------ plumbing

    def _awaited(self) -> list[CallId]:
        batch = self._batch
        return [*self.outstanding, *(batch.waits if batch is not None else ())]

    def _append(self, message: Message) -> None:
        self.history.append(message)
        self._edited(len(self.history) - 1)

    def _edited(self, index: int) -> None:
        self.dirty_from = min(self.dirty_from, index)
        self._edited_from = min(self._edited_from, index)

    def _append_user(self, written: list[UserBlock]) -> None:
        """Add to the pending user turn: a partial turn is extended, never stacked."""
        blocks = cast(list[Block], written)
        if self.history and self.history[-1]["role"] == "user":
            content = self.history[-1]["content"]
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            self.history[-1] = {"role": "user", "content": [*content, *blocks]}
            self._edited(len(self.history) - 1)
        else:
            self._append({"role": "user", "content": blocks})
