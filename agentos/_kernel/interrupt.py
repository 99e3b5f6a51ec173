"""How the runtime stops a task it runs: asyncio's own cancel, made again at each await.

``Interrupt`` is what anyio's cancel scope gave a call's task (a session's task, a step
handed off to a call's task), without the scope: a scope's first use in a task makes
anyio's task state (about 7 us and eight objects the collector keeps a call). Like
anyio's, the cancel is level-triggered: once asked for, it is delivered whenever the task
waits, until the part it guards is over, so a tool that swallows one ``CancelledError``
meets the next at its next await; and like anyio's, it waits while the task is inside a
shielded anyio scope (asyncio's cancel alone would break in).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from anyio._backends import _asyncio as anyio_asyncio

_TASK_STATES: Mapping[asyncio.Task[Any], object] = getattr(anyio_asyncio, "_task_states", {})
"""anyio's state of each task that entered one of its scopes (its innermost scope)."""
SHIELD_POLL = 0.005
"""Seconds between looks at a task in a shielded scope: a shield that lasts costs no
loop pass of its own."""


class Interrupt:
    """The cancel of one part of a task (a call's attempts, a session's step handed off
    to a call's task), asked for from the event loop's thread."""

    __slots__ = ("_active", "_cancels", "_loop", "_task", "_wanted")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._task: asyncio.Task[Any] | None = None
        self._wanted = False
        self._active = True
        self._cancels = 0

    def enter(self) -> None:
        """Called in the task as the part begins: a cancel asked for before it started is
        delivered at its first await (cancelling a task not yet started would skip its
        coroutine, ``finally`` and all)."""
        self._task = asyncio.current_task()
        if self._wanted:
            self._loop.call_soon(self._deliver)

    def over(self) -> None:
        """The part has ended: what the task does next is not for this interrupt, and the
        task forgets the cancels it made, as a cancel scope's exit does (a tool that
        swallowed one leaves none behind for the hand-off its task runs next)."""
        self._active = False
        task = self._task
        if task is not None:
            for _ in range(self._cancels):
                task.uncancel()
        self._cancels = 0

    def absorb(self) -> bool:
        """After a ``CancelledError`` ended the part: whether it was this interrupt's
        alone (then the task may go on; else the error must travel on)."""
        self.over()
        task = self._task
        return self._wanted and task is not None and task.cancelling() == 0

    def cancel(self, *, always: bool = False) -> None:
        """Cancel the task while the part runs (``always``: whatever it runs, as closing
        the runtime does)."""
        if always:
            self._active = True
        elif self._wanted:
            return
        self._wanted = True
        if self._task is not None:
            self._deliver()

    def _deliver(self) -> None:
        task = self._task
        if task is None or task.done() or not self._active:
            return
        if shielded(task):  # anyio's own delivery restarts when the shield ends; we look
            self._loop.call_later(SHIELD_POLL, self._deliver)
            return
        if task is not asyncio.current_task():
            waiter = getattr(task, "_fut_waiter", None)  # anyio reads it the same way
            if waiter is None or not waiter.done():
                task.cancel()
                self._cancels += 1
        self._loop.call_soon(self._deliver)


def shielded(task: asyncio.Task[Any]) -> bool:
    """Whether ``task`` is inside an anyio cancel scope that shields it: anyio's own
    cancel skips such a task until it leaves the scope, and so does an ``Interrupt``."""
    state = _TASK_STATES.get(task)
    scope = getattr(state, "cancel_scope", None)
    while scope is not None:
        if getattr(scope, "_shield", False):
            return True
        scope = getattr(scope, "_parent_scope", None)
    return False
