"""A session page's changes as numbered events: coalesced, and replayable by id.

The session and the runtime only mark the feed dirty (``Session.on_change``,
``Runtime.on_call_events``: no task, no polling). A page's stream then
publishes: it draws the page state (``page_state``) and turns what differs
from the last published state into events, one per changed part and one per
changed call. The first change after a quiet spell goes out at once; changes
closer together than ``min_interval`` are folded into one publication, so a
call flooding progress costs a few events a second. One waiting stream
publishes while the others wait for its news, told in groups of pages with
the event loop free between them (a change on a page open 500 times is
500 sends: one burst would stall every session's tick), and each event is
encoded once for every stream. The newest ``keep`` events stay, so a page that
reconnects with ``Last-Event-ID`` gets what it missed; one further behind
gets a snapshot.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
import anyio.lowlevel

from agentos import Runtime, Session
from agentos._ui.web.view import page_state
from components import JsonObject

MIN_INTERVAL = 0.2
"""Seconds between two publications of one page (a few updates a second, coalesced)."""
KEEP = 1_000
"""Events kept for pages that reconnect."""
NEWS_GROUPS = 50
"""Waiting pages are told of a publication in this many groups, one per loop iteration."""
_QUIET_FIELDS = frozenset({"elapsed"})
"""Widget fields that change with the clock alone: they do not make a call's event."""


@dataclass(frozen=True, slots=True)
class PageEvent:
    """One change of the page: ``kind`` is ``status``, ``chat``, ``call``, ``context`` or
    ``errors`` (``snapshot``: the whole page); ``frame`` is it as a server-sent event."""

    id: int
    kind: str
    data: JsonObject
    frame: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        lines = f"id: {self.id}\nevent: {self.kind}\ndata: {json.dumps(self.data)}\n\n"
        object.__setattr__(self, "frame", lines.encode())


class PageFeed:
    """The changes of one session's page, for every page that shows it."""

    def __init__(
        self,
        session: Session,
        runtime: Runtime,
        *,
        min_interval: float = MIN_INTERVAL,
        keep: int = KEEP,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.session = session
        self._runtime = runtime
        self._min_interval = min_interval
        self._wall = wall
        self._events: deque[PageEvent] = deque(maxlen=keep)
        self.last_id = 0
        self._state = self.state()
        self._published_at = -float("inf")
        self._dirty = anyio.Event()
        self._news = [anyio.Event() for _ in range(NEWS_GROUPS)]
        """Set (and replaced), group by group, each time the publishing stream is done."""
        self._waiters = 0
        self._publishing = False
        self.ended = False
        """The server is stopping: streams end (with a last chunk, not cut)."""
        self._stops = [
            session.on_change(self._mark),
            runtime.on_call_events(session.session_id, lambda event: self._mark()),
        ]

    def state(self) -> JsonObject:
        """The page as it is now."""
        return page_state(self.session, self._runtime, self._wall())

    def snapshot(self) -> PageEvent:
        """The whole page as of the newest event (a page starts from it)."""
        if self._dirty.is_set():
            self.publish()
        return PageEvent(self.last_id, "snapshot", self._state)

    def since(self, seen: int) -> list[PageEvent] | None:
        """The events after ``seen``; None when some of them are no longer kept."""
        if seen > self.last_id:
            return None
        missed = self.last_id - seen
        if missed > len(self._events):
            return None
        return list(self._events)[len(self._events) - missed :] if missed else []

    async def after(self, seen: int) -> list[PageEvent] | None:
        """The next events after ``seen``, once there are some (None: take a snapshot).

        One waiting stream publishes (after a change, and no sooner than
        ``min_interval`` after the last publication); the others wait for its news.
        """
        while self.last_id <= seen:
            if self.ended:
                return []
            if self._publishing:
                self._waiters += 1
                await self._news[self._waiters % NEWS_GROUPS].wait()
                continue
            self._publishing = True
            told = False
            try:
                await self._dirty.wait()
                wait = self._published_at + self._min_interval - time.monotonic()
                if wait > 0:
                    await anyio.sleep(wait)
                if self._dirty.is_set():
                    self.publish()
                self._publishing = False
                for group in range(NEWS_GROUPS):
                    self._tell(group)
                    await anyio.lowlevel.checkpoint()
                told = True
            finally:  # also when this page goes away: another takes over
                self._publishing = False
                if not told:
                    for group in range(NEWS_GROUPS):
                        self._tell(group)
        return self.since(seen)

    def _tell(self, group: int) -> None:
        news, self._news[group] = self._news[group], anyio.Event()
        news.set()

    def publish(self) -> None:
        """Draw the page and number what changed since the last publication."""
        self._dirty = anyio.Event()
        self._published_at = time.monotonic()
        old, new = self._state, self.state()
        self._state = new
        for part in ("status", "chat", "context", "errors"):
            if old[part] != new[part]:
                self._add(part, {part: new[part]})
        old_calls, new_calls = old["calls"], new["calls"]
        assert isinstance(old_calls, dict) and isinstance(new_calls, dict)
        for call_id, widget in new_calls.items():
            before = old_calls.get(call_id)
            if not isinstance(before, dict) or _moved(before, widget):
                self._add("call", {"call": widget})

    def end(self) -> None:
        """Wake every waiting stream to end: the server is stopping."""
        self.ended = True
        self._dirty.set()
        for group in range(NEWS_GROUPS):
            self._tell(group)

    def close(self) -> None:
        for stop in self._stops:
            stop()

    def _add(self, kind: str, data: JsonObject) -> None:
        self.last_id += 1
        self._events.append(PageEvent(self.last_id, kind, data))

    def _mark(self) -> None:
        self._dirty.set()


def _moved(before: JsonObject, after: object) -> bool:
    assert isinstance(after, dict)
    return any(before.get(k) != v for k, v in after.items() if k not in _QUIET_FIELDS)
