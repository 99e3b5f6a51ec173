"""A session's turns as a pure state machine: events in, actions out, no I/O.

Like h11's ``Connection``, ``TurnMachine.handle`` changes state synchronously and returns
what the async shell (``Session``) must do: send the request it drafted, submit calls as it
decided them, arm or disarm the yield timer, cancel calls, commit. Time and call snapshots
come in with the events; nothing here awaits or reads a clock (``TURN_TRANSITIONS``).
Every ``tool_use`` gets exactly one ``tool_result``, in the next user message and in its
position; a call the turn stops waiting for gets a placeholder, its outcome told later.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import cast

from agentos._model.messages import Block
from agentos._model.messages import Message
from agentos._model.messages import UserBlock
from agentos._model.messages import text_block
from agentos._model.messages import tool_result
from agentos._turns import events as ev
from agentos._turns.agent_config import AgentConfig
from agentos._turns.call_ledger import Batch
from agentos._turns.call_ledger import CallLedger
from agentos._turns.call_options import NO_FACTS
from agentos._turns.call_options import ToolFacts
from agentos._turns.chat import ChatEntry
from agentos._turns.context_view import ContextView
from agentos._turns.context_view import TranscriptView
from agentos._turns.context_view import ViewInput
from agentos._turns.machine import MachineView
from agentos._turns.packed import MessageLog
from agentos._turns.planning import plan
from agentos._turns.result_cache import ResultCache
from agentos._turns.tool_policy import Disposition
from agentos._turns.tool_policy import YieldOnAnyProgress
from agentos._turns.tool_policy import YieldOnTimeout
from agentos._turns.transcript import NOT_RUN
from agentos._turns.transcript import lost_notice
from agentos._turns.transcript import overdue_text
from agentos._turns.transcript import said
from agentos._turns.transcript import unique_tool_use_ids
from agentos._turns.transcript_chat import transcript_chat
from agentos._turns.transcript_storage import StoredTranscript
from agentos._turns.turn_status import TurnStatus
from components import CallId
from components import CallSnapshot
from components import CallStatus
from components import SessionStatus


class TurnMachine(StoredTranscript):
    """The state of one conversation's turns, moved only by ``handle``."""

    own_tools: tuple[dict[str, object], ...] = ()

    def __init__(
        self,
        session_id: str,
        config: AgentConfig,
        may_call: Callable[[str], bool] | None = None,
        *,
        cache: ResultCache | None = None,
        facts: ToolFacts = NO_FACTS,
        view: ContextView | None = None,
        calls: Callable[[], Sequence[CallSnapshot]] = tuple,
        status_of: Callable[[CallId], CallStatus | None] = lambda call_id: None,
    ) -> None:
        """``may_call``: whether the agent may call a tool (default: ``config.tools``);
        ``cache``: where the cache decorator keeps results (None: this session's own);
        ``facts``: what the shell knows of its tools (``options_for``); ``view``: how the
        history becomes what the model reads, consulted with ``calls`` as it drafts;
        ``status_of``: a call's status, for a placeholder (``CallLedger``)."""
        self.session_id = session_id
        self.config = config
        self.may_call = may_call or config.names_tool
        self.facts = facts
        self._view = view or TranscriptView()
        self._calls = calls
        self.turn = TurnStatus()
        self._log = MessageLog()
        """The history, packed: the collector does not walk it (``history`` builds it)."""
        self.dirty_from = 0
        self._ledger = CallLedger(session_id, cache, status_of)
        self._queue: list[ev.UserPosted | ev.CallSettled | ev.CallOverdue] = []
        self._batch: Batch | None = None
        self._lost: list[tuple[str, str]] | None = None
        """Calls lost in a restart, to tell the model before its next request."""
        self._steps_left = 0
        self._cancelling = False
        """Stopping, and the shell has not yet cancelled the calls it was asked to."""
        self.view = self._drawn_view()
        """As it is now: drawn again after each event that changes it (``handle``,
        ``from_store``)."""

    # ------------------------------------------------------------------ queries

    @property
    def history(self) -> list[Message]:
        """The conversation's messages, a list built on each read: each a fresh dict but
        a newest user message, which is the one kept (``MessageLog``)."""
        return list(self._log)

    def _drawn_view(self) -> MachineView:
        return self.turn.view(
            self._grants_turn,
            self._ledger.outstanding,
            self._ledger.history,
            self,
            len(self._log),
            tuple(e.text for e in self._queue if isinstance(e, ev.UserPosted))
            if self._queue
            else (),
        )

    def messages_upto(self, count: int) -> Sequence[Message]:
        return self._log.upto(count)

    def replies_upto(self, count: int) -> list[str]:
        return [text for role, text in self._log.said_upto(count, said) if role == "assistant"]

    def replies_since(self, mark: int, count: int) -> tuple[list[str], int]:
        """The assistant messages' texts among messages ``mark`` to ``count``, and ``count``."""
        news = self._log.between(mark, count)
        return [said(message) for message in news if message.get("role") == "assistant"], count

    def posts_upto(self, count: int) -> list[str]:
        return [text for role, text in self._log.said_upto(count, said) if role == "user"]

    def chat(self) -> list[ChatEntry]:
        """What a person sees: every message, with its calls (see ``transcript_chat``)."""
        return transcript_chat(self._log, self._calls(), self._ledger.history, self.session_id)

    def next_messages(self) -> Sequence[Message]:
        """What the model reads if asked now: the history through the context view (the
        transcript view's is the history as it is now, its messages built as read)."""
        view_input = ViewInput(self.session_id, self._log.upto(len(self._log)), self._calls)
        return self._view.build(view_input)

    def awaits(self, call_id: CallId) -> bool:
        """Whether the model is still to hear how this call ended (or may be: a batch
        whose calls are being submitted takes every call's news until it knows its own)."""
        batch = self._batch
        return call_id in self._ledger.outstanding or (
            batch is not None and (call_id in batch.waits or not batch.submitted)
        )

    def timer(self) -> float | None:
        """The yield deadline armed now, if any."""
        batch = self._batch
        if batch is None or batch.timer_fired or self.turn.status not in ev.WAITING:
            return None
        return batch.deadline

    # ------------------------------------------------------------------ one event (``handle``)

    def handle(self, event: ev.Event) -> list[ev.Action]:
        """``DrawnAfterEvents.handle``, but a call's end that moves nothing keeps the view:
        the wait goes on, with no action and the same status, queue and history."""
        if type(event) is not ev.CallSettled:
            return super().handle(event)
        if self._settled_while_others_run(event.snapshot):
            return []
        turn = self.turn
        mark = (turn.status, len(self._queue), len(self._log))
        actions = self._apply(event)
        if actions or mark != (turn.status, len(self._queue), len(self._log)):
            self.view = self._drawn_view()
        return actions

    def _apply(self, event: ev.Event) -> list[ev.Action]:
        if isinstance(event, ev.Abandoned):  # the task ended: nothing extends the log now
            self.turn.abandon()
            self._log.settle()
            return []
        if self.turn.ended:
            if isinstance(event, ev.Committed):
                self.dirty_from = event.written.unwritten_from(self._log)
            return []
        actions: list[ev.Action] = []
        match event:
            case ev.CallRunning():  # the most frequent news, and it moves nothing on
                if self.awaits(event.call_id):
                    self._ledger.running(event.call_id)
                return []
            case ev.Sending():  # not asked for (may_move=False): nothing moves its draft
                return []
            case ev.Committed():
                self.dirty_from = event.written.unwritten_from(self._log)
                return []
            case ev.ModelReplied():
                self._replied(event, actions)
            case ev.CallsSubmitted():
                self._submitted(event, actions)
            case ev.CallSettled():
                self._settled(event)
            case ev.CallOverdue():
                self._overdue(event)
            case ev.UserPosted():
                if event.reply_to is not None:
                    raise ev.ReplyRefused("reply_to is for board sessions (context_view='board')")
                self._queue.append(event)
                if self._batch is not None and self._batch.submitted:
                    self._batch.cut = True
            case ev.StopRequested():
                self._stop(event, actions)
            case ev.CancelsDone():
                self._cancelling = False
            case ev.TimerFired():
                batch = self._batch
                if batch is not None and batch.deadline is not None and event.now >= batch.deadline:
                    batch.timer_fired = True
            case ev.Crashed():
                self.turn.crash()
                return [ev.DisarmTimer(), ev.Commit()]
            case ev.CallLost():  # told before the model's next request
                if self._lost is None:
                    self._lost = []
                self._lost.append((event.tool_use_id, event.tool_name))
                return []
            case ev.OutcomeAwaited():
                self._ledger.await_outcome(
                    event.call_id, event.tool_use_id, deferred=event.deferred
                )
                self.turn.rest(self._live_awaited)
                return []
        self._go_on(actions)
        if self.turn.rest(self._live_awaited):  # a call the model will hear of ended, or
            actions.append(ev.Commit(wait=False))  # began to wait on others
        return actions

    # ------------------------------------------------------------------ events

    def _stop(self, event: ev.StopRequested, actions: list[ev.Action]) -> None:
        """Stop once: cancel the calls still running if asked; end now if no turn runs."""
        if not self.turn.stopping:
            live = self._ledger.live(self._awaited()) if event.cancel_calls else []
            self._cancelling = self._cancelling or bool(live)
            self.turn.stop(event.cancel_calls, live, actions)

    def _cancel(self, call_ids: list[CallId], actions: list[ev.Action]) -> None:
        live = self._ledger.live(call_ids)
        if live:
            self._cancelling = True
            actions.append(ev.CancelCalls(live, "session stopped"))

    def _replied(self, event: ev.ModelReplied, actions: list[ev.Action]) -> None:
        if self.turn.status is not SessionStatus.REQUESTING or self._batch is not None:
            return
        if not event.content:  # None: the request failed (the shell recorded why)
            self._end_turn(actions, failed=event.content is None)
            return
        content = unique_tool_use_ids(event.content)
        self._append({"role": "assistant", "content": content})
        uses = [block for block in content if block.get("type") == "tool_use"]
        if not uses:
            self._end_turn(actions)
        elif self.turn.stopping:
            self._append_user([tool_result(u["id"], NOT_RUN, error=True) for u in uses])
            self._end_turn(actions)
        else:
            self._batch = Batch(uses)
            actions.append(plan(self.config, self.may_call, self._ledger, self._batch, self.facts))

    def _submitted(self, event: ev.CallsSubmitted, actions: list[ev.Action]) -> None:
        batch = self._batch
        if batch is None or batch.submitted:
            return
        batch.submitted = True
        batch.results.update(event.answers)
        for read in event.read:
            self._ledger.told_by_capability(read)
        for call in event.started:
            batch.waits[call.call_id] = call.tool_use_id
            self._ledger.started(call)
            if call.disposition is Disposition.RUN_SYNC:
                batch.sync.add(call.call_id)
        strategy = self.config.async_yield_strategy
        if isinstance(strategy, YieldOnTimeout) and len(batch.waits) > len(batch.sync):
            batch.deadline = event.now + strategy.milliseconds / 1000
            actions.append(ev.ArmTimer(batch.deadline))
        if any(isinstance(queued, ev.UserPosted) for queued in self._queue):
            batch.cut = True
        self._ledger.drop_untold(keep=set(batch.waits))  # news not this session's concern
        if self.turn.stopping and self.turn.cancel_on_stop:
            self._cancel(list(batch.waits), actions)

    def _settled(self, event: ev.CallSettled) -> None:
        call_id = event.snapshot.call_id
        settled = self.awaits(call_id) and self._ledger.settled(event.snapshot)
        if settled and call_id in self._ledger.outstanding:
            self._queue.append(event)

    def _settled_while_others_run(self, snapshot: CallSnapshot) -> bool:
        """A call of a batch that waits for them all ended while another (neither ended nor
        deferred) runs on: kept in a few steps, where ``_apply`` finds that nothing moves."""
        batch, turn = self._batch, self.turn
        return (
            batch is not None
            and batch.submitted
            and not turn.stopping
            and turn.status is SessionStatus.WAITING
            and batch.waits_for_all(self.config.async_yield_strategy)
            and self._ledger.settled_while_others_run(batch, snapshot)
        )

    def _overdue(self, event: ev.CallOverdue) -> None:
        batch = self._batch
        if (
            batch is not None
            and event.call_id in batch.waits
            and not self._ledger.is_final(event.call_id)
        ):
            batch.overdue[event.call_id] = event.news
        elif event.call_id in self._ledger.outstanding:
            self._queue.append(event)

    # ------------------------------------------------------------------ moving on

    def _go_on(self, actions: list[ev.Action]) -> None:
        """Take every step the state allows now."""
        batch = self._batch
        if batch is not None and batch.submitted and self._wait_over(batch):
            if batch.deadline is not None and not batch.timer_fired:
                actions.append(ev.DisarmTimer())
            self._batch = None
            last_step = self.turn.stopping or self._steps_left <= 0
            self._append_user(self._close(batch, take_posts=not last_step))
            if last_step:
                self._end_turn(actions)
            else:
                self._request(actions)
        elif batch is not None and batch.submitted:
            deferred, final = self._ledger.is_deferred, self._ledger.is_final
            # newest first: the call submitted last is the one most likely still running
            external = all(deferred(c) or final(c) for c in reversed(batch.waits))
            waiting = SessionStatus.WAITING_EXTERNAL if external else SessionStatus.WAITING
            if waiting is not self.turn.status:  # the store holds the calls' uses and the status
                self.turn.move(waiting)
                actions.append(ev.Commit(wait=False))
        if self.turn.free and not self.turn.stopping:
            blocks = self._next_turn()
            if blocks or self.turn.ask_again:
                self.turn.ask_again = False
                self._steps_left = self.config.max_steps_per_turn
                if blocks:
                    self._append_user(blocks)
                self._request(actions)

    def _wait_over(self, batch: Batch) -> bool:
        if self.turn.stopping:
            return not self._cancelling
        return batch.wait_over(self._ledger.is_final, self.config.async_yield_strategy)

    def _close(self, batch: Batch, *, take_posts: bool) -> list[UserBlock]:
        """One result per use, in order; then what cut the wait short (the posts only when
        a request follows: else they stay queued, for a turn of their own)."""
        results = dict(batch.results)
        for call_id, tool_use_id in batch.waits.items():
            results[tool_use_id] = self._ledger.result(call_id, tool_use_id)
        blocks: list[UserBlock] = [results[use["id"]] for use in batch.uses]
        if take_posts and len(batch.waits) > len(batch.sync):
            blocks += [text_block(e.text) for e in self._queue if isinstance(e, ev.UserPosted)]
            self._queue = [e for e in self._queue if not isinstance(e, ev.UserPosted)]
        blocks += [
            text_block(overdue_text(batch.waits[c], news))
            for c, news in batch.overdue.items()
            if c in self._ledger.outstanding
        ]
        return blocks

    def _next_turn(self) -> list[UserBlock]:
        """The user-turn content the queued events add (empty: they grant no turn)."""
        if not self._grants_turn():
            return []
        blocks: list[UserBlock] = [lost_notice(*lost) for lost in self._lost or ()]
        self._lost = None
        settled: list[CallId] = []
        overdue: dict[CallId, ev.CallOverdue] = {}  # one nudge per call: its newest news
        for event in self._queue:
            if isinstance(event, ev.UserPosted):
                blocks.append(text_block(event.text))
            elif isinstance(event, ev.CallOverdue) and self._overdue_news(event):
                overdue[event.call_id] = event
            elif isinstance(event, ev.CallSettled):
                settled.append(event.snapshot.call_id)
        self._queue.clear()
        blocks += [
            text_block(overdue_text(self._ledger.outstanding[call_id], event.news))
            for call_id, event in overdue.items()
        ]
        told = (self._ledger.late_outcome(call_id) for call_id in settled)
        return blocks + [block for block in told if block is not None]

    def _grants_turn(self) -> bool:
        if self.turn.ask_again or not self._queue:
            return self.turn.ask_again
        if any(isinstance(e, ev.UserPosted) or self._overdue_news(e) for e in self._queue):
            return True
        settled = any(isinstance(e, ev.CallSettled) for e in self._queue)
        if not settled:
            return False
        if isinstance(self.config.async_yield_strategy, YieldOnAnyProgress | YieldOnTimeout):
            return True
        return self._ledger.all_outstanding_final()

    def _overdue_news(self, event: object) -> bool:
        """An overdue event of a call that is still running and awaited."""
        return (
            isinstance(event, ev.CallOverdue)
            and event.call_id in self._ledger.outstanding
            and not self._ledger.is_final(event.call_id)
        )

    def _request(self, actions: list[ev.Action]) -> None:
        self._steps_left -= 1
        self.turn.ask_model()
        actions += [ev.Commit(), ev.SendRequest(self.next_messages())]

    def _end_turn(self, actions: list[ev.Action], *, failed: bool = False) -> None:
        self.turn.turn_over(actions, self._live_awaited, failed=failed)

    def _live_awaited(self) -> list[bool]:
        ledger = self._ledger
        return [ledger.is_deferred(c) for c in ledger.outstanding if not ledger.is_final(c)]

    def _awaited(self) -> list[CallId]:
        batch = self._batch
        return [*self._ledger.outstanding, *(batch.waits if batch is not None else ())]

    def _append(self, message: Message) -> None:
        self._log.append(message)
        self._edited(len(self._log) - 1)

    def _edited(self, index: int) -> None:
        self.dirty_from = min(self.dirty_from, index)

    def _append_user(self, written: list[UserBlock]) -> None:
        """Add to the pending user turn: a partial turn is extended, never stacked."""
        blocks = cast(list[Block], written)
        last = self._log.open_user()
        if last is not None:
            content = last["content"]
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            self._log.replace_last({"role": "user", "content": [*content, *blocks]})
            self._edited(len(self._log) - 1)
        else:
            self._append({"role": "user", "content": blocks})
