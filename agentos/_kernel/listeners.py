"""Who hears of a session's call events: subscriber streams and ``on_call_events`` callbacks.

The kernel hands each tick's events to ``deliver``, grouped by session. A
subscriber that falls ``EVENT_BUFFER`` events behind loses the newest (they are
counted); a callback that raises is logged and the tick goes on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Sequence
from contextlib import asynccontextmanager
from typing import TypeVar

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream
from anyio.streams.memory import MemoryObjectSendStream

from components import CallEvent
from components import SessionId
from components import TickContext

EVENT_BUFFER = 10_000
"""Events a subscriber may fall behind by before the newest are dropped (and counted)."""
_L = TypeVar("_L")


class Listeners:
    """The streams and callbacks listening to each session, and ``ctx.subscribed`` in step."""

    def __init__(self, ctx: TickContext) -> None:
        self._ctx = ctx
        self.subscribers: dict[SessionId, list[MemoryObjectSendStream[CallEvent]]] = {}
        self.callbacks: dict[SessionId, list[Callable[[CallEvent], object]]] = {}
        self.events_dropped = 0
        self.failures = 0
        """Callbacks that raised."""

    @asynccontextmanager
    async def subscribe(
        self, session: SessionId
    ) -> AsyncIterator[MemoryObjectReceiveStream[CallEvent]]:
        """A stream of the session's events while the context is open."""
        send, receive = anyio.create_memory_object_stream[CallEvent](EVENT_BUFFER)
        self.subscribers.setdefault(session, []).append(send)
        self._ctx.subscribed.add(session)
        try:
            async with receive:
                yield receive
        finally:
            _remove(self.subscribers, session, send)
            self._forget_if_unheard(session)
            send.close()

    def add_callback(
        self, session: SessionId, callback: Callable[[CallEvent], object]
    ) -> Callable[[], None]:
        """Call ``callback`` with each of the session's events; returns what stops it."""
        self.callbacks.setdefault(session, []).append(callback)
        self._ctx.subscribed.add(session)
        return _Unsubscribe(self, session, callback)

    def remove_callback(self, session: SessionId, callback: Callable[[CallEvent], object]) -> None:
        _remove(self.callbacks, session, callback)
        self._forget_if_unheard(session)

    def _forget_if_unheard(self, session: SessionId) -> None:
        """Nobody listens to the session any more: ticks stop recording its events."""
        if session not in self.subscribers and session not in self.callbacks:
            self._ctx.subscribed.discard(session)

    def deliver(self, session: SessionId, events: Sequence[CallEvent]) -> None:
        """Push the events into the session's streams, then call its callbacks with each."""
        for stream in self.subscribers.get(session, ()):
            for event in events:
                try:
                    stream.send_nowait(event)
                except anyio.WouldBlock:
                    self.events_dropped += 1
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    break  # the subscriber stopped reading; its context removes it
        for callback in tuple(self.callbacks.get(session, ())):
            for event in events:
                try:
                    callback(event)
                except (KeyboardInterrupt, SystemExit):
                    raise
                except BaseException as error:  # a listener's bug stays its own
                    self.failures += 1
                    self._ctx.log.warning(
                        "call_event_listener.failed",
                        session_id=session,
                        error=f"{type(error).__name__}: {error}",
                    )

    def subscriber_count(self) -> int:
        return sum(len(streams) for streams in self.subscribers.values())

    def close(self) -> None:
        """End every subscriber's stream (the runtime closed)."""
        for streams in self.subscribers.values():
            for stream in streams:
                stream.close()


class _Unsubscribe:
    """What ``add_callback`` returns: one object where a closure was five (its function,
    cells and their tuple), for every session's listener the collector visits."""

    __slots__ = ("_callback", "_listeners", "_session")

    def __init__(
        self, listeners: Listeners, session: SessionId, callback: Callable[[CallEvent], object]
    ) -> None:
        self._listeners = listeners
        self._session = session
        self._callback = callback

    def __call__(self) -> None:
        self._listeners.remove_callback(self._session, self._callback)


def _remove(registry: dict[SessionId, list[_L]], session: SessionId, item: _L) -> None:
    """Take ``item`` off the session's list, and the list off the registry once empty."""
    items = registry.get(session)
    if items is None:
        return
    if item in items:
        items.remove(item)
    if not items:
        del registry[session]
