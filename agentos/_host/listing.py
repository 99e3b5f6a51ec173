"""Listing sessions: the ones a host runs, and the ones only its store holds."""

from __future__ import annotations

from collections.abc import Container
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import replace

from agentos._host.registry import SessionRegistry
from agentos._host.shown import ShownStatus
from agentos._host.shown import shown_session_status
from agentos._host.shown import stored_session_status
from agentos._kernel.runtime import Runtime
from agentos._sessions.session import Session
from agentos._store.protocol import ASKING
from agentos._store.protocol import SessionStore
from agentos._store.protocol import StoredSession
from agentos._turns.events import SessionStatus


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
    """What to call the session (``Session.title``): the name it was given, else the first
    thing the person said (empty: nothing said yet)."""
    status_note: str | None = None
    """Why ``status`` is what it is, when that needs saying (``shown_session_status``):
    ``1 call was running`` for a session stored mid-turn that nobody runs now."""
    asking: int = 0
    """Its running calls that wait for a person's answer (``ctx.ask``): counted by
    ``Host.sessions``, from the runtime for a loaded session, else as the live process
    holding it last mirrored them."""


def loaded_summary(session: Session, runtime: Runtime | None = None) -> SessionSummary:
    """``runtime``: count the session's running calls (on the loop's thread)."""
    running = () if runtime is None else runtime.list_calls(session.session_id, include_final=False)
    return SessionSummary(
        session.session_id,
        session.config.name,
        session.status,
        session.requests,
        session.message_count,
        len(session.errors),
        running_calls=len(running),
        title=session.title,
        asking=sum(1 for call in running if call.question is not None),
    )


def stored_summary(
    stored: StoredSession, shown: ShownStatus | None = None, asking: int = 0
) -> SessionSummary:
    """A session only the store holds; ``shown``: its status as ``stored_session_status``
    gives it (else as stored, or ``stopped`` if this agentos does not know it); ``asking``:
    its calls waiting for an answer, as the process holding it mirrored them."""
    shown = shown or shown_session_status(stored.status, live=True)
    return SessionSummary(
        stored.session_id,
        str(stored.config.get("name", "agent")),
        SessionStatus(shown.status),
        requests=0,
        messages=0,
        errors=0,
        live=False,
        updated_at=stored.updated_at,
        title=stored.shown_title(),
        status_note=shown.note,
        asking=asking,
    )


async def stored_summaries(store: SessionStore, held: Container[str]) -> list[SessionSummary]:
    """Every session the store holds, each with its shown status (``held``: the sessions a
    live process holds, which show their own, and their calls waiting for an answer)."""
    counts = await store.call_counts()
    return [
        stored_summary(
            stored,
            await stored_session_status(store, stored, live=live),
            counts.get(stored.session_id, {}).get(ASKING, 0) if live else 0,
        )
        for stored in await store.list_sessions()
        for live in (stored.session_id in held,)
    ]


def merged(
    loaded: Iterable[SessionSummary], stored: Iterable[SessionSummary]
) -> list[SessionSummary]:
    """Every session once, the loaded one's figures winning, oldest activity first."""
    rows = {summary.session_id: summary for summary in stored}
    for summary in loaded:
        before = rows.get(summary.session_id)
        updated = None if before is None else before.updated_at
        rows[summary.session_id] = replace(summary, updated_at=updated)
    return sorted(rows.values(), key=lambda row: (row.updated_at is None, row.updated_at or 0.0))


async def every_summary(
    sessions: SessionRegistry, store: SessionStore | None, runtime: Runtime
) -> list[SessionSummary]:
    """``Host.sessions``: the loaded sessions (their running calls counted) and those only
    the store holds, each once, oldest activity first."""
    loaded = [loaded_summary(session, runtime) for session in sessions.loaded()]
    if store is None:
        return merged(loaded, [])
    held = await store.live_leases()
    return merged(loaded, await stored_summaries(store, held))
