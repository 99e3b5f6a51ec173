"""Steps a session performs in a task not its own (``BorrowedSteps``, ``SessionTask``'s
base): a finishing call's, which the call's end hands the next step to
(``Runtime.hand_off``), and a sub-agent's call, which performs its child's model requests
itself (``take_here``). The session's end interrupts such a step where it runs.
"""

from __future__ import annotations

import asyncio
from abc import ABC
from abc import abstractmethod
from collections.abc import Sequence

from agentos._kernel.interrupt import Interrupt
from agentos._sessions.writer import SessionWriter
from agentos._turns import events as ev
from agentos._turns.machine import Machine

TIMER_ACTIONS = (ev.ArmTimer, ev.DisarmTimer)
_TAKEN_HERE = (ev.SendRequest, ev.Commit, *TIMER_ACTIONS)
"""What a caller's task performs for the session (``take_here``): a model request, which a
cancel may cut and the session asks again, and what needs no await (a commit with no store)."""


class BorrowedSteps(ABC):
    """How a session's steps run in another task: with an ``Interrupt`` that the session's
    end cancels (an anyio scope would make anyio's task state in each task it runs in)."""

    _machine: Machine
    _writer: SessionWriter
    _todo: list[ev.Action]
    _stepping: bool
    _step: Interrupt | None
    _asking: ev.SendRequest | None
    """The request out now: one a cancel cut stays here (``take_here`` asks it again)."""
    _unsubscribe: Sequence[object] | None

    @abstractmethod
    def feed(self, event: ev.Event, *, hand_off: bool = False, here: bool = False) -> None: ...

    @abstractmethod
    async def _advance(self, only: tuple[type[ev.Action], ...] = ()) -> None: ...

    @abstractmethod
    def _wake(self) -> None: ...

    @property
    def _task_ended(self) -> bool:
        """The session's task has ended: nothing queued will be performed."""
        return self._unsubscribe == ()

    async def take_here(self, event: ev.Event) -> None:
        """``feed`` ``event`` and perform the model requests it asks for in the calling task
        rather than the session's (a sub-agent's call runs its child's turn: the child's task
        is not woken for it); anything else is left to the session's task, as is all of it
        for a session with a store (a commit cut by the caller's cancel could land with the
        writer none the wiser). A request cut by a cancel of the caller is asked again by
        the session's task (a stop that follows asks nothing, and ends the turn)."""
        if self._writer.store is not None:
            self.feed(event)
            return
        self.feed(event, here=True)
        self._asking = None
        try:
            await self._advance_handed_off(only=_TAKEN_HERE)
        except asyncio.CancelledError:
            cut, self._asking = self._asking, None
            if cut is not None and not self._task_ended and not self._machine.view.ended:
                self._todo.insert(0, cut)
                self._wake()
            raise

    async def _advance_handed_off(self, only: tuple[type[ev.Action], ...] = ()) -> None:
        """``_advance`` in the calling task (a finishing call's, or ``take_here``'s), under
        an ``Interrupt`` the session's end cancels; a cancel from elsewhere travels on."""
        if self._stepping or not self._todo:
            return
        self._step = step = Interrupt(asyncio.get_running_loop())
        step.enter()
        try:
            await self._advance(only)
        except asyncio.CancelledError:
            if not step.absorb():
                raise
        finally:
            step.over()
