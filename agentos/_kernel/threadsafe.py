"""Calls into the runtime from threads other than the event loop's (a sync tool, a UI).

``submit`` posts from any thread by itself; these are the thread-safe forms
of the methods that must answer: a status query answered by the next tick,
and cancel or complete run on the loop through anyio's token.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import anyio.from_thread

from agentos._errors import RuntimeClosedError
from agentos._errors import UnknownCallError
from agentos._errors import WrongThreadError
from agentos._kernel.parts import RuntimeCore
from agentos._kernel.snapshot import CancelOutcome
from agentos._kernel.snapshot import CompleteOutcome
from components import CallId
from components import CallSnapshot
from components import Entity
from components import StatusQuery

_T = TypeVar("_T")


class ThreadsafeCalls:
    """The ``*_threadsafe`` methods of ``Runtime``."""

    def __init__(
        self,
        core: RuntimeCore,
        cancel: Callable[..., CancelOutcome],
        complete: Callable[..., CompleteOutcome],
    ) -> None:
        """``cancel`` and ``complete``: the runtime's own, run on the loop's thread."""
        self._core = core
        self._cancel = cancel
        self._complete = complete

    def status_threadsafe(self, call_id: str, timeout: float | None = 10.0) -> CallSnapshot:
        if threading.get_ident() == self._core.kernel.loop_thread:
            raise WrongThreadError("status_threadsafe is for other threads; use status()")
        self._core.check_open()
        done = threading.Event()
        answers: list[CallSnapshot | None] = []

        def answer(entity: Entity | None) -> None:
            answers.append(None if entity is None else self._core.snapshot(entity))
            done.set()

        self._core.post(StatusQuery(CallId(call_id), answer))
        if not done.wait(timeout):
            raise TimeoutError(f"the runtime did not answer a status query within {timeout}s")
        snapshot = answers[0]
        if snapshot is None:
            raise UnknownCallError(call_id)
        return snapshot

    def cancel_threadsafe(
        self, call_id: str, reason: str = "cancelled by caller", *, session_id: str | None = None
    ) -> CancelOutcome:
        return self.from_thread(lambda: self._cancel(call_id, reason, session_id=session_id))

    def complete_threadsafe(
        self, call_id: str, result: object = None, *, error: str | None = None
    ) -> CompleteOutcome:
        return self.from_thread(lambda: self._complete(call_id, result, error=error))

    def from_thread(self, action: Callable[[], _T]) -> _T:
        if threading.get_ident() == self._core.kernel.loop_thread:
            raise WrongThreadError(
                "the *_threadsafe methods are for other threads; call the plain one"
            )
        self._core.check_open()
        try:
            return anyio.from_thread.run_sync(action, token=self._core.kernel.token)
        except RuntimeError:  # also anyio's, once the closed runtime's loop is gone
            if not self._core.kernel.closed:
                raise
            raise RuntimeClosedError("the runtime is closed") from None
