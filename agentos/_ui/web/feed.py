"""A session page's changes as numbered events: coalesced, replayable by id, and small.

Whoever knows of a change only marks the feed (``mark``: the session's
``on_change`` and the runtime's call events, no task); while pages wait, one
of them also asks ``refresh`` every ``poll`` seconds (who holds the session
now, what the store says of one held elsewhere), which marks it when
something moved. A page's stream then publishes: it draws the page state
(``draw``) and turns what differs from the last published state into events:
each changed part, each changed call, and of the chat and the context only
what changed (``chat_delta``, ``context_delta``), so an event costs what
changed, not the whole page. The first change after a quiet spell goes out at
once; changes closer together than ``min_interval`` are folded into one
publication, so a call flooding progress costs a few events a second. One
waiting stream publishes while the others wait for its news, told in groups
of pages with the event loop free between them (a change on a page open 500
times is 500 sends: one burst would stall every session's tick), and each
event is encoded once for every stream, and so is the snapshot pages start
from (one per version of the page, shared). The newest ``keep`` events stay, so
a page that reconnects with ``Last-Event-ID`` gets what it missed; one
further behind gets a snapshot.
"""

from __future__ import annotations

import json
import math
import time
from collections import deque
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

import anyio
import anyio.lowlevel

from agentos._ui.web.limits import PIECE_BYTES
from components import Json
from components import JsonObject

MIN_INTERVAL = 0.2
"""Seconds between two publications of one page (a few updates a second, coalesced)."""
POLL_SECONDS = 0.5
"""Seconds between two ``refresh`` calls while pages wait: a session taken over, unloaded or
ended elsewhere shows within a second."""
KEEP = 1_000
"""Events kept for pages that reconnect."""
NEWS_GROUPS = 50
"""Waiting pages are told of a publication in this many groups, one per loop iteration."""
_WHOLE_PARTS = ("title", "status", "status_note", "access", "errors", "streaming")
"""Parts of the page small enough to send whole when they change."""
_QUIET_FIELDS = frozenset({"elapsed"})
"""Widget fields that change with the clock alone: they do not make a call's event."""


@dataclass(frozen=True, slots=True)
class PageEvent:
    """One change of the page: ``kind`` is ``title``, ``status``, ``status_note`` (why the
    status is what it is, if that needs saying), ``access``, ``errors``,
    ``streaming`` (the reply as it forms), ``call``, ``chat`` or ``context`` (``snapshot``:
    the whole page); ``frame`` is it as a server-sent event."""

    id: int
    kind: str
    data: JsonObject
    frame: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        lines = f"id: {self.id}\nevent: {self.kind}\ndata: {json.dumps(self.data)}\n\n"
        object.__setattr__(self, "frame", lines.encode())

    def data_json(self) -> memoryview:
        """``data`` as JSON, read from ``frame`` (not encoded again)."""
        return memoryview(self.frame)[len(f"id: {self.id}\nevent: {self.kind}\ndata: ") : -2]


def chat_delta(old: Sequence[Json], new: Sequence[Json]) -> JsonObject | None:
    """The chat event from ``old`` to ``new``: the page keeps its first ``chat_from`` entries
    and puts ``chat`` after them (None: nothing changed)."""
    same = _same_prefix(old, new)
    if same == len(old) == len(new):
        return None
    return {"chat_from": same, "chat": list(new[same:])}


def context_delta(old: str, new: str) -> JsonObject | None:
    """The context event from ``old`` to ``new``: the page keeps its first ``context_from``
    lines and puts the lines of ``context_tail`` after them (None: nothing changed). Counted
    in lines, not characters: the page's script counts characters differently."""
    if old == new:
        return None
    old_lines, new_lines = old.split("\n"), new.split("\n")
    same = _same_prefix(old_lines, new_lines)
    return {"context_from": same, "context_tail": list[Json](new_lines[same:])}


def _same_prefix(old: Sequence[object], new: Sequence[object]) -> int:
    """How many leading items ``old`` and ``new`` share."""
    for index, (before, after) in enumerate(zip(old, new, strict=False)):
        if before != after:
            return index
    return min(len(old), len(new))


class PageFeed:
    """The changes of one session's page, for every page that shows it."""

    def __init__(
        self,
        draw: Callable[[], JsonObject],
        *,
        refresh: Callable[[], Awaitable[object]] | None = None,
        poll: float = POLL_SECONDS,
        min_interval: float = MIN_INTERVAL,
        keep: int = KEEP,
    ) -> None:
        self._draw = draw
        self._refresh = refresh
        self._poll = poll
        self._min_interval = min_interval
        self._events: deque[PageEvent] = deque(maxlen=keep)
        self._chunk: tuple[int, bytes, int] | None = None
        """The last chunk ``frames_since`` made: from which id, its bytes, up to which id."""
        self._snapshot: tuple[JsonObject, PageEvent] | None = None
        """The last snapshot made, and the state it shows: pages starting together share it."""
        self.last_id = 0
        self._state = draw()
        self._published_at = -float("inf")
        self._refreshed_at = -float("inf")
        self._dirty = False
        self._wake = anyio.Event()
        """Set by ``mark`` and by each publication: the publishing stream looks again."""
        self._news = [anyio.Event() for _ in range(NEWS_GROUPS)]
        """Set (and replaced), group by group, each time the publishing stream is done."""
        self._waiters = 0
        self._waiting = [0] * NEWS_GROUPS
        """Streams waiting in each group of ``_news``."""
        self._publishing = False
        self.ended = False
        """The server is stopping: streams end (with a last chunk, not cut)."""

    def state(self) -> JsonObject:
        """The page as of the newest event."""
        if self._dirty:
            self.publish(paced=False)
        return self._state

    def snapshot(self) -> PageEvent:
        """The whole page as of the newest event (a page starts from it), encoded once for
        every page that starts from this version of it."""
        state = self.state()
        if self._snapshot is None or self._snapshot[0] is not state:
            self._snapshot = (state, PageEvent(self.last_id, "snapshot", state))
        return self._snapshot[1]

    def since(self, seen: int) -> list[PageEvent] | None:
        """The events after ``seen``; None when some of them are no longer kept."""
        if seen > self.last_id:
            return None
        missed = self.last_id - seen
        if missed > len(self._events):
            return None
        return list(self._events)[len(self._events) - missed :] if missed else []

    def frames_since(self, seen: int) -> tuple[list[bytes], int] | None:
        """The events after ``seen`` as frames to send, and the id they end at (None: take a
        snapshot). A publication's few small events are one chunk, shared by the pages that
        saw the same events (one send per publication, not one per event); a longer
        catch-up is the kept frames themselves, not a copy of them."""
        if self._chunk is not None and self._chunk[0] == seen and self._chunk[2] == self.last_id:
            return [self._chunk[1]], self.last_id
        events = self.since(seen)
        if events is None:
            return None
        frames = [event.frame for event in events]
        if sum(len(frame) for frame in frames) > PIECE_BYTES:
            return frames, self.last_id
        chunk = b"".join(frames)
        self._chunk = (seen, chunk, self.last_id)
        return [chunk], self.last_id

    async def after(self, seen: int) -> None:
        """Return once there are events after ``seen`` (or the server is stopping).

        One waiting stream publishes (after a change, and no sooner than
        ``min_interval`` after the last publication); the others wait for its news.
        """
        while self.last_id <= seen and not self.ended:
            if self._publishing:
                self._waiters += 1
                group = self._waiters % NEWS_GROUPS
                self._waiting[group] += 1
                try:
                    await self._news[group].wait()
                finally:
                    self._waiting[group] -= 1
                continue
            self._publishing = True
            try:
                await self._until_news(seen)
                wait = self._published_at + self._min_interval - time.monotonic()
                if self._dirty and wait > 0:
                    await anyio.sleep(wait)
                if self._dirty:
                    self.publish()
            except BaseException:  # this page went away: a waiting one takes over
                self._publishing = False
                for group in range(NEWS_GROUPS):
                    self._tell(group)
                raise
            self._publishing = False  # from here on another page may publish meanwhile
            await self._tell_all()

    async def _tell_all(self) -> None:
        """Wake the waiting pages, group by group with the loop free between (all at once
        if this page goes away meanwhile); a group nobody waits in costs no loop turn, so a
        page alone sends its news at once."""
        told = 0
        try:
            while told < NEWS_GROUPS:
                waiting = self._waiting[told]
                self._tell(told)
                told += 1
                if waiting:
                    await anyio.lowlevel.checkpoint()
        finally:
            for group in range(told, NEWS_GROUPS):
                self._tell(group)

    async def _until_news(self, seen: int) -> None:
        """Wait for a mark or a publication after ``seen``, refreshing every ``poll`` seconds."""
        while not (self._dirty or self.last_id > seen or self.ended):
            if self._refresh is not None and time.monotonic() >= self._refreshed_at + self._poll:
                self._refreshed_at = time.monotonic()
                await self._refresh()
                continue
            wake = self._wake
            due = math.inf if self._refresh is None else self._refreshed_at + self._poll
            with anyio.move_on_after(due - time.monotonic()):
                await wake.wait()
            if wake.is_set():
                self._wake = anyio.Event()

    def _tell(self, group: int) -> None:
        news, self._news[group] = self._news[group], anyio.Event()
        news.set()

    def publish(self, *, paced: bool = True) -> None:
        """Draw the page and number what changed since the last publication; ``paced``: the
        next one waits ``min_interval`` (a look publishes unpaced, so the change after it
        still goes out at once)."""
        self._dirty = False
        if paced:
            self._published_at = time.monotonic()
        old, new = self._state, self._draw()
        self._state = new
        for part in _WHOLE_PARTS:
            if old[part] != new[part]:
                self._add(part, {part: new[part]})
        old_calls, new_calls = old["calls"], new["calls"]
        assert isinstance(old_calls, dict) and isinstance(new_calls, dict)
        for call_id, widget in new_calls.items():
            before = old_calls.get(call_id)
            if not isinstance(before, dict) or _moved(before, widget):
                self._add("call", {"call": widget})
        old_chat, new_chat = old["chat"], new["chat"]
        assert isinstance(old_chat, list) and isinstance(new_chat, list)
        chat = chat_delta(old_chat, new_chat)
        if chat is not None:
            self._add("chat", chat)
        context = context_delta(str(old["context"]), str(new["context"]))
        if context is not None:
            self._add("context", context)
        self._wake.set()

    def end(self) -> None:
        """Wake every waiting stream to end: the server is stopping."""
        self.ended = True
        self._wake.set()
        for group in range(NEWS_GROUPS):
            self._tell(group)

    def mark(self, *, at_once: bool = False) -> None:
        """Something the page shows may have changed: the next publication draws it
        (``at_once``: without waiting for ``min_interval``)."""
        self._dirty = True
        if at_once:
            self._published_at = -math.inf
        self._wake.set()

    def _add(self, kind: str, data: JsonObject) -> None:
        self.last_id += 1
        self._events.append(PageEvent(self.last_id, kind, data))


def _moved(before: JsonObject, after: object) -> bool:
    assert isinstance(after, dict)
    return any(before.get(k) != v for k, v in after.items() if k not in _QUIET_FIELDS)
