"""Subscriptions to sessions (``resources/subscribe``): a client that subscribed to one of
its sessions' resources hears ``notifications/resources/updated`` when the session
changes (a post, a model reply, a call starting or ending, a stop), and when one of its
calls asks a person or has its question answered (the resource shows the question). Other
progress of a call changes nothing the resource shows, so it tells nobody.

The session's change callback and its call events only mark it changed; one task sends the
notices, so a burst of changes makes one notice per subscriber, and a subscriber whose
connection is gone is forgotten.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
from mcp.server.session import ServerSession

from agentos import CallEvent
from agentos import CallEventKind
from agentos import ProgressKind
from agentos import Session

ASKING = frozenset({ProgressKind.QUESTION, ProgressKind.ANSWER})
"""The progress that changes what a session's resource shows: a question, its answer."""
GONE = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)
"""What sending to a client whose connection closed raises."""
Hear = Callable[[str, Callable[[CallEvent], object]], Callable[[], None]]
"""How a session's call events are heard (``Runtime.on_call_events``)."""


class Watchers:
    """Who subscribed to which session's resource, and the task that tells them."""

    def __init__(self, uri_of: Callable[[str], str], hear: Hear) -> None:
        """``uri_of``: a session's resource; ``hear``: the runtime's ``on_call_events``."""
        self._uri_of = uri_of
        self._hear = hear
        self._peers: dict[str, list[ServerSession]] = {}
        self._stops: dict[str, Callable[[], None]] = {}
        self._changed: set[str] = set()
        self._wake = anyio.Event()

    def subscribe(self, session: Session, peer: ServerSession) -> None:
        """From now on ``peer`` hears when ``session`` changes (once however often asked)."""
        peers = self._peers.setdefault(session.session_id, [])
        if peer not in peers:
            peers.append(peer)
        if session.session_id not in self._stops:
            session_id = session.session_id

            def heard(event: CallEvent) -> None:
                progress = event.progress
                if event.kind is CallEventKind.PROGRESSED and progress and progress.kind in ASKING:
                    self.changed(session_id)

            unchange = session.on_change(lambda: self.changed(session_id))
            unhear = self._hear(session_id, heard)

            def stop() -> None:
                unchange()
                unhear()

            self._stops[session_id] = stop

    def unsubscribe(self, session_id: str, peer: ServerSession) -> None:
        """``peer`` no longer hears of ``session_id`` (nothing if it did not)."""
        peers = self._peers.get(session_id, [])
        if peer in peers:
            peers.remove(peer)
        if not peers:
            self._forget(session_id)

    def changed(self, session_id: str) -> None:
        """Mark ``session_id`` changed: its subscribers hear of it soon."""
        if session_id in self._peers:
            self._changed.add(session_id)
            self._wake.set()

    async def run(self) -> None:
        """Tell the subscribers of each changed session, until cancelled."""
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            changed, self._changed = self._changed, set()
            for session_id in changed:
                for peer in list(self._peers.get(session_id, [])):
                    try:
                        await peer.send_resource_updated(self._uri_of(session_id))
                    except GONE:
                        self.unsubscribe(session_id, peer)

    def _forget(self, session_id: str) -> None:
        self._peers.pop(session_id, None)
        stop = self._stops.pop(session_id, None)
        if stop is not None:
            stop()
