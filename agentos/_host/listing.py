"""Listing sessions: the ones a host runs, and the ones only its store holds."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from agentos._board.data import BoardAuthor
from agentos._kernel.runtime import Runtime
from agentos._model.messages import blocks_of, text_of
from agentos._sessions.session import Session
from agentos._store.protocol import StoredSession
from agentos._turns.events import SessionStatus

TITLE_CHARS = 80
"""A session's title is at most this long (its first message, cut)."""


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One session in a listing. ``live``: this host runs it; else only the store holds it,
    and ``requests``, ``messages``, ``errors`` and ``running_calls`` are 0."""

    session_id: str
    agent: str
    status: SessionStatus
    requests: int
    messages: int
    errors: int
    live: bool = True
    running_calls: int = 0
    """Calls not yet final, counted by ``Host.sessions`` (``Host.list`` reads no runtime)."""
    updated_at: float | None = None
    """When the store last wrote it (None: never stored)."""
    title: str = ""
    """The first thing the person said, as a name for the session (empty: nothing yet, or
    only the store holds it)."""


def loaded_summary(session: Session, runtime: Runtime | None = None) -> SessionSummary:
    """``runtime``: count the session's running calls (on the loop's thread)."""
    running = () if runtime is None else runtime.list_calls(session.session_id, include_final=False)
    return SessionSummary(
        session.session_id,
        session.config.name,
        session.status,
        session.requests,
        len(session.history),
        len(session.errors),
        running_calls=len(running),
        title=_first_words(session),
    )


def _first_words(session: Session) -> str:
    """The person's first message, on one line: read off the board or the history, never
    the runtime (``Host.list`` answers from any thread)."""
    board = session.board
    if board is not None:
        nodes = list(board.nodes.values())  # a copy: the loop may add nodes meanwhile
        posts = [node.text for node in nodes if node.author is BoardAuthor.USER]
    else:
        user = [message for message in list(session.history) if message.get("role") == "user"]
        posts = [" ".join(text_of([block]) for block in blocks_of(message)) for message in user]
    said = next((text for text in posts if text.strip()), None)
    if said is None:
        said = next(iter(session.queued_posts), "")
    words = " ".join(said.split())
    return words if len(words) <= TITLE_CHARS else words[: TITLE_CHARS - 1] + "…"


def stored_summary(stored: StoredSession) -> SessionSummary:
    try:
        status = SessionStatus(stored.status)
    except ValueError:
        status = SessionStatus.STOPPED
    return SessionSummary(
        stored.session_id,
        str(stored.config.get("name", "agent")),
        status,
        requests=0,
        messages=0,
        errors=0,
        live=False,
        updated_at=stored.updated_at,
    )


def merged(
    loaded: Iterable[SessionSummary], stored: Iterable[StoredSession]
) -> list[SessionSummary]:
    """Every session once, the loaded one's figures winning, oldest activity first."""
    rows = {summary.session_id: summary for summary in map(stored_summary, stored)}
    for summary in loaded:
        before = rows.get(summary.session_id)
        updated = None if before is None else before.updated_at
        rows[summary.session_id] = replace(summary, updated_at=updated)
    return sorted(rows.values(), key=lambda row: (row.updated_at is None, row.updated_at or 0.0))
