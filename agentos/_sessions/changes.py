"""Who hears of a session's changes: the tasks waiting for one, and ``on_change`` callbacks.

The session's task reports every change it makes (``report``); a waiter is woken where its
condition holds, not at every event of a turn (a loop pass and an ``Event`` each), and a
callback's bug stays its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from agentos._log import agentos_logger


class SessionChanges:
    """A session's change news: ``next_change`` and ``until`` for tasks, ``listen`` for
    callbacks (``Session.on_change``). Nothing is made until someone waits."""

    __slots__ = ("_callbacks", "_changed", "_session_id", "_until")

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id
        self._changed: asyncio.Event | None = None
        self._until: list[tuple[Callable[[], bool], asyncio.Future[None]]] | None = None
        """``until``'s waiters: what each waits to hold, and the future that wakes it (None
        while nobody waits: most sessions, most of the time)."""
        self._callbacks: list[Callable[[], object]] | None = None

    async def next_change(self) -> None:
        """Until the next change is reported."""
        if self._changed is None:
            self._changed = asyncio.Event()
        await self._changed.wait()

    async def until(self, holds: Callable[[], bool]) -> None:
        """Until ``holds()``, checked at each change reported: the waiter wakes once."""
        if holds():
            return
        waiter = (holds, asyncio.get_running_loop().create_future())
        if self._until is None:
            self._until = []
        waiting = self._until
        waiting.append(waiter)
        try:
            await waiter[1]
        finally:
            waiting.remove(waiter)  # only its own waiter takes it out
            if not waiting and self._until is waiting:
                self._until = None

    def listen(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Call ``callback`` after each change; returns what stops it."""
        if self._callbacks is None:
            self._callbacks = []
        callbacks = self._callbacks
        callbacks.append(callback)

        def stop() -> None:
            if callback in callbacks:
                callbacks.remove(callback)
            if not callbacks and self._callbacks is callbacks:
                self._callbacks = None

        return stop

    def report(self, *, moved: bool = True) -> None:
        """Something changed: wake the waiters whose wait is over, call the callbacks.
        ``moved=False``: nothing a waiter's condition reads changed (a call ended and the
        turn waits on), so only what a UI shows did: the conditions are not checked."""
        if self._changed is not None:
            self._changed.set()
            self._changed = None
        if moved and self._until is not None:
            for holds, future in self._until:
                if not future.done() and holds():
                    future.set_result(None)
        if self._callbacks is None:
            return
        for callback in list(self._callbacks):
            try:
                callback()
            except Exception as error:  # a listener's bug stays its own
                agentos_logger()[0].warning(
                    "session_listener.failed",
                    session_id=self._session_id,
                    error=f"{type(error).__name__}: {error}",
                )
