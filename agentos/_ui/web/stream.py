"""One page's event stream: what it missed, then each change; a page that stops reading goes.

The stream sends a feed's frames (encoded once for every page) as server-sent
events, in pieces of at most ``PIECE_BYTES``. A page that takes nothing for
``stall_seconds`` while the server has something to send (a tab frozen in the
background, a client gone without closing) is disconnected: the server keeps
at most what the socket holds for it, plus one piece, meanwhile (the frames
themselves are the feed's, shared), and frees that when it lets go. The page's
``EventSource`` reconnects with ``Last-Event-ID`` and catches up (or takes a
snapshot).
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass

import anyio
from sse_starlette import EventSourceResponse
from sse_starlette.sse import SendTimeoutError
from starlette.types import Receive
from starlette.types import Scope
from starlette.types import Send

from agentos._ui.web.feed import PageFeed
from agentos._ui.web.limits import HEARTBEAT_SECONDS
from agentos._ui.web.limits import PIECE_BYTES
from agentos._ui.web.limits import STALL_SECONDS


@dataclass(frozen=True, slots=True)
class StreamStatistics:
    """The app's event streams: open now, and let go for not reading since it started."""

    open: int
    stalled: int


class Streams:
    """Counts the app's streams, and wakes whoever waits for that count to change."""

    def __init__(self, stall_seconds: float | None = STALL_SECONDS) -> None:
        if stall_seconds is not None and not (
            isinstance(stall_seconds, int | float)
            and not isinstance(stall_seconds, bool)
            and 0 < stall_seconds < math.inf
        ):
            raise ValueError(
                f"stall_seconds must be a positive number of seconds or None, got {stall_seconds!r}"
            )
        self.stall_seconds = stall_seconds
        self._open = self._stalled = 0
        self._changed = anyio.Event()

    def statistics(self) -> StreamStatistics:
        return StreamStatistics(self._open, self._stalled)

    async def next_change(self) -> StreamStatistics:
        """Wait until a stream opens or ends; the counts then."""
        await self._changed.wait()
        return self.statistics()

    def response(self, feed: PageFeed, seen: int | None) -> EventSourceResponse:
        """A page's stream of ``feed``, from the event after ``seen`` (None: a snapshot)."""
        return _PageStream(
            self, self._events(feed, seen), ping=HEARTBEAT_SECONDS, send_timeout=self.stall_seconds
        )

    async def _events(self, feed: PageFeed, seen: int | None) -> AsyncIterator[bytes]:
        self._count(opened=1)
        try:
            while not feed.ended:
                frames, seen = _missed(feed, seen)
                for piece in pieces(frames):
                    yield piece
                del frames  # a snapshot no page needs any more is freed while this one waits
                await feed.after(seen)
        finally:
            self._count(opened=-1)

    def let_go(self) -> None:
        """A page stopped reading: its stream ended."""
        self._count(stalled=1)

    def _count(self, *, opened: int = 0, stalled: int = 0) -> None:
        self._open += opened
        self._stalled += stalled
        changed, self._changed = self._changed, anyio.Event()
        changed.set()


def _missed(feed: PageFeed, seen: int | None) -> tuple[list[bytes], int]:
    """The frames a page that saw up to ``seen`` (None: nothing) needs, and the id they end at."""
    batch = None if seen is None else feed.frames_since(seen)
    if batch is not None:
        return batch
    snapshot = feed.snapshot()
    return [snapshot.frame], snapshot.id


def pieces(frames: Sequence[bytes], size: int = PIECE_BYTES) -> Iterator[bytes]:
    """``frames`` as sends of at most ``size`` bytes: small frames together, a big one cut."""
    held: list[bytes] = []
    count = 0
    for frame in filter(None, frames):
        if held and count + len(frame) > size:
            yield held[0] if len(held) == 1 else b"".join(held)
            held, count = [], 0
        if len(frame) <= size:
            held.append(frame)
            count += len(frame)
            continue
        view = memoryview(frame)
        for start in range(0, len(frame), size):
            yield bytes(view[start : start + size])
    if held:
        yield held[0] if len(held) == 1 else b"".join(held)


class _PageStream(EventSourceResponse):
    """sse-starlette's response, ending quietly when the page stopped reading (its send timed
    out): the server then closes the connection."""

    def __init__(self, streams: Streams, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._streams = streams

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        except SendTimeoutError:
            self._streams.let_go()


def event_id(value: str | None) -> int | None:
    """A ``Last-Event-ID`` this server could have sent; anything else means a snapshot."""
    if value is None or not (value.isascii() and value.isdigit()) or len(value) > 18:
        return None
    return int(value)
