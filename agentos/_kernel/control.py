"""Ending calls from outside their work: cancelling one, completing a deferred one.

Both apply the inbox at once, so they answer what they did; those ticks leave
queued calls for the driver's next tick (``TickContext.admit``).
"""

from __future__ import annotations

from agentos._errors import UnknownCallError
from agentos._kernel.checks import check_text
from agentos._kernel.json_values import safe_text
from agentos._kernel.json_values import to_json
from agentos._kernel.parts import RuntimeCore
from agentos._kernel.snapshot import CancelOutcome
from agentos._kernel.snapshot import CompleteOutcome
from components import CallError
from components import CallId
from components import CancelCall
from components import CancelReply
from components import CompleteCall
from components import CompleteReply
from components import ErrorKind
from components import SessionId


class CallControl:
    """``Runtime.cancel`` and ``Runtime.complete``."""

    def __init__(self, core: RuntimeCore, max_result_chars: int | None) -> None:
        self._core = core
        self._max_result_chars = max_result_chars

    def cancel(
        self, call_id: str, reason: str = "cancelled by caller", *, session_id: str | None = None
    ) -> CancelOutcome:
        self._core.check_loop_thread("cancel_threadsafe")
        check_text("call_id", call_id)
        if not isinstance(reason, str):
            raise TypeError(f"reason must be a str, got {type(reason).__name__}")
        if session_id is not None:
            check_text("session_id", session_id)
        reply = CancelReply()
        sid = None if session_id is None else SessionId(session_id)
        self._core.ctx.inbox.append(CancelCall(CallId(call_id), sid, safe_text(reason), reply))
        self._core.kernel.apply_now()
        if not reply.found or reply.previous_status is None:
            raise UnknownCallError(call_id)
        return CancelOutcome(CallId(call_id), reply.took, reply.previous_status)

    def complete(
        self, call_id: str, result: object = None, *, error: str | None = None
    ) -> CompleteOutcome:
        self._core.check_loop_thread("complete_threadsafe")
        check_text("call_id", call_id)
        if error is not None and not isinstance(error, str):
            raise TypeError(f"error must be a str, got {type(error).__name__}")
        try:
            value = to_json(result, limit=self._max_result_chars)
        except (TypeError, ValueError) as problem:
            raise ValueError(f"the result is not JSON: {problem}") from None
        failure = None if error is None else CallError(ErrorKind.TOOL_ERROR, safe_text(error))
        reply = CompleteReply()
        self._core.ctx.inbox.append(CompleteCall(CallId(call_id), value, failure, reply))
        self._core.kernel.apply_now()
        if not reply.found or reply.previous_status is None:
            raise UnknownCallError(call_id)
        return CompleteOutcome(CallId(call_id), reply.applied, reply.previous_status)

    def cancel_everything(self, reason: str) -> None:
        """Cancel every call not yet final (the runtime is closing)."""
        self._core.flush()
        for call_id, entity in list(self._core.ctx.index.by_id.items()):
            if not self._core.is_final(entity):
                self._core.ctx.inbox.append(CancelCall(call_id, None, reason, CancelReply()))
        self._core.kernel.apply_now()
