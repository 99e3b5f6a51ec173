"""Who hears of a session's call events: subscriber streams and ``on_call_events`` callbacks.

The kernel hands each tick's events to ``deliver``, grouped by session. A
subscriber that falls ``EVENT_BUFFER`` events behind loses the newest (they are
counted); a callback that raises is logged and the tick goes on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Sequence
from contextlib import asynccontextmanager
from typing import TypeVar

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream
from anyio.streams.memory import MemoryObjectSendStream

from components import CallEvent
from components import CallEventKind
from components import SessionId
from components import TickContext

EVENT_BUFFER = 10_000
"""Events a subscriber may fall behind by before the newest are dropped (and counted)."""
_L = TypeVar("_L")
_NONE: frozenset[CallEventKind] = frozenset()
_ALL = frozenset(CallEventKind)
_SHARED: dict[frozenset[CallEventKind], frozenset[CallEventKind]] = {}
"""One object for each set of kinds unheard, however many sessions have it."""


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
        self._heard(session)
        try:
            async with receive:
                yield receive
        finally:
            _remove(self.subscribers, session, send)
            self._heard(session)
            send.close()

    def add_callback(
        self,
        session: SessionId,
        callback: Callable[[CallEvent], object],
        kinds: Collection[CallEventKind] | None = None,
    ) -> Callable[[], None]:
        """Call ``callback`` with each of the session's events (of ``kinds`` only, if
        given: a ``ValueError`` names one that is none); returns what stops it."""
        if kinds is not None:
            callback = _Only(callback, _kinds(kinds))
        self.callbacks.setdefault(session, []).append(callback)
        self._heard(session)
        return _Unsubscribe(self, session, callback)

    def remove_callback(self, session: SessionId, callback: Callable[[CallEvent], object]) -> None:
        _remove(self.callbacks, session, callback)
        self._heard(session)

    def _heard(self, session: SessionId) -> None:
        """Keep ``ctx.subscribed`` and ``ctx.unheard`` in step with the session's listeners:
        a tick makes no event that nobody listening wants."""
        ctx = self._ctx
        callbacks = self.callbacks.get(session, ())
        if session not in self.subscribers and not callbacks:
            ctx.subscribed.discard(session)
            ctx.unheard.pop(session, None)
            return
        ctx.subscribed.add(session)
        unheard = _NONE if session in self.subscribers else _ALL
        for callback in callbacks:
            unheard = unheard - callback.kinds if type(callback) is _Only else _NONE
        if unheard:
            ctx.unheard[session] = _SHARED.setdefault(unheard, unheard)
        else:
            ctx.unheard.pop(session, None)

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
        for listener in tuple(self.callbacks.get(session, ())):
            callback, kinds = (
                (listener.callback, listener.kinds) if type(listener) is _Only else (listener, None)
            )
            for event in events:
                if kinds is not None and event.kind not in kinds:
                    continue
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


def _kinds(kinds: Collection[CallEventKind]) -> frozenset[CallEventKind]:
    """``kinds`` as a set of ``CallEventKind`` (a frozen set of them as it is)."""
    if type(kinds) is frozenset and kinds <= _ALL:
        return kinds
    return frozenset(CallEventKind(kind) for kind in kinds)


class _Only:
    """A callback that hears only some kinds of event: the others of its session, which
    another listener asked for, pass it by (``deliver``)."""

    __slots__ = ("callback", "kinds")

    def __init__(
        self, callback: Callable[[CallEvent], object], kinds: frozenset[CallEventKind]
    ) -> None:
        self.callback = callback
        self.kinds = kinds

    def __call__(self, event: CallEvent) -> object:
        return self.callback(event) if event.kind in self.kinds else None


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
