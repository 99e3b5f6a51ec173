"""A transcript machine's stored form (``StoredTranscript``, ``TurnMachine``'s base).

The store keeps the history and the status; ``to_store`` gives what it does not have
yet, ``from_store`` takes over a stored conversation, repaired so that every
``tool_use`` has its result.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentos._model.messages import ToolResultBlock
from agentos._model.messages import blocks_of
from agentos._turns import events as ev
from agentos._turns.call_ledger import CallLedger
from agentos._turns.history import waiting_calls
from agentos._turns.machine import DrawnAfterEvents
from agentos._turns.machine import Waiting
from agentos._turns.packed import MessageLog
from agentos._turns.transcript import repair_history
from agentos._turns.turn_status import TurnStatus
from components import CallId


class StoredTranscript(DrawnAfterEvents):
    """How a transcript machine is written to the store and taken back from it."""

    session_id: str
    turn: TurnStatus
    _ledger: CallLedger
    _log: MessageLog
    dirty_from: int
    """History from this index on is not in the store yet."""

    def to_store(self) -> ev.StoredTurn:
        """The history the store does not have yet (from ``dirty_from`` on), and the status."""
        history = self._log
        keep = min(self.dirty_from, len(history))
        messages = tuple(history[keep:])
        last = messages[-1] if messages else history[-1] if history else None
        return ev.StoredTurn(self.turn.status, keep, messages, last=last)

    def from_store(
        self, stored: ev.StoredTurn, held: Mapping[str, ToolResultBlock], *, asked: bool = False
    ) -> list[Waiting]:
        """Take over an earlier conversation, repaired (``repair_history``: a ``tool_use``
        without a result gets ``held``'s placeholder, or a lost-call result); the calls still
        waiting. ``asked``: stored mid-turn, so a last user turn none of whose calls waits
        is the model's to answer (``Resumed`` asks it)."""
        history = list(stored.messages)
        repaired = repair_history(history, held)
        self._log = MessageLog(repaired)
        self.dirty_from = len(history) if repaired == history else 0  # repaired: rewrite
        self._ledger.history.load(self.session_id, repaired)
        waiting = waiting_calls(repaired)
        last = repaired[-1] if repaired else None
        if asked and last is not None and last["role"] == "user":
            answers = {b.get("tool_use_id") for b in blocks_of(last)}
            self.turn.ask_again = not any(tool_use_id in answers for tool_use_id, _ in waiting)
        self.view = self._drawn_view()
        return [Waiting(use, name, self._runtime_id_of(use)) for use, name in waiting]

    def _runtime_id_of(self, tool_use_id: str) -> CallId | None:
        """The runtime's id for a call of the history (placeholders name it)."""
        known = self._ledger.history.find_call(self.session_id, tool_use_id)
        return None if known is None or known.internal_id is None else CallId(known.internal_id)
