"""Naming a session: one loaded here, or one only the store holds (not resumed for it)."""

from __future__ import annotations

from dataclasses import replace

from agentos._errors import UnknownSessionError
from agentos._host.listing import SessionSummary
from agentos._host.listing import loaded_summary
from agentos._host.listing import stored_summary
from agentos._host.registry import SessionRegistry
from agentos._host.shown import stored_session_status
from agentos._kernel.runtime import Runtime
from agentos._store.protocol import SessionStore
from agentos._turns.title import session_title


async def rename_session(
    sessions: SessionRegistry,
    store: SessionStore | None,
    runtime: Runtime,
    session_id: str,
    title: str,
) -> SessionSummary:
    """``Host.rename``: a loaded session renames itself (in its store too); a stored one is
    renamed in the store, or, if it was opened meanwhile from its old row, as loaded."""
    name = session_title(title)  # a bad title is refused before anything is looked up
    session = sessions.find(session_id)
    if session is None:
        stored = None if store is None else await store.load_session(session_id)
        if store is None or stored is None:
            raise UnknownSessionError(session_id)
        await store.set_title(session_id, name)
        session = sessions.find(session_id)
        if session is None:
            live = session_id in await store.live_leases()
            shown = await stored_session_status(store, stored, live=live)
            return stored_summary(replace(stored, title=name), shown)
    await session.rename(title)
    return loaded_summary(session, runtime)
