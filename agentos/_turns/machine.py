"""What every turn machine is to its shell (``Machine``), and what both share (``MachineBase``).

``TurnMachine`` (a transcript) and ``BoardMachine`` (a board) differ in what
the model reads and when a turn goes on; both take events and return actions
for the same shell, report the status the same way, and stop the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from agentos._model.messages import Message, ToolResultBlock
from agentos._turns.agent_config import AgentConfig
from agentos._turns.call_options import NO_FACTS, ToolFacts
from agentos._turns.chat import ChatEntry
from agentos._turns.events import (
    TURN_TRANSITIONS,
    Action,
    CancelCalls,
    Commit,
    Event,
    SendRequest,
    SessionStatus,
    StopRequested,
)
from agentos._turns.history import MessageHistory
from components import CallId, CallSnapshot, JsonObject

_ALLOWED = {
    status: TURN_TRANSITIONS[status] | {status, SessionStatus.FAILED} for status in SessionStatus
}


class Machine(Protocol):
    """A session's turns as the shell (``_sessions``) drives them: events in through
    ``handle``, actions out; the rest is what the shell and ``Session`` read or restore."""

    session_id: str
    status: SessionStatus
    requests: int
    dirty_from: int
    """The first message the store does not have as it is now."""
    own_tools: tuple[dict[str, object], ...]
    """Tool definitions the machine adds to the agent's (the board's ``new_thread``)."""

    @property
    def history(self) -> list[Message]: ...
    @property
    def stored_board(self) -> JsonObject | None:
        """What a board machine stores besides messages (None: nothing)."""
        ...

    @property
    def ended(self) -> bool: ...
    @property
    def free(self) -> bool: ...
    @property
    def stopping(self) -> bool: ...
    @property
    def at_rest(self) -> bool: ...
    @property
    def calls(self) -> MessageHistory: ...
    @property
    def outstanding(self) -> dict[CallId, str]: ...
    @property
    def queued_posts(self) -> list[str]: ...
    @property
    def replies(self) -> list[str]: ...

    def handle(self, event: Event) -> list[Action]: ...
    def request_now(self, asked: SendRequest) -> SendRequest: ...
    def chat(self, calls: Callable[[], Sequence[CallSnapshot]]) -> list[ChatEntry]: ...
    def check_reply(self, reply_to: int | None) -> None: ...
    def awaits(self, call_id: CallId) -> bool: ...
    def restore(
        self,
        history: list[Message],
        held: Mapping[str, ToolResultBlock],
        board: JsonObject | None = None,
        *,
        asked: bool = False,
    ) -> list[tuple[str, str]]: ...
    def runtime_id_of(self, tool_use_id: str) -> CallId | None: ...
    def lost(self, tool_use_id: str, tool_name: str) -> None: ...
    def await_outcome(self, call_id: CallId, tool_use_id: str, *, deferred: bool) -> None: ...
    def committing(self) -> int: ...
    def committed(self, upto: int) -> None: ...
    def abandon(self) -> None: ...


class MachineBase:
    """A session's status, its request count, and stopping."""

    own_tools: tuple[dict[str, object], ...] = ()

    def __init__(
        self,
        session_id: str,
        config: AgentConfig,
        may_call: Callable[[str], bool] | None = None,
        *,
        facts: ToolFacts = NO_FACTS,
    ) -> None:
        """``may_call`` says whether the agent may call a tool by name (the session knows
        its MCP servers' tools); without it, what ``config.tools`` names. ``facts``: what
        the shell knows of its tools that decides how a call runs (``options_for``)."""
        self.session_id = session_id
        self.config = config
        self.may_call = may_call or config.names_tool
        self.facts = facts
        self.status = SessionStatus.IDLE
        self.requests = 0
        self._in_turn = False
        self._request_failed = False
        """The last model request failed: the status reads ``failed`` until one is tried again."""
        self._crashed = False
        self._ask_again = False
        """Restored mid-turn with the model's answer due: ``Resumed`` asks again."""
        self._stopping = False
        self._cancel_on_stop = True
        """Whether the stop asked to cancel the calls still running."""

    @property
    def ended(self) -> bool:
        """Stopped, or failed for good (a crash; a failed model request ends nothing)."""
        return self.status is SessionStatus.STOPPED or self._crashed

    @property
    def free(self) -> bool:
        """No turn runs: the status is a resting one, saying what can still happen."""
        return not self.ended and not self._in_turn

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def queued_posts(self) -> list[str]:
        """User messages the chat does not show yet (none: a board shows a post at once)."""
        return []

    @property
    def stored_board(self) -> JsonObject | None:
        """Nothing besides the messages (a board machine stores its board)."""
        return None

    def request_now(self, asked: SendRequest) -> SendRequest:
        """``asked`` as it goes out now, when the shell performs it (a transcript's: as
        decided; ``BoardMachine`` draws the board again)."""
        return asked

    def _stop(self, event: StopRequested, actions: list[Action]) -> None:
        """Stop once: drop what waits for a turn, cancel the running calls if asked, and
        end now if no turn runs (else the turn ends into ``stopped``)."""
        if self._stopping:
            return
        self._stopping = True
        self._cancel_on_stop = event.cancel_calls
        self._drop_waiting()
        live = self._live_calls() if event.cancel_calls else []
        if live:
            actions.append(CancelCalls(live, "session stopped"))
        if self.free:
            self._move(SessionStatus.STOPPED)
            actions.append(Commit())

    def _drop_waiting(self) -> None:
        """What a stop throws away before anything else (a board's queued wakes)."""

    def _live_calls(self) -> list[CallId]:
        """The calls a stop that cancels would cancel."""
        return []

    def _ask_model(self) -> None:
        """A request goes out: a turn runs (and a failed request is being tried again)."""
        self._in_turn = True
        self._request_failed = False
        self.requests += 1
        self._move(SessionStatus.REQUESTING)

    def _turn_over(self, actions: list[Action], *, failed: bool = False) -> None:
        """The turn ends (``failed``: its model request failed); the status rests."""
        self._in_turn = False
        self._request_failed = failed
        if self._stopping:
            self._move(SessionStatus.STOPPED)
        else:
            self._rest()
        actions.append(Commit())

    def _crash(self) -> None:
        self._crashed = True
        self._move(SessionStatus.FAILED)

    def _rest(self) -> bool:
        """Between turns, the status tells what can still happen: ``failed`` until a request
        is tried again, ``waiting`` while a call the model will hear of runs,
        ``waiting_external`` while only deferred ones do, else ``idle``. Whether it moved."""
        if not self.free or self._stopping:
            return False
        if self._request_failed:
            status = SessionStatus.FAILED
        else:
            live = self._live_awaited()
            if not live:
                status = SessionStatus.IDLE
            elif all(live):
                status = SessionStatus.WAITING_EXTERNAL
            else:
                status = SessionStatus.WAITING
        if status is self.status:
            return False
        self._move(status)
        return True

    def _live_awaited(self) -> list[bool]:
        """For each call still running whose end the model will hear: whether it is deferred."""
        return []

    def abandon(self) -> None:
        """The shell's task ended (its host is closing): nothing will move this turn again."""
        if not self.ended:
            self.status = SessionStatus.STOPPED

    def _move(self, status: SessionStatus) -> None:
        if status not in _ALLOWED[self.status]:
            raise AssertionError(f"turn cannot move from {self.status} to {status}")
        self.status = status
