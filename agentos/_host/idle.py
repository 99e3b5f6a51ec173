"""Idle unloading: a host unloads sessions that have been at rest for a while.

A session at rest is stopped, or idle with no call whose outcome the model
has not heard. Time is the runtime's clock, so a ``ManualClock`` drives it in
tests; a failed unload is tried again one period later, not at once.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Awaitable
from collections.abc import Callable

import anyio

from agentos._errors import SessionBusyError
from agentos._errors import StoreError
from agentos._errors import UnknownSessionError
from agentos._host.registry import SessionRegistry
from agentos._kernel.clock import Clock
from agentos._sessions.session import Session
from agentos._turns.events import SessionStatus


def unload_refusal(session: Session, *, has_store: bool) -> str | None:
    """Why unloading the session now would lose work (None: it would not)."""
    if session.status is SessionStatus.WAITING_EXTERNAL and has_store:
        return None  # only deferred calls left: their tokens are in the store
    if not session.at_rest:
        return f"is {session.status.value}"
    if not has_store and session.outstanding():
        return "has calls whose outcome the model has not heard, and the host has no store"
    return None


def idle_until(session: Session, after: float) -> float | None:
    """When the idle timeout unloads the session (None: it is in use)."""
    if session.status is SessionStatus.STOPPED or (session.idle and not session.outstanding()):
        return session.changed_at + after
    return None


async def unload_idle(
    sessions: SessionRegistry,
    unload: Callable[[str], Awaitable[None]],
    clock: Clock,
    after: float,
) -> None:
    """Unload the loaded ``sessions`` (as they change) at rest for ``after`` seconds."""
    woken = anyio.Event()

    def wake() -> None:
        woken.set()

    retry_at: dict[str, float] = {}
    forget_clock = clock.on_advance(wake)
    try:
        while True:
            woken = anyio.Event()
            now = clock.monotonic()
            due = now + after
            ready = []
            for session in sessions.loaded():
                at = idle_until(session, after)
                if at is None:
                    continue
                at = max(at, retry_at.get(session.session_id, 0.0))
                if at <= now:
                    ready.append(session)
                else:
                    due = min(due, at)
            for session in ready:  # each unload awaits: check again that it is idle
                session_id = session.session_id
                at = idle_until(session, after)
                if at is None or at > clock.monotonic() or sessions.find(session_id) is not session:
                    continue
                with contextlib.suppress(SessionBusyError, StoreError, UnknownSessionError):
                    retry_at[session_id] = now + after  # if it fails, not at once again
                    await unload(session_id)
            for gone in retry_at.keys() - sessions.loaded_ids():
                del retry_at[gone]
            budget = clock.sleep_budget(due)
            with anyio.move_on_after(math.inf if budget is None else budget):
                await woken.wait()
    finally:
        forget_clock()
