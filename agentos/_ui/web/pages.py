"""The sessions the pages show, each live from this host or read from the store.

Looking never changes anything: a page of a session this host does not run
reads it from the store (no lease, no resume) and shows it read only, with
who holds it; only ``open`` (the page's Open button, a POST) resumes it here,
and ``take_over`` (its Take over button) takes it from the process holding it.
While its pages wait, each session is checked every ``POLL_SECONDS``: one
another host took over, one unloaded here, one that ended elsewhere shows
within a second, and Open takes it back once nobody holds it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from agentos import AgentOSError
from agentos import Host
from agentos import Runtime
from agentos import Session
from agentos import SessionConflictError
from agentos import SessionInUseError
from agentos import SessionStatus
from agentos import StoreError
from agentos import UnknownSessionError
from agentos import UsageError
from agentos._ui.web.feed import PageFeed
from agentos._ui.web.view import page_state
from agentos._ui.web.view import stored_page_state
from agentos.stores import CallView
from agentos.stores import SessionCalls
from agentos.stores import SessionSummary
from agentos.stores import session_calls
from agentos.stores import short_id
from components import JsonObject


class WebError(Exception):
    """An error the API answers with ``{"error": {"code", "message"}}`` and ``status``."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def answer_for(error: AgentOSError) -> WebError:
    """The API's answer to an error agentos raised for a request: its message, with a
    status that says whose the problem is (a lookup: 404; what this server or the
    session's state refuses: 409; the store: 503)."""
    message = str(error) or type(error).__name__
    if isinstance(error, LookupError):
        return WebError(404, "not_found", message)
    if isinstance(error, SessionInUseError):
        return WebError(409, "session_in_use", f"{error.in_use}: wait for it to let go")
    if isinstance(error, SessionConflictError):
        return WebError(409, "session_conflict", message)
    if isinstance(error, UsageError):
        return WebError(409, "cannot_run", message)
    if isinstance(error, StoreError):
        return WebError(503, "store_error", message)
    return WebError(500, "failed", message)


class Watch:
    """One session as its pages see it: the ``Session`` while this host runs it, else what
    the store says; ``feed`` is its pages' events."""

    def __init__(
        self, session_id: str, host: Host, runtime: Runtime, wall: Callable[[], float]
    ) -> None:
        self.session_id = session_id
        self._host, self._runtime, self._wall = host, runtime, wall
        self.live: Session | None = None
        self._stored: SessionCalls | None = None
        self.holder: str | None = None
        self._stops: list[Callable[[], None]] = []
        self._forming = False
        """The session's reply was forming at its last change."""
        self.feed = PageFeed(self._draw, refresh=self.refresh)

    async def refresh(self) -> bool:
        """Look again: who holds the session, and what the store says if it is not ours;
        marks the feed when something moved. False: neither this host nor the store has it."""
        holders = await self._host.holders()
        holder = holders.get(self.session_id)
        try:
            loaded: Session | None = self._host.get(self.session_id)
        except UnknownSessionError:
            loaded = None
        live = loaded if holder == self._host.holder else None
        moved = holder != self.holder or live is not self.live
        self.holder = holder
        if live is not self.live:
            self._follow(live)
        if live is None:
            stored = await self._read(holders)
            if stored is None:
                return False
            moved = moved or stored != self._stored
            self._stored = stored
        if moved:
            self.feed.mark()
        return True

    async def _read(self, holders: dict[str, str]) -> SessionCalls | None:
        store = self._host.store
        if store is None:
            return None
        return await session_calls(store, self.session_id, holders=holders)

    def _follow(self, session: Session | None) -> None:
        """Draw from ``session`` (None: from the store), told of its changes."""
        self.close()
        self.live = session
        if session is not None:
            self._stops = [
                session.on_change(lambda: self._changed(session)),
                self._runtime.on_call_events(self.session_id, lambda event: self.feed.mark()),
            ]

    def _changed(self, session: Session) -> None:
        """A change of the session; a reply that starts to form goes out at once (its
        growth is paced as every change is)."""
        forming = session.streaming is not None and bool(session.streaming.text)
        self.feed.mark(at_once=forming and not self._forming)
        self._forming = forming

    def _draw(self) -> JsonObject:
        now = self._wall()
        if self.live is not None:
            state = page_state(self.live, self._runtime, now)
        elif self._stored is not None:
            state = stored_page_state(self._stored, now)
        else:
            state = {"session_id": self.session_id, "title": "", "status": "", "chat": []}
            state["status_note"] = None
            state |= {"calls": {}, "context": "", "errors": [], "streaming": None}
        open_here = self.live is not None and not self.live.ended
        changed = None if open_here or self._stored is None else self._stored.session.updated_at
        state["access"] = {
            "open": open_here,
            "holder": self.holder,
            "here": self._host.holder,
            "changed_at": changed,  # when the store last changed, for a page that only reads
        }
        return state

    def stored_call(self, call_id: str) -> CallView | None:
        """The call as the store knows it (for a session this host does not run)."""
        calls = () if self._stored is None else self._stored.calls
        found = (c for c in calls if call_id in (c.provider_call_id, c.call_id))
        return next(found, None)

    def close(self) -> None:
        for stop in self._stops:
            stop()
        self._stops = []


class Pages:
    """The sessions pages look at, by id (a ``Watch`` each, made on first look)."""

    def __init__(self, host: Host, runtime: Runtime, wall: Callable[[], float] | None = None):
        """``wall``: now in epoch seconds, for the calls' times [default: the runtime's
        clock, which stamps them]."""
        self.host, self.runtime = host, runtime
        self.wall = wall or runtime.clock.wall
        self._watches: dict[str, Watch] = {}

    async def watch(self, session_id: str) -> Watch:
        """The session's watch, looked at again now; 404 when nobody knows the session."""
        watch = self._watches.get(session_id)
        if watch is None:
            watch = Watch(session_id, self.host, self.runtime, self.wall)
        if not await watch.refresh():
            watch.close()
            self._watches.pop(session_id, None)
            raise WebError(404, "unknown_session", f"no session {session_id!r}")
        self._watches[session_id] = watch
        return watch

    async def running(self, session_id: str) -> Session:
        """The session, if this host runs it (posts and cancels need that); 409 if it does not."""
        watch = await self.watch(session_id)
        if watch.live is None:
            held = "nobody runs it" if watch.holder is None else f"{watch.holder} holds it"
            raise WebError(409, "not_open", f"session {session_id!r} is not open here ({held})")
        return watch.live

    async def writable(self, session_id: str) -> Session:
        """The session to post to: run here, or opened here from the store when nobody runs
        it (one this host lost to a process that has let it go since, say); 409 while
        another process holds it."""
        watch = await self.watch(session_id)
        if watch.live is None and watch.holder is None:
            watch = await self.open(session_id)
        return await self.running(session_id) if watch.live is None else watch.live

    async def open(self, session_id: str) -> Watch:
        """Run the session here: resumed from the store unless this host runs it already."""
        try:
            await self.host.open(session_id)
        except UnknownSessionError:
            raise WebError(404, "unknown_session", f"no session {session_id!r}") from None
        except SessionInUseError as error:
            message = f"{error.in_use}: wait for it to let go, or take it over"
            raise WebError(409, "session_in_use", message) from None
        return await self.watch(session_id)

    async def take_over(self, session_id: str) -> Watch:
        """Run the session here even while another process holds it: its lease is taken
        (``Host.resume(..., steal=True)``), and that process stops writing the session, so
        nothing written here is lost. A session this host runs already stays as it is."""
        if self.host.store is None:  # no store: no other process can hold it
            return await self.open(session_id)
        try:
            await self.host.resume(session_id, steal=True)
        except UnknownSessionError:
            raise WebError(404, "unknown_session", f"no session {session_id!r}") from None
        except UsageError as error:  # found before the lease is taken: the holder keeps it
            message = f"this server cannot run session {session_id!r}: {error}"
            raise WebError(409, "cannot_run", f"{message}. Nothing was taken over.") from None
        return await self.watch(session_id)

    async def listing(self) -> list[JsonObject]:
        """Every session: the store's, and those only this host runs, newest activity last."""
        now = time.time()
        return [list_row(summary, now) for summary in await self.host.sessions()]

    async def rename(self, session_id: str, title: str) -> JsonObject:
        """Name the session (run here, or only stored: it is not resumed) and return its row
        in the list; its pages show the name at once. 400 for a title too long, 404 for a
        session nobody knows."""
        try:
            summary = await self.host.rename(session_id, title)
        except UnknownSessionError:
            raise WebError(404, "unknown_session", f"no session {session_id!r}") from None
        except ValueError as error:
            raise WebError(400, "bad_request", str(error)) from None
        watch = self._watches.get(session_id)
        if watch is not None:
            await watch.refresh()  # one drawn from the store reads it again
            watch.feed.mark(at_once=True)
        return list_row(summary, time.time())

    def end_streams(self) -> None:
        """The server is stopping: every open stream ends, with its last chunk."""
        for watch in self._watches.values():
            watch.feed.end()

    def close(self) -> None:
        for watch in self._watches.values():
            watch.close()
        self._watches.clear()


def list_row(summary: SessionSummary, now: float) -> JsonObject:
    """A session's row in the list (``now``: the time of one never stored)."""
    return {
        "session_id": summary.session_id,
        "short_id": short_id(summary.session_id),
        "agent": summary.agent,
        "status": summary.status.value,
        "status_note": summary.status_note,
        "updated_at": now if summary.updated_at is None else summary.updated_at,
        "running_calls": summary.running_calls,
        "asking": summary.asking,
        "live": summary.live,
        "title": summary.title,
        "doing": doing(summary),
    }


_BUSY = (SessionStatus.IDLE, SessionStatus.REQUESTING, SessionStatus.WAITING)
"""Statuses whose running calls say best what the session does (a deferred call's
session waits for an answer from outside; a stopped one is stopped)."""

_DOING = {
    SessionStatus.IDLE: "waiting for you",
    SessionStatus.REQUESTING: "thinking",
    SessionStatus.WAITING: "waiting for its calls",
    SessionStatus.WAITING_EXTERNAL: "waiting for an answer from outside",
    SessionStatus.FAILED: "failed",
    SessionStatus.STOPPED: "stopped",
}


def doing(summary: SessionSummary) -> str:
    """What a session is doing, in the list's words: a question waiting for the person
    first, then its running calls."""
    if summary.asking:
        calls, one = summary.asking, summary.asking == 1
        whose = "your" if summary.live else "an"  # one another process holds is answered there
        return f"{calls} call{'' if one else 's'} need{'s' if one else ''} {whose} answer"
    if summary.running_calls and summary.status in _BUSY:
        calls = summary.running_calls
        return f"{calls} call{'' if calls == 1 else 's'} running"
    said = _DOING.get(summary.status, summary.status.value)
    return said if summary.status_note is None else f"{said} · {summary.status_note}"
