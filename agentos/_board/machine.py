"""The board turn machine: an event loop whose model reads a board, not a transcript.

Each event grants one turn with a focus node: a user message, every
background call of a node settling (one wake per node), or a call running
past its expected duration. A turn is one or more steps; each step is one
model request carrying the board, rendered afresh, in the user role only (no
``tool_use``/``tool_result`` blocks: calls are rendered). A step whose answer
used a synchronous capability (status, cancel, list, ``new_thread``) goes
round again with the answer on the board; one that only starts background
work, or says its last word, ends the turn. Like ``TurnMachine`` it takes
events and returns actions, never awaiting and never reading a clock.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from collections.abc import Mapping

from agentos._board.board import CANCEL_TOOL
from agentos._board.board import NEW_THREAD_TOOL
from agentos._board.board import Board
from agentos._board.board import BoardTrigger
from agentos._board.data import BoardAuthor
from agentos._board.hanging import hang
from agentos._board.ledger import BoardLedger
from agentos._board.render import notation
from agentos._board.step import Step
from agentos._board.step import Wake
from agentos._board.step import attended
from agentos._board.texts import NEW_THREAD_DEFINITION
from agentos._board.texts import board_messages
from agentos._board.texts import ended_note
from agentos._board.texts import normal_use
from agentos._board.texts import not_started
from agentos._board.texts import outcome_text
from agentos._board.texts import overdue_note
from agentos._board.texts import refusal
from agentos._model.messages import Block
from agentos._model.messages import Message
from agentos._model.messages import ToolResultBlock
from agentos._model.messages import text_of
from agentos._turns import events as ev
from agentos._turns.agent_config import AgentConfig
from agentos._turns.call_options import NO_FACTS
from agentos._turns.call_options import ToolFacts
from agentos._turns.call_options import is_capability
from agentos._turns.call_options import options_for
from agentos._turns.capabilities import CAPABILITIES
from agentos._turns.chat import ChatEntry
from agentos._turns.decorations import Decorations
from agentos._turns.history import MessageHistory
from agentos._turns.machine import DrawnAfterEvents
from agentos._turns.machine import MachineView
from agentos._turns.machine import Waiting
from agentos._turns.transcript import unique_tool_use_ids
from agentos._turns.turn_status import TurnStatus
from components import CallId
from components import CallSnapshot
from components import CallStatus
from components import Json
from components import OverdueNews
from components import SessionStatus


class BoardMachine(DrawnAfterEvents):
    """One board session's turns, moved only by ``handle``."""

    own_tools: tuple[dict[str, object], ...] = (NEW_THREAD_DEFINITION,)

    def __init__(
        self,
        session_id: str,
        config: AgentConfig,
        may_call: Callable[[str], bool] | None = None,
        *,
        facts: ToolFacts = NO_FACTS,
    ) -> None:
        """As ``TurnMachine``'s (a board keeps no result cache)."""
        self.session_id = session_id
        self.config = config
        self.may_call = may_call or config.names_tool
        self.facts = facts
        self.turn = TurnStatus()
        self.board = Board()
        self.ledger = BoardLedger()
        self._queue: deque[Wake] = deque()
        self._step: Step | None = None
        self._steps_left = 0
        self._autonomous: dict[int, int] = {}
        """Thread root -> turns taken without the user since the user last posted there."""
        self._calls = MessageHistory()
        self._asking: tuple[int, str | None, CallId | None] | None = None
        """The focus, note and overdue call of the request out (or about to go out)."""
        self._drawn: tuple[tuple[object, ...], ev.SendRequest] | None = None
        """The last request drawn, and the board version and ask it was drawn for."""
        self._failed_wake: Wake | None = None
        """The turn whose request failed, until a request is tried again."""
        self.view = self._drawn_view()
        """As it is now: drawn again after each event that changes it (``handle``,
        ``from_store``)."""

    # ------------------------------------------------------------------ queries

    def _drawn_view(self) -> MachineView:
        """No history (the board is the record) and no queued posts (shown at once)."""
        return self.turn.view(self._grants_turn, self.ledger.outstanding, self._calls, self)

    def _grants_turn(self) -> bool:
        return bool(self._queue)

    def messages_upto(self, count: int) -> tuple[Message, ...]:
        return ()

    def replies_upto(self, count: int) -> list[str]:
        return self.board.posts(BoardAuthor.AGENT)

    def posts_upto(self, count: int) -> list[str]:
        return self.board.posts(BoardAuthor.USER)

    def chat(self) -> list[ChatEntry]:
        """The projection of the board for a person (the board holds the calls)."""
        return self.board.chat()

    def next_messages(self) -> list[Message]:
        """What the model would read if asked now: the board drawn now, unfocused."""
        return [{"role": "user", "content": [{"type": "text", "text": self.board.render().text}]}]

    def awaits(self, call_id: CallId) -> bool:
        """Whether this call's news matters: one of the board's running calls, or any call
        while a step's calls are being submitted (a fast one may end first)."""
        step = self._step
        return call_id in self.ledger.running or (step is not None and bool(step.uses))

    # ------------------------------------------------------------------ the store

    def to_store(self) -> ev.StoredTurn:
        """The whole board, for every commit (None while it is empty), with the turns still
        owed: the one asked (or whose request failed) first, then those queued."""
        if not self.board.nodes:
            return ev.StoredTurn(self.turn.status)
        stored = self.board.to_json()
        owed = [self._owed] if self._owed is not None else []
        wakes: list[Json] = [w.to_json() for w in [*owed, *self._queue] if w.call_id is None]
        if wakes:
            stored["wakes"] = wakes
        return ev.StoredTurn(self.turn.status, board=stored)

    @property
    def _owed(self) -> Wake | None:
        """The turn whose request is out, or failed: a restart asks it again (not one the
        model answered already, whose calls are being submitted)."""
        if self._asking is not None and self._step is not None and self._step.node is None:
            focus, note, about = self._asking
            return Wake(self._step.trigger, focus, note, about)
        return self._failed_wake

    def from_store(
        self, stored: ev.StoredTurn, held: Mapping[str, ToolResultBlock], *, asked: bool = False
    ) -> list[Waiting]:
        """Take the stored board back, with the turns it still owed (``Resumed`` takes
        them). Its calls that were still running are returned: the shell re-creates those
        ``held`` keeps a placeholder for (deferred calls whose token outlived the restart),
        takes back those its runtime still holds (unloaded and resumed in one process),
        each with ``OutcomeAwaited``, and gives up the rest (``CallLost``: they read as
        orphaned, for the model's next turn)."""
        board = stored.board
        if board is not None:
            self.board = Board.from_json(board)
            wakes = (board.get("wakes") or []) if asked else []
            if not isinstance(wakes, list):
                raise ValueError(f"not a stored board: wakes is {type(wakes).__name__}")
            owed = [Wake.from_json(wake) for wake in wakes]
            self._queue.extend(wake for wake in owed if wake.node in self.board.nodes)
        restored = self.ledger.restore(self.board, held)
        self.view = self._drawn_view()
        return [Waiting(use, name, self.ledger.runtime_id_of(use)) for use, name in restored]

    # ------------------------------------------------------------------ one event (``handle``)

    def _apply(self, event: ev.Event) -> list[ev.Action]:
        if self.turn.ended:
            return []
        actions: list[ev.Action] = []
        match event:
            case ev.CallRunning():
                if event.call_id in self.ledger.running:
                    self.board.set_status(event.call_id, CallStatus.RUNNING)
                return []
            case ev.Sending():  # drawn again if the board moved since (a call ended meanwhile)
                drawn = self._drawn
                request = self._draw() if self._asking is not None else None
                return [] if request is None or (drawn and request is drawn[1]) else [request]
            case ev.Committed():  # nothing to remember: the next commit writes the board whole
                return []
            case ev.ModelReplied():
                self._replied(event, actions)
            case ev.CallsSubmitted():
                self._submitted(event, actions)
            case ev.CallSettled():
                self._settled(event.snapshot)
            case ev.CallOverdue():
                self._overdue(event.call_id, event.news)
            case ev.UserPosted():
                if event.reply_to is not None and event.reply_to not in self.board.nodes:
                    raise ev.UnknownNode(
                        f"no node #{event.reply_to} on session {self.session_id!r}'s board"
                    )
                node = self.board.post_user(event.text, reply_to=event.reply_to, at=event.at)
                self._autonomous[self.board.root_of(node.display_id)] = 0
                self._queue.append(Wake(BoardTrigger.USER, node.display_id))
            case ev.StopRequested():
                if not self.turn.stopping:
                    self._queue.clear()
                    live = sorted(self.ledger.running) if event.cancel_calls else []
                    self.turn.stop(event.cancel_calls, live, actions)
            case ev.Crashed():
                self.turn.crash()
                return [ev.Commit()]
            case ev.Abandoned():
                self.turn.abandon()
                return []
            case ev.CallLost():  # it reads as orphaned
                self.ledger.lost(self.board, event.tool_use_id)
                return []
            case ev.OutcomeAwaited():  # the board shows the new id; its end wakes its node
                self.ledger.came_back(
                    self.board, event.call_id, event.tool_use_id, deferred=event.deferred
                )
                self.turn.rest(self._live_awaited)
                return []
            case _:  # CancelsDone, TimerFired, Resumed: a board turn never waits for calls
                pass
        self._go_on(actions)
        if self.turn.rest(self._live_awaited):  # between turns: a call the model will read
            actions.append(ev.Commit(wait=False))  # of ended
        return actions

    # ------------------------------------------------------------------ events

    def _replied(self, event: ev.ModelReplied, actions: list[ev.Action]) -> None:
        step = self._step
        if step is None or self.turn.status is not SessionStatus.REQUESTING or step.uses:
            return
        if event.content is None:  # the request failed: the shell recorded why
            self._end_step(actions, failed=True)
            return
        content = unique_tool_use_ids(event.content)
        node = step.node = self.board.open_turn(
            step.parent, step.trigger, at=event.at, text=text_of(content).strip()
        )
        uses = [
            normal_use(block, f"toolu_board_{node.display_id}_{number}")
            for number, block in enumerate(content)
            if block.get("type") == "tool_use"
        ]
        to_run: list[Block] = []
        looks = [
            str(use["name"])
            for use in uses
            if use["name"] in CAPABILITIES and refusal(use, self.config, self.may_call) is None
        ]
        for use in uses:
            refused = None if self.turn.stopping else refusal(use, self.config, self.may_call)
            background = use["name"] not in CAPABILITIES and use["name"] != NEW_THREAD_TOOL
            if self.turn.stopping:
                step.local[str(use["id"])] = (CallStatus.FAILED, "not started: the session stopped")
            elif refused is not None:
                step.local[str(use["id"])] = (CallStatus.FAILED, refused)
            elif background and looks:  # synchronous answers come first
                step.local[str(use["id"])] = (
                    CallStatus.FAILED,
                    not_started(str(use["name"]), looks),
                )
            elif use["name"] == NEW_THREAD_TOOL:
                posted = self.board.new_thread(str(use["input"]["text"]), at=event.at)
                step.local[str(use["id"])] = (
                    CallStatus.COMPLETED,
                    f"posted as #{posted.display_id}",
                )
                step.ends = True  # the person is asked: no further request this turn
            else:
                to_run.append(use)
        step.answered = bool(step.local) and not self.turn.stopping
        step.order = uses
        if to_run:
            step.uses = {str(use["id"]): use for use in to_run}
            config = self.config
            calls = {
                str(use["id"]): attended(
                    step.trigger,
                    options_for(config, use, Decorations.of_use(config, use), self.facts),
                )
                for use in to_run
                if not is_capability(config, str(use["name"]))
            }
            actions.append(ev.SubmitCalls(to_run, calls))
        else:
            hang(self.board, self.ledger, self.config.retry_budget, node, step)
            self._go_round_or_end(actions)

    def _submitted(self, event: ev.CallsSubmitted, actions: list[ev.Action]) -> None:
        step = self._step
        if step is None or step.node is None or not step.uses:
            return
        node = step.node
        uses, step.uses = step.uses, {}
        started = {call.tool_use_id: call for call in event.started if call.tool_use_id in uses}
        answers = {i: a for i, a in event.answers.items() if i in uses}
        step.answered = step.answered or bool(answers)
        for named in event.read:
            self.ledger.tell(named)
        hang(self.board, self.ledger, self.config.retry_budget, node, step, answers, started)
        fresh = [call.call_id for call in started.values()]
        if self.turn.stopping and self.turn.cancel_on_stop and fresh:
            actions.append(ev.CancelCalls(fresh, "session stopped"))
        for snapshot in step.early:  # calls of this step that ended while it was submitted
            self._settled(snapshot)
        step.early.clear()
        self._go_round_or_end(actions)

    def _go_round_or_end(self, actions: list[ev.Action]) -> None:
        """Another step if the model has answers to read (and steps left), else the turn ends."""
        step = self._step
        if (
            step is not None
            and step.answered
            and not step.ends
            and self._steps_left > 0
            and not self.turn.stopping
        ):
            self._next_step(actions)
        else:
            self._end_step(actions)

    def _settled(self, snapshot: CallSnapshot) -> None:
        call_id = snapshot.call_id
        step = self._step
        if call_id not in self.ledger.running:
            if step is not None and step.uses:
                step.early.append(snapshot)
            return
        self.ledger.ended(call_id)
        node = self.board.settle(call_id, snapshot.status, outcome_text(snapshot))
        if step is not None and any(
            use["name"] == CANCEL_TOOL
            and self.ledger.names(str(use["input"].get("tool_call_id", ""))) == call_id
            for use in step.uses.values()
        ):
            self.ledger.told.add(call_id)  # it ended of the cancel being answered now
        if call_id in self.ledger.told:  # the model's own cancel or look was the news
            self.ledger.told.discard(call_id)
            self.ledger.outstanding.pop(call_id, None)
            unread = any(
                CallId(c.call_id) in self.ledger.outstanding for c in node.calls if c.background
            )
            if not unread:
                return
        if self.board.settled(node.display_id) and not self.turn.stopping:
            self._queue.append(Wake(BoardTrigger.RESULT, node.display_id))

    def _overdue(self, call_id: CallId, news: OverdueNews | None) -> None:
        if call_id not in self.ledger.running or self.turn.stopping:
            return
        if any(wake.call_id == call_id for wake in self._queue):
            return  # re-armed while the first nudge still waits: one question is enough
        node = self.board.node_of_call(call_id)
        call = next(c for c in node.calls if c.call_id == call_id)
        seconds, estimated = self.ledger.intervals.get(call_id, (None, False))
        note = overdue_note(call, seconds, estimated, self.config.capabilities, news)
        self._queue.append(Wake(BoardTrigger.TIMER, node.display_id, note, call_id))

    # ------------------------------------------------------------------ moving on

    def _go_on(self, actions: list[ev.Action]) -> None:
        """Start the next turn a queued event grants, if the session is free for one."""
        while self.turn.free and not self.turn.stopping and self._queue:
            wake = self._queue.popleft()
            if wake.call_id is not None and wake.call_id not in self.ledger.running:
                continue  # the call ended meanwhile: its result wakes the node instead
            if wake.trigger is not BoardTrigger.USER:
                root = self.board.root_of(wake.node)
                if self._autonomous.get(root, 0) >= self.config.autonomous_turns:
                    self._heard_later(wake.node)
                    continue
                self._autonomous[root] = self._autonomous.get(root, 0) + 1
            self._step = Step(wake.trigger, wake.node)
            self._steps_left = self.config.max_steps_per_turn
            self._request(actions, focus=wake.node, note=wake.note, about=wake.call_id)

    def _heard_later(self, node_id: int) -> None:
        """A wake dropped over budget: its node's outcomes wait on the board for the next
        turn, and no longer hold ``outstanding`` (nothing would ever clear them)."""
        for call in self.board.nodes[node_id].calls:
            if call.status.is_final:
                self.ledger.outstanding.pop(CallId(call.call_id), "")

    def _next_step(self, actions: list[ev.Action]) -> None:
        """Go round again with the synchronous answers on the board (no new note)."""
        step = self._step
        assert step is not None and step.node is not None
        self._step = Step(step.trigger, step.node.display_id)
        self._request(actions, focus=step.node.display_id, note=None)

    def _request(
        self,
        actions: list[ev.Action],
        *,
        focus: int,
        note: str | None,
        about: CallId | None = None,
    ) -> None:
        """Ask for a step focused on ``focus``; ``about``: the running call an overdue note
        is about."""
        self._steps_left -= 1
        self.turn.ask_model()
        self._failed_wake = None
        self._asking = (focus, note, about)
        actions += [ev.Commit(), self._draw()]

    def _draw(self) -> ev.SendRequest:
        """The request for the turn being asked: the board as it is now (drawn again only
        if the board moved since the last drawing)."""
        assert self._asking is not None
        drawn_for = (self.board.version, *self._asking)
        if self._drawn is not None and self._drawn[0] == drawn_for:
            return self._drawn[1]
        focus, note, about = self._asking
        if about is not None and about not in self.ledger.running:  # it ended since: say so instead
            note = ended_note(self.board.call(about))
        capabilities = self.config.capabilities
        rendered = self.board.render(focus=focus, note=note, capabilities=capabilities)
        self.ledger.read()
        request = ev.SendRequest(
            board_messages(rendered), notation(capabilities), cache_system=True, may_move=True
        )
        self._drawn = (drawn_for, request)
        return request

    def _end_step(self, actions: list[ev.Action], *, failed: bool = False) -> None:
        self._failed_wake = self._owed if failed else None
        self._step = None
        self._asking = None
        self.turn.turn_over(actions, self._live_awaited, failed=failed)

    def _live_awaited(self) -> list[bool]:
        return [call_id in self.ledger.deferred for call_id in self.ledger.running]
