"""The live mirror: a host with a store writes its sessions' calls there, and applies what
other processes left for them (cancel requests, completed tokens).

Other processes (``agentos status``, ``calls``, ``cancel``, ``complete``)
cannot reach this host's runtime, so every ``period`` seconds of the
runtime's clock the host writes, in one transaction, the calls that changed
since its last write (the runtime's call events say which), answers the
cancel requests left for the sessions it holds and completes the calls whose
tokens were completed in the store. News from the store (PostgreSQL's
``NOTIFY``) for a session it holds wakes it before the period is up; the
period is the fallback, since news can be lost. A store error is logged and
tried again next period: the mirror is a view, and never stops the host.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable

import anyio

from agentos._errors import UnknownCallError
from agentos._host.call_view import CallView
from agentos._kernel.checks import check_seconds
from agentos._kernel.clock import Clock
from agentos._kernel.clock import sleep
from agentos._kernel.runtime import Runtime
from agentos._log import agentos_logger
from agentos._sessions.tokens import ContinuationTokens
from agentos._store.protocol import CancelRequest
from agentos._store.protocol import MirroredCall
from agentos._store.protocol import SessionStore
from components import CallEvent
from components import CallSnapshot
from components import CallStatus
from components import Json
from components import JsonObject

RESULT_KEPT = 4096
"""Characters of a result's JSON the mirror keeps; a longer result is kept as its beginning."""


def check_period(period: float | None) -> float | None:
    """``call_mirror_period``: a positive number of seconds, or None (no mirror)."""
    if period is None:
        return None
    check_seconds("call_mirror_period", period)
    return float(period)


class CallMirror:
    """Which of the watched sessions' calls changed, and writing them (with cancel answers)."""

    def __init__(
        self,
        runtime: Runtime,
        store: SessionStore,
        holder: str,
        period: float,
        tokens: ContinuationTokens,
    ) -> None:
        self.runtime = runtime
        self.store = store
        self.holder = holder
        self.period = period
        self.tokens = tokens
        self._news = anyio.Event()
        """Set when the store says a watched session has news: the next write comes now."""
        self._watching: dict[str, Callable[[], None]] = {}
        """Session -> what stops its call events reaching ``_dirty``."""
        self._dirty: set[str] = set()
        self._sweep: set[str] = set()
        """Sessions whose every call the next write looks at (newly watched)."""
        self._written: dict[str, int] = {}
        """Call -> the version last written, for calls not final yet (final ones never change)."""
        self._lock = anyio.Lock()
        self.failures = 0
        """Writes that failed (each tried again next period)."""

    def watch(self, session_id: str) -> None:
        """Mirror the session's calls from now on (before it submits any)."""
        if session_id not in self._watching:
            self._watching[session_id] = self.runtime.on_call_events(session_id, self._note)
            self._sweep.add(session_id)

    def unwatch(self, session_id: str) -> None:
        stop = self._watching.pop(session_id, None)
        if stop is not None:
            stop()
        self._sweep.discard(session_id)

    def unwatch_all(self) -> None:
        for session_id in list(self._watching):
            self.unwatch(session_id)

    def _note(self, event: CallEvent) -> None:
        self._dirty.add(event.call_id)

    def heard(self, session_id: str) -> None:
        """The store's news for ``session_id`` (another process left it something)."""
        if session_id in self._watching:
            self._news.set()

    async def keep(self, clock: Clock) -> None:
        """Write every period, or at once on news, forever (the host cancels it when it
        closes). Before each write it subscribes again, should the subscription have been
        lost: then the write catches up with what was missed, and news comes again after."""
        try:
            await self._listen()
            while True:
                async with anyio.create_task_group() as nap:
                    nap.start_soon(_woken, self._news, nap.cancel_scope)
                    await sleep(clock, self.period)
                    nap.cancel_scope.cancel()
                self._news = anyio.Event()
                await self._listen()
                await self.write()
        finally:
            self.store.unlisten(self.heard)

    async def _listen(self) -> None:
        with contextlib.suppress(Exception):  # best-effort: the period comes anyway
            await self.store.listen(self.heard)

    async def write(self, *, answer: bool = True) -> None:
        """Apply the cancel requests waiting for us (if ``answer``), then write what changed.

        Never raises for a store error: it is logged, and what was not
        written is written next time.
        """
        async with self._lock:
            try:
                await self._write(answer)
            except Exception as error:  # the mirror is a view: the host goes on
                self._failed("host.call_mirror_failed", error)

    def _failed(self, event: str, error: Exception) -> None:
        self.failures += 1
        logger, _, _ = agentos_logger()
        logger.warning(event, error=f"{type(error).__name__}: {error}")

    async def _write(self, answer: bool) -> None:
        answers: list[CancelRequest] = []
        if answer and self._watching:
            try:
                await self.tokens.catch_up(self._watching)
            except Exception as error:  # the mirror's own writes go on; tried next period
                self.failures += 1
                logger, _, _ = agentos_logger()
                logger.warning(
                    "host.token_catch_up_failed", error=f"{type(error).__name__}: {error}"
                )
            for request in await self.store.pending_cancels(self.holder):
                answers.append(self._apply(request))
        dirty, self._dirty = self._dirty, set()
        for session_id in self._sweep:
            dirty.update(call.call_id for call in self.runtime.list_calls(session_id))
        self._sweep = set()
        snapshots = []
        for call_id in dirty:
            try:
                snapshot = self.runtime.status(call_id)
            except UnknownCallError:  # forgotten since (retention): its last row stays
                continue
            if self._written.get(call_id) != snapshot.version:
                snapshots.append(snapshot)
        if not snapshots and not answers:
            return
        now = self.runtime.clock.wall()
        rows = [self._row(snapshot, now) for snapshot in snapshots]
        try:
            await self.store.mirror_calls(rows, answers)
        except BaseException:
            self._dirty.update(dirty)  # next time
            raise
        for snapshot in snapshots:
            if snapshot.is_final:
                self._written.pop(snapshot.call_id, None)
            else:
                self._written[snapshot.call_id] = snapshot.version

    def _apply(self, request: CancelRequest) -> CancelRequest:
        """Cancel the call a request names, if this host's runtime holds it; the answer."""
        answer: JsonObject = {"cancelled": False, "found": False}
        if request.session_id in self._watching:
            try:
                call_id = self.runtime.resolve(request.call_id, session_id=request.session_id)
                outcome = self.runtime.cancel(
                    call_id, request.reason, session_id=request.session_id
                )
                after = self.runtime.status(call_id).status
            except UnknownCallError:
                pass
            else:
                self._dirty.add(call_id)
                answer = {
                    "cancelled": outcome.cancelled,
                    "found": True,
                    "previous_status": outcome.previous_status.value,
                    "status": after.value,
                }
        return CancelRequest(
            request.call_id,
            request.session_id,
            request.reason,
            request.requested_at,
            self.runtime.clock.wall(),
            answer,
        )

    def _row(self, snapshot: CallSnapshot, now: float) -> MirroredCall:
        error = snapshot.error
        view = CallView.of(snapshot)  # its newest progress and log line, as shown
        return MirroredCall(
            call_id=snapshot.call_id,
            session_id=snapshot.session_id,
            provider_call_id=snapshot.provider_call_id,
            tool_name=snapshot.tool_name,
            tool_input=snapshot.tool_input,
            status=snapshot.status.value,
            created_at=snapshot.submitted_at,
            updated_at=now,
            holder=self.holder,
            deferred=snapshot.deferred,
            started_at=snapshot.started_at,
            ended_at=snapshot.completed_at,
            progress=view.progress,
            progress_count=snapshot.progress_seq,
            result=_kept(snapshot.result) if snapshot.status is CallStatus.COMPLETED else None,
            error_kind=None if error is None else error.kind.value,
            error_message=None if error is None else error.message,
            cancel_reason=snapshot.cancel_reason,
            log=view.log,
            disposition=snapshot.disposition,
            question=None if view.question is None else view.question.to_json(),
        )


async def _woken(news: anyio.Event, nap: anyio.CancelScope) -> None:
    await news.wait()
    nap.cancel()


def _kept(result: Json) -> Json:
    if result is None or isinstance(result, bool | int | float):
        return result  # short: no need to measure it
    text = json.dumps(result)
    return result if len(text) <= RESULT_KEPT else text[: RESULT_KEPT - 3] + "..."
