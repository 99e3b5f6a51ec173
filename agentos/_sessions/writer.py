"""How a session writes itself to its store: one write at a time, each naming its version.

Each write takes what the machine gives the store (``to_store``) and tells it
what was written (``Committed``), so a step that changes the history while the
write is in flight leaves what it changed dirty for the next write; the version
the session owns (from its lease) is named by every write, so one another host
took over is refused.

The writer is the store's boundary: the trace ids of the session's last traced turn are
their own value here, and travel in the stored ``usage`` (``stored_usage``, ``trace_of``),
where the store keeps them.
"""

from __future__ import annotations

from collections.abc import Mapping

import anyio

from agentos._sessions.spans import SessionSpans
from agentos._sessions.usage import Usage
from agentos._store.protocol import SessionStore
from agentos._store.protocol import TurnCommit
from agentos._turns.events import Committed
from agentos._turns.events import SessionStatus
from agentos._turns.machine import Machine
from agentos._turns.title import first_words


class SessionWriter:
    """A session's store, the version it owns and the status the store has."""

    def __init__(
        self,
        session_id: str,
        store: SessionStore | None,
        version: int | None,
        status: SessionStatus,
        usage: Usage | None = None,
        spans: SessionSpans | None = None,
    ) -> None:
        """``usage``: the session's requests and token counts, written with every commit;
        ``spans``: whose last traced turn's trace and span ids are written with them (linked
        after a restart). The first thing the person said (the title until named) is written
        with each commit until one has carried it."""
        self._usage = usage
        self._spans = spans
        self._said_written = False
        self.session_id = session_id
        self.store = store
        """None: no store, or one another host took over (then nothing more is written)."""
        self._version = version
        self.stored = status
        """The status the store has."""
        self._lock: anyio.Lock | None = None
        """Made at the first write: a session without a store never writes."""

    def behind(self, machine: Machine) -> bool:
        """Whether the store lacks some of the history, or the status."""
        unstored = machine.to_store()
        return (
            bool(unstored.messages) or unstored.board is not None or self.stored != unstored.status
        )

    async def write(self, machine: Machine) -> None:
        """Write what the store does not have yet, and the status; ``StoreError`` if it fails."""
        if self.store is None:
            return
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            unstored = machine.to_store()
            status = unstored.status
            said = None if self._said_written else first_words(machine.view.posts) or None
            await self.store.commit_turn(
                TurnCommit(
                    self.session_id,
                    status.value,
                    unstored.keep,
                    unstored.messages,
                    self._version,
                    unstored.board,
                    self._stored_usage() or None,
                    said,
                )
            )
            self._said_written = self._said_written or said is not None
            machine.handle(Committed(unstored))
            self.stored = status
            if self._version is not None:
                self._version += 1

    def _stored_usage(self) -> dict[str, int]:
        usage = {} if self._usage is None else self._usage.stored()
        return stored_usage(usage, None if self._spans is None else self._spans.last)


def stored_usage(usage: dict[str, int], trace: tuple[int, int] | None) -> dict[str, int]:
    """``usage`` as the store keeps it: with the trace ids of the last traced turn."""
    if trace is None:
        return usage
    return {**usage, "trace_id": trace[0], "trace_span_id": trace[1]}


def trace_of(usage: Mapping[str, int] | None) -> tuple[int, int] | None:
    """The ids of the session's last traced turn, as the store kept them with its usage."""
    if not usage or "trace_id" not in usage or "trace_span_id" not in usage:
        return None
    return int(usage["trace_id"]), int(usage["trace_span_id"])
