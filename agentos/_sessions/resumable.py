"""Taking over a stored conversation (``Resumable``, ``Session``'s base).

A host that loads a session from its store restores its conversation before the
session's task starts, then says what became of each call it waited for: lost, still
running (``await_outcome``), or ended before the process did (``ended_before``).
"""

from __future__ import annotations

from collections.abc import Mapping

from agentos._errors import UnknownCallError
from agentos._kernel.runtime import Runtime
from agentos._model.messages import Message
from agentos._model.messages import ToolResultBlock
from agentos._sessions.spans import SessionSpans
from agentos._sessions.task import SessionTask
from agentos._turns.events import CallLost
from agentos._turns.events import OutcomeAwaited
from agentos._turns.events import StoredTurn
from agentos._turns.machine import Machine
from components import CallId
from components import CallSnapshot
from components import JsonObject


class Resumable:
    """What a session does as its host takes over its stored conversation."""

    _machine: Machine
    _runtime: Runtime
    _spans: SessionSpans | None
    _task: SessionTask
    _waiting: dict[str, CallId | None]
    """The runtime's ids of the calls the restored conversation waited for."""

    def restore(
        self,
        history: list[Message],
        held: Mapping[str, ToolResultBlock] | None = None,
        *,
        board: JsonObject | None = None,
        asked: bool = False,
    ) -> list[tuple[str, str]]:
        """Take over an earlier conversation (before the task starts).

        A ``tool_use`` left without a result gets its entry in ``held`` (a
        placeholder for a call that outlived the restart) or one saying the
        call was lost; a board's running call waits on only with an entry in
        ``held``, else it reads as lost. Returns the calls still waiting
        (placeholder, no outcome delivered) as ``(tool_use_id, tool_name)``:
        the host re-creates the deferred ones and calls ``lost`` for the rest. A board
        session takes its stored ``board`` (``StoredSession.board``) instead of a history.
        ``asked``: the conversation was stored mid-turn (its status neither ``idle`` nor
        ``stopped``): a turn whose calls have all ended (or were lost) asks the model again
        once the session runs, as does a request that was out or had failed.
        """
        self._task.resumes = True
        stored = StoredTurn(messages=tuple(history), board=board)
        waiting = self._machine.from_store(stored, held or {}, asked=asked)
        self._waiting = {call.tool_use_id: call.call_id for call in waiting}
        return [(call.tool_use_id, call.tool_name) for call in waiting]

    def runtime_id_of(self, tool_use_id: str) -> CallId | None:
        """The runtime's id of a call the restored conversation waited for, if it names one."""
        return self._waiting.get(tool_use_id)

    def lost(self, tool_use_id: str, tool_name: str) -> None:
        """The model will be told, before its next request, that this call did not survive."""
        self._machine.handle(CallLost(tool_use_id, tool_name))
        if self._spans is not None:
            self._spans.lost(tool_use_id, tool_name)

    def await_outcome(self, call_id: CallId, tool_use_id: str) -> None:
        """Deliver this call's outcome later, as for any call that got a placeholder."""
        try:
            deferred = self._runtime.status(call_id).deferred
        except UnknownCallError:
            deferred = False
        self._machine.handle(OutcomeAwaited(call_id, tool_use_id, deferred))

    def ended_before(self, snapshot: CallSnapshot, tool_use_id: str) -> None:
        """A call the restored conversation waited for ended before the process did, and the
        store kept its end (``snapshot``): once the session runs, its outcome is told as any
        late outcome (a transcript's outcome message, a board's settled call), not as lost."""
        self._machine.handle(OutcomeAwaited(snapshot.call_id, tool_use_id, deferred=False))
        self._task.ended_before(snapshot)

    def disown(self, reason: str) -> None:
        """Another host owns this session now: record why, write nothing more, and stop."""
        self._task.disown(reason)
