"""Calls into the runtime from threads other than the event loop's (a sync tool, a UI).

``submit`` posts from any thread by itself; these are the thread-safe forms
of the methods that must answer: a status query answered by the next tick,
and cancel or complete run on the loop through anyio's token.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import anyio.from_thread

from agentos._errors import RuntimeClosedError, UnknownCallError, WrongThreadError
from agentos._kernel.parts import RuntimeParts
from agentos._kernel.snapshot import CancelOutcome, CompleteOutcome
from components import CallId, CallSnapshot, Entity, StatusQuery, snapshot_of

_T = TypeVar("_T")


class ThreadsafeCalls(RuntimeParts):
    """The ``*_threadsafe`` methods of ``Runtime``."""

    if TYPE_CHECKING:

        def cancel(
            self, call_id: str, reason: str = ..., *, session_id: str | None = None
        ) -> CancelOutcome: ...

        def complete(
            self, call_id: str, result: object = None, *, error: str | None = None
        ) -> CompleteOutcome: ...

    def status_threadsafe(self, call_id: str, timeout: float | None = 10.0) -> CallSnapshot:
        """``status`` for code running in another thread (a sync tool, a UI thread).

        The query is answered by the next tick; raises ``TimeoutError`` if the
        runtime does not answer within ``timeout`` seconds.
        """
        if threading.get_ident() == self._kernel.loop_thread:
            raise WrongThreadError("status_threadsafe is for other threads; use status()")
        self._check_open()
        done = threading.Event()
        answers: list[CallSnapshot | None] = []

        def answer(entity: Entity | None) -> None:
            answers.append(
                None if entity is None else snapshot_of(self._config(entity), self._state(entity))
            )
            done.set()

        self._post(StatusQuery(CallId(call_id), answer))
        if not done.wait(timeout):
            raise TimeoutError(f"the runtime did not answer a status query within {timeout}s")
        snapshot = answers[0]
        if snapshot is None:
            raise UnknownCallError(call_id)
        return snapshot

    def cancel_threadsafe(
        self, call_id: str, reason: str = "cancelled by caller", *, session_id: str | None = None
    ) -> CancelOutcome:
        """``cancel`` for code running in another thread (a sync tool, a UI thread).

        Runs ``cancel`` on the event loop's thread and waits for its answer.
        """
        return self.from_thread(lambda: self.cancel(call_id, reason, session_id=session_id))

    def complete_threadsafe(
        self, call_id: str, result: object = None, *, error: str | None = None
    ) -> CompleteOutcome:
        """``complete`` for code running in another thread."""
        return self.from_thread(lambda: self.complete(call_id, result, error=error))

    def from_thread(self, action: Callable[[], _T]) -> _T:
        """Run ``action`` on the event loop's thread and return what it returns (or raise
        what it raises), from another thread: how the ``*_threadsafe`` methods, and those
        of what is built on a runtime (a ``Session``), cross over."""
        if threading.get_ident() == self._kernel.loop_thread:
            raise WrongThreadError(
                "the *_threadsafe methods are for other threads; call the plain one"
            )
        self._check_open()
        try:
            return anyio.from_thread.run_sync(action, token=self._kernel.token)
        except RuntimeError:  # also anyio's, once the closed runtime's loop is gone
            if not self._kernel.closed:
                raise
            raise RuntimeClosedError("the runtime is closed") from None
