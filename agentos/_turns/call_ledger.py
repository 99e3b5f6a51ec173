"""What a session knows of its calls' outcomes, and what the model has been told of them.

``CallLedger`` is the turn machine's resource (trio's ``Deadlines`` is the
model): it keeps its own invariants, and the machine only calls its methods.
A call is *outstanding* once the model got a placeholder for it; it leaves the
ledger when its outcome is rendered for the model, once. ``Batch`` is one
answer's tool calls, until their results go back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

from agentos._model.messages import Block
from agentos._model.messages import TextBlock
from agentos._model.messages import ToolResultBlock
from agentos._model.messages import text_block
from agentos._model.messages import tool_result
from agentos._turns.decorations import NO_DECORATIONS
from agentos._turns.decorations import Decorations
from agentos._turns.events import CallStarted
from agentos._turns.history import HistoryCall
from agentos._turns.history import MessageHistory
from agentos._turns.result_cache import ResultCache
from agentos._turns.tool_policy import Disposition
from agentos._turns.tool_policy import YieldOnAnyProgress
from agentos._turns.tool_policy import YieldOnTimeout
from agentos._turns.tool_policy import YieldStrategy
from agentos._turns.transcript import outcome_text
from agentos._turns.transcript import placeholder
from components import CallId
from components import CallSnapshot
from components import CallStatus
from components import ErrorKind
from components import Json
from components import OverdueNews

_NOT_STARTED = (CallStatus.PENDING, None)


class CallLedger:
    """The calls of one session the model is still to hear about, and their final news."""

    def __init__(
        self,
        session_id: str,
        cache: ResultCache | None = None,
        status_of: Callable[[CallId], CallStatus | None] = lambda call_id: None,
    ) -> None:
        """``cache``: where cacheable results are kept (the host's, shared by its sessions;
        else one of this session's own); ``status_of``: where the shell's calls are, for a
        placeholder's status when no ``CallRunning`` told it."""
        self.session_id = session_id
        self._status_of = status_of
        self.history = MessageHistory(seal=True)
        """What the conversation says of each call: the source of ``orphaned``."""
        self.outstanding: dict[CallId, str] = {}
        """Calls answered by a placeholder whose outcome is not told yet -> tool_use id."""
        self._final: dict[CallId, CallSnapshot] = {}
        """Final snapshots of calls the model is still to hear about."""
        self._running: dict[CallId, None] = {}
        self._deferred: dict[CallId, None] = {}
        """Sets kept as dicts: an empty dict is a quarter of an empty set, and most sessions'
        stay empty or small."""
        self._tokens: dict[CallId, str] = {}
        self._decorations: dict[CallId, Decorations] = {}
        self._cache = ResultCache() if cache is None else cache

    # ------------------------------------------------------------------ queries

    def is_final(self, call_id: CallId) -> bool:
        """Whether the call's final news is kept."""
        return call_id in self._final

    def is_deferred(self, call_id: CallId) -> bool:
        return call_id in self._deferred

    def all_outstanding_final(self) -> bool:
        """Whether every outstanding call that can end by itself has ended: a deferred
        call waits for a person, so its outcome is told when it comes, not waited for."""
        return all(c in self._final or c in self._deferred for c in self.outstanding)

    def settled_while_others_run(self, batch: Batch, snapshot: CallSnapshot) -> bool:
        """Keep ``snapshot``, the end of a call ``batch`` waits for and not outstanding, if
        another call of the batch (neither ended nor deferred) runs on; else keep nothing and
        say False. The newest calls are looked at first: they are the likeliest to run."""
        call_id, final, deferred = snapshot.call_id, self._final, self._deferred
        return (
            call_id in batch.waits
            and call_id not in self.outstanding
            and any(
                c != call_id and c not in final and c not in deferred for c in reversed(batch.waits)
            )
            and self.settled(snapshot)
        )

    def live(self, call_ids: list[CallId]) -> list[CallId]:
        """Those of ``call_ids`` a cancel can still reach: not final, not deferred."""
        return [c for c in call_ids if c not in self._final and c not in self._deferred]

    # ------------------------------------------------------------------ news in

    def started(self, call: CallStarted) -> None:
        """One of the model's calls is now a runtime call."""
        self.history.record(
            self.session_id, HistoryCall(call.tool_use_id, call.tool_name, call.call_id)
        )
        if call.decorations is not NO_DECORATIONS:
            self._decorations[call.call_id] = call.decorations
        if call.status is CallStatus.RUNNING:
            self._running[call.call_id] = None
        if call.disposition is Disposition.DEFER:
            self._deferred[call.call_id] = None
            if call.token is not None:
                self._tokens[call.call_id] = call.token

    def await_outcome(self, call_id: CallId, tool_use_id: str, *, deferred: bool) -> None:
        """A call from before a restart or unload: its outcome is told later, once."""
        self.outstanding[call_id] = tool_use_id
        if deferred:
            self._deferred[call_id] = None

    def running(self, call_id: CallId) -> None:
        self._running[call_id] = None

    def settled(self, snapshot: CallSnapshot) -> bool:
        """Keep a final snapshot until it is told; False if it was already kept."""
        if snapshot.call_id in self._final:
            return False
        self._final[snapshot.call_id] = snapshot
        self._running.pop(snapshot.call_id, None)
        return True

    def told_by_capability(self, named: str) -> None:
        """A capability answer told the model how this call (either id) ended."""
        for call_id, tool_use_id in list(self.outstanding.items()):
            if named in (call_id, tool_use_id):
                snapshot = self._final.get(call_id)
                if snapshot is not None:
                    self.history.record(self.session_id, _history_call(snapshot, tool_use_id))
                self._forget(call_id)

    def drop_untold(self, keep: set[CallId]) -> None:
        """Forget final news of calls that are neither outstanding nor in ``keep``."""
        for call_id in [c for c in self._final if c not in keep and c not in self.outstanding]:
            del self._final[call_id]

    # ------------------------------------------------------------------ rendering

    def cached(
        self, tool_use_id: str, name: str, shape: Decorations
    ) -> tuple[ToolResultBlock, Json] | None:
        """The result of the same cacheable call, completed earlier in this session or
        another that shares its cache and parameters: the ``tool_result`` the model reads,
        and the value."""
        kept = None if shape.cache_key is None else self._cache.get(shape.cache_key)
        if kept is None:
            return None
        (value,) = kept
        self.history.record(
            self.session_id, HistoryCall(tool_use_id, name, None, CallStatus.COMPLETED, value)
        )
        return shape.result(tool_use_id, value), value

    def result(self, call_id: CallId, tool_use_id: str) -> ToolResultBlock:
        """The call's ``tool_result``: its outcome if final, else a placeholder (and then
        the call is outstanding)."""
        snapshot = self._final.get(call_id)
        if snapshot is None:
            running = call_id in self._running or self._status_of(call_id) not in _NOT_STARTED
            status = CallStatus.RUNNING if running else CallStatus.PENDING
            self.outstanding[call_id] = tool_use_id
            return placeholder(tool_use_id, call_id, status, self._tokens.get(call_id))
        shape = self._told(snapshot, tool_use_id)
        if snapshot.status is CallStatus.COMPLETED:
            return shape.result(tool_use_id, snapshot.result)
        return tool_result(tool_use_id, failure_text(snapshot), error=True)

    def late_outcome(self, call_id: CallId) -> TextBlock | None:
        """The message telling an outstanding call's outcome (None: nothing to tell)."""
        tool_use_id = self.outstanding.get(call_id)
        snapshot = self._final.get(call_id)
        if tool_use_id is None or snapshot is None:
            return None
        shape = self._told(snapshot, tool_use_id)
        if snapshot.status is CallStatus.COMPLETED:
            outcome = "result: " + shape.render(snapshot.result)
        else:
            outcome = "error: " + failure_text(snapshot)
        return text_block(outcome_text(tool_use_id, snapshot.tool_name, snapshot.status, outcome))

    def _told(self, snapshot: CallSnapshot, tool_use_id: str) -> Decorations:
        """Record the outcome and forget the call; a completed cacheable result is kept."""
        self.history.record(self.session_id, _history_call(snapshot, tool_use_id))
        shape = self._decorations.get(snapshot.call_id, NO_DECORATIONS)
        if shape.cache_key is not None and snapshot.status is CallStatus.COMPLETED:
            self._cache.keep(shape.cache_key, snapshot.result)
        self._forget(snapshot.call_id)
        return shape

    def _forget(self, call_id: CallId) -> None:
        self.outstanding.pop(call_id, None)
        self._final.pop(call_id, None)
        self._running.pop(call_id, None)
        self._deferred.pop(call_id, None)
        self._tokens.pop(call_id, None)
        self._decorations.pop(call_id, None)


def failure_text(snapshot: CallSnapshot) -> str:
    """How a call that did not complete ended, in words, for the model.

    The error's message says it ("timed out after 1 s", "ValueError: ...");
    a cancelled call says so, with its reason.
    """
    error = snapshot.error
    if error is None:
        return snapshot.status.value
    if error.kind is ErrorKind.CANCELLED:
        return f"cancelled: {error.message}" if error.message else "cancelled"
    if error.message.startswith(CallStatus.CANCELLED.value):  # read back as cancelled otherwise
        return f"failed: {error.message}"
    return error.message


def _history_call(snapshot: CallSnapshot, tool_use_id: str) -> HistoryCall:
    result = snapshot.result if snapshot.status is CallStatus.COMPLETED else failure_text(snapshot)
    return HistoryCall(tool_use_id, snapshot.tool_name, snapshot.call_id, snapshot.status, result)


@dataclass(slots=True)
class Batch:
    """The model's tool calls of one answer, until their results go back."""

    uses: list[Block]
    results: dict[str, ToolResultBlock] = field(default_factory=dict)
    waits: dict[CallId, str] = field(default_factory=dict)
    """Every runtime call of the batch -> tool_use id."""
    sync: set[CallId] = field(default_factory=set)
    """``run_sync`` calls: only they hold the turn against a user message."""
    submitted: bool = False
    deadline: float | None = None
    timer_fired: bool = False
    cut: bool = False
    """A user message arrived: it ends the wait for background calls."""
    overdue: dict[CallId, OverdueNews | None] = field(default_factory=dict)
    """Calls overdue while the batch waits, with the newest news of each."""

    def waits_for_all(self, strategy: YieldStrategy) -> bool:
        """Whether only the end of every call ends the wait: none is overdue or
        ``run_sync``, no post or timer cut it, and ``strategy`` waits for them all."""
        return not (self.overdue or self.sync or self.cut or self.timer_fired) and not isinstance(
            strategy, YieldOnAnyProgress | YieldOnTimeout
        )

    def wait_over(self, final: Callable[[CallId], bool], strategy: YieldStrategy) -> bool:
        """Whether the turn stops waiting for its calls: one is overdue, none runs, or only
        background ones do and a post, the timer or (as ``strategy`` says) one's end cut
        the wait; a ``run_sync`` call still running holds it."""
        if self.overdue:
            return True
        if self.waits_for_all(strategy):  # (asked at each call's end: newest first, the
            return all(final(c) for c in reversed(self.waits))  # likeliest to run still)
        pending = [c for c in self.waits if not final(c)]
        if not pending:
            return True
        if any(c in self.sync for c in pending):
            return False
        if self.cut or self.timer_fired:
            return True
        return len(pending) < len(self.waits) and isinstance(
            strategy, YieldOnAnyProgress | YieldOnTimeout
        )
