"""The sessions a host has loaded: each with its task, and what its resume found.

One object owns these maps, so the host's parts (sub-agents, idle unloading, renaming,
listing) read them through named operations instead of the host's private dicts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from agentos._errors import UnknownSessionError
from agentos._host.maker import SessionTask
from agentos._host.resume import Restored
from agentos._sessions.session import Session
from agentos._turns.history import HistoryCall


class SessionRegistry:
    """The loaded sessions by id, the tasks of those running, the news each resume found
    until the model hears it, and the resumes under way."""

    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}
        self._tasks: dict[str, SessionTask] = {}
        self._restored: dict[str, Restored] = {}
        """What each resume found, until ``catch_up`` tells the model."""
        self._resuming: dict[str, anyio.Event] = {}
        """Sessions a resume is bringing back (it awaits the store) -> set once done."""

    def add(self, session: Session, task: SessionTask) -> None:
        self._sessions[session.session_id] = session
        self._tasks[session.session_id] = task

    def find(self, session_id: str) -> Session | None:
        return self._sessions.get(session_id)

    def get(self, session_id: str) -> Session:
        """The loaded session; ``UnknownSessionError`` if it is not loaded here."""
        session = self._sessions.get(session_id)
        if session is None:
            raise UnknownSessionError(session_id)
        return session

    def task_of(self, session_id: str) -> SessionTask | None:
        """The loaded session's task while it runs (None once it has ended)."""
        return self._tasks.get(session_id)

    def ended(self, task: SessionTask) -> None:
        """``task`` has ended: an ended session keeps no task (nor its scope and event)."""
        if self._tasks.get(task.session_id) is task:
            del self._tasks[task.session_id]

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._sessions

    def loaded(self) -> list[Session]:
        """The loaded sessions, as they are now (a copy: unloading one changes no loop)."""
        return list(self._sessions.values())

    def loaded_ids(self) -> list[str]:
        """The loaded sessions' ids, in the order they were loaded."""
        return list(self._sessions)

    def remove(self, session: Session) -> bool:
        """Forget ``session`` and what its resume found; False if another took its place
        (or it was gone already: another unload finished first)."""
        session_id = session.session_id
        if self._sessions.get(session_id) is not session:
            return False
        del self._sessions[session_id]
        self._tasks.pop(session_id, None)
        self._restored.pop(session_id, None)
        return True

    def keep_restored(self, session_id: str, restored: Restored) -> None:
        self._restored[session_id] = restored

    def take_restored(self, session_id: str) -> Restored | None:
        """What the session's resume found, once: ``catch_up`` tells the model of it."""
        return self._restored.pop(session_id, None)

    @asynccontextmanager
    async def resuming(self, session_id: str) -> AsyncIterator[None]:
        """One resume of a session at a time: a second waits for the first to finish."""
        while session_id in self._resuming:
            await self._resuming[session_id].wait()
        self._resuming[session_id] = done = anyio.Event()
        try:
            yield
        finally:
            del self._resuming[session_id]
            done.set()

    def find_call(self, session_id: str, call_id: str) -> HistoryCall | None:
        """The ``HistoryLookup`` the toolbox asks: what a session's history says of a call."""
        session = self._sessions.get(session_id)
        return None if session is None else session.calls.find_call(session_id, call_id)
