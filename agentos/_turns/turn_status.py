"""What both turn machines keep the same way: the status, the request count, and stopping.

``TurnStatus`` is a part each machine holds (not a base it extends): the machine
tells it that a request goes out, that a turn is over, that the session crashed or
is asked to stop, and it moves the status as ``TURN_TRANSITIONS`` allows. What
differs between a transcript and a board (which calls still run, what a stop
drops) the machine passes in.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping

from agentos._turns.events import TURN_TRANSITIONS
from agentos._turns.events import Action
from agentos._turns.events import CancelCalls
from agentos._turns.events import Commit
from agentos._turns.events import SessionStatus
from agentos._turns.history import MessageHistory
from agentos._turns.machine import MachineView
from agentos._turns.machine import ViewSource
from components import CallId

_ALLOWED = {
    status: TURN_TRANSITIONS[status] | {status, SessionStatus.FAILED} for status in SessionStatus
}


_STOPPED = SessionStatus.STOPPED

_new_view = tuple.__new__
"""How a ``MachineView`` is made: without its ``__new__``'s call (one is made per event)."""


class TurnStatus:
    """A session's status, its request count, and stopping."""

    def __init__(self) -> None:
        self.status = SessionStatus.IDLE
        self.requests = 0
        self.in_turn = False
        self.request_failed = False
        """The last model request failed: the status reads ``failed`` until one is tried again."""
        self.crashed = False
        self.ask_again = False
        """Restored mid-turn with the model's answer due: ``Resumed`` asks again."""
        self.stopping = False
        self.cancel_on_stop = True
        """Whether the stop asked to cancel the calls still running."""
        self.ended = False
        """Stopped, or failed for good (a crash; a failed model request ends nothing)."""
        self.free = True
        """No turn runs: the status is a resting one, saying what can still happen."""

    def _derive(self) -> None:
        """``ended`` and ``free`` again, after the turn ended or the session was abandoned
        (they are read on every event, so they are kept, not computed; a turn that begins
        and ``move`` keep them too)."""
        self.ended = self.status is _STOPPED or self.crashed
        self.free = not self.ended and not self.in_turn

    def view(
        self,
        grants_turn: Callable[[], bool],
        outstanding: Mapping[CallId, str],
        calls: MessageHistory,
        source: ViewSource,
        length: int = 0,
        queued_posts: tuple[str, ...] = (),
    ) -> MachineView:
        """The machine's view, with this status: at rest when ended, or free with nothing
        queued that ``grants_turn``."""
        ended, free = self.ended, self.free
        return _new_view(
            MachineView,
            (
                self.status,
                self.requests,
                ended,
                free,
                self.stopping,
                ended or (free and not grants_turn()),
                outstanding,
                calls,
                queued_posts,
                source,
                length,
            ),
        )

    def stop(self, cancel_calls: bool, live: list[CallId], actions: list[Action]) -> None:
        """Stop (once: the machine checks ``stopping`` first): cancel ``live`` (the calls
        still running, when the stop cancels them), and end now if no turn runs (else the
        turn ends into ``stopped``)."""
        self.stopping = True
        self.cancel_on_stop = cancel_calls
        if live:
            actions.append(CancelCalls(live, "session stopped"))
        if self.free:
            self.move(SessionStatus.STOPPED)
            actions.append(Commit())

    def ask_model(self) -> None:
        """A request goes out: a turn runs (and a failed request is being tried again)."""
        self.in_turn = True
        self.free = False
        self.request_failed = False
        self.requests += 1
        self.move(SessionStatus.REQUESTING)

    def turn_over(
        self, actions: list[Action], live: Callable[[], list[bool]], *, failed: bool = False
    ) -> None:
        """The turn ends (``failed``: its model request failed); the status rests."""
        self.in_turn = False
        self.request_failed = failed
        self._derive()
        if self.stopping:
            self.move(SessionStatus.STOPPED)
        else:
            self.rest(live)
        actions.append(Commit())

    def crash(self) -> None:
        self.crashed = True
        self.move(SessionStatus.FAILED)  # derives ended

    def rest(self, live: Callable[[], list[bool]]) -> bool:
        """Between turns, the status tells what can still happen: ``failed`` until a request
        is tried again, ``waiting`` while a call the model will hear of runs,
        ``waiting_external`` while only deferred ones do, else ``idle``. ``live``: for each
        call still running whose end the model will hear, whether it is deferred. Whether
        the status moved."""
        if not self.free or self.stopping:
            return False
        if self.request_failed:
            status = SessionStatus.FAILED
        else:
            running = live()
            if not running:
                status = SessionStatus.IDLE
            elif all(running):
                status = SessionStatus.WAITING_EXTERNAL
            else:
                status = SessionStatus.WAITING
        if status is self.status:
            return False
        self.move(status)
        return True

    def abandon(self) -> None:
        """The shell's task ended (its host is closing): nothing will move this turn again."""
        if not self.ended:
            self.status = SessionStatus.STOPPED
            self._derive()

    def move(self, status: SessionStatus) -> None:
        if status not in _ALLOWED[self.status]:
            raise AssertionError(f"turn cannot move from {self.status} to {status}")
        self.status = status
        if status is _STOPPED or self.crashed:  # for good: neither comes back
            self.ended = True
            self.free = False
