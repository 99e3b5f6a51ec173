"""Phase 1, ingest: apply what arrived in the inbox since the last tick."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

import esper

from components import CallError
from components import CallStatus
from components import CancelCall
from components import CloseSession
from components import CompleteCall
from components import DeadlineKind
from components import Entity
from components import ErrorKind
from components import OpenSession
from components import ProgressBatch
from components import ProgressNote
from components import ReportFailure
from components import ReportProgress
from components import ReportResult
from components import SessionState
from components import SetSessionCap
from components import StatusQuery
from components import SubmitCall
from components import TickContext
from components import ToolCallConfig
from components import ToolCallState
from components import UpdateSession
from components import finished_deferred
from components import finished_session
from components import finished_status
from systems._calls import call_parts
from systems._lifecycle import record_queued
from systems._lifecycle import transition
from systems._progress import apply_progress


class IngestSystem(esper.Processor):
    """Creates entities for submitted calls and applies cancels and tool reports.

    Reports about calls that are already final (a late result after a cancel,
    progress after a timeout) are dropped: final states are absorbing.
    """

    def __init__(self) -> None:
        self._apply: dict[type, Callable[[TickContext, Any], None]] = {
            ReportResult: self._result,
            SubmitCall: self._submit,
            ReportFailure: self._failure,
            CancelCall: self._cancel,
            CompleteCall: self._complete,
            StatusQuery: self._query,
            UpdateSession: self._update_session,
            SetSessionCap: self._set_session_cap,
            OpenSession: self._open_session,
            CloseSession: self._close_session,
        }
        """How each message is applied, by its type; progress, which spends the tick's
        room for events, is applied in ``process`` itself."""

    def process(self, ctx: TickContext) -> None:
        room = ctx.limits.progress_events_per_tick  # progressed events this tick may raise
        apply = self._apply
        for message in ctx.batch:
            if type(message) is ProgressBatch:
                notes, skipped = message.take()
                room -= self._progress(ctx, message.entity, notes, skipped, room)
            elif type(message) is ReportProgress:
                note = ((message.kind, message.payload, message.at),)
                room -= self._progress(ctx, message.entity, note, 0, room)
            else:
                apply[type(message)](ctx, message)
        ctx.stats.messages_applied += len(ctx.batch)
        ctx.batch.clear()

    @staticmethod
    def _query(ctx: TickContext, message: StatusQuery) -> None:
        ctx.queries.append(message)

    def _submit(self, ctx: TickContext, message: SubmitCall) -> None:
        config = message.config
        state = ToolCallState(submitted_at=message.submitted_at)
        entity = esper.create_entity(config, state)
        ctx.index.add(entity, config)
        record_queued(ctx, config, state)
        if message.rejection is not None:
            transition(ctx, entity, config, state, CallStatus.FAILED, error=message.rejection)
        elif config.from_cache:
            result = message.cached_result
            transition(ctx, entity, config, state, CallStatus.COMPLETED, result=result)
        elif not config.deferred:
            ctx.submitted.append(entity)
            ctx.inputs[entity] = message.args
        elif config.timeouts.hard is not None:  # a deferred call's expiry counts from now
            ctx.deadlines.push(ctx.now + config.timeouts.hard, entity, DeadlineKind.HARD)

    def _cancel(self, ctx: TickContext, message: CancelCall) -> None:
        entity = ctx.index.by_id.get(message.call_id)
        if entity is None:
            return
        record = ctx.finished.get(entity)
        if record is not None:  # it has ended: found, and nothing moves
            if message.session_id is None or finished_session(record) == message.session_id:
                message.reply.found = True
                message.reply.previous_status = finished_status(record)
            return
        config = esper.component_for_entity(entity, ToolCallConfig)
        if message.session_id is not None and config.session_id != message.session_id:
            return
        state = esper.component_for_entity(entity, ToolCallState)
        reply = message.reply
        reply.found = True
        reply.previous_status = state.status
        error = CallError(ErrorKind.CANCELLED, message.reason)
        reply.took = transition(
            ctx,
            entity,
            config,
            state,
            CallStatus.CANCELLED,
            error=error,
            cancel_reason=message.reason,
            stop_work=True,
        )

    def _complete(self, ctx: TickContext, message: CompleteCall) -> None:
        """An outside result for a deferred call; any other call cannot be completed so."""
        entity = ctx.index.by_id.get(message.call_id)
        if entity is None:
            return
        record = ctx.finished.get(entity)
        if record is not None:  # it has ended: found if deferred, and nothing moves
            if finished_deferred(record):
                message.reply.found = True
                message.reply.previous_status = finished_status(record)
            return
        config = esper.component_for_entity(entity, ToolCallConfig)
        if not config.deferred:
            return
        state = esper.component_for_entity(entity, ToolCallState)
        reply = message.reply
        reply.found = True
        reply.previous_status = state.status
        new = CallStatus.COMPLETED if message.error is None else CallStatus.FAILED
        reply.applied = transition(
            ctx, entity, config, state, new, error=message.error, result=message.result
        )

    def _open_session(self, ctx: TickContext, message: OpenSession) -> None:
        session_id = message.config.session_id
        if session_id in ctx.sessions.by_id:
            return
        state = SessionState(opened_at=ctx.wall, updated_at=ctx.wall)
        ctx.sessions.add(session_id, esper.create_entity(message.config, state))

    @staticmethod
    def _set_session_cap(ctx: TickContext, message: SetSessionCap) -> None:
        """A raised cap admits the session's queued calls in this very tick."""
        ctx.limits.set_session_cap(message.session_id, message.cap)
        ctx.queues.rejoin(message.session_id, ctx.limits.session_cap(message.session_id))

    def _close_session(self, ctx: TickContext, message: CloseSession) -> None:
        ctx.limits.set_session_cap(message.session_id, None)
        entity = ctx.sessions.remove(message.session_id)
        if entity is not None:
            esper.delete_entity(entity, immediate=True)

    def _update_session(self, ctx: TickContext, message: UpdateSession) -> None:
        entity = ctx.sessions.by_id.get(message.session_id)
        if entity is None:
            return
        state = esper.component_for_entity(entity, SessionState)
        state.status = message.status
        state.requests = message.requests
        state.errors = message.errors
        state.updated_at = message.at

    @staticmethod
    def _progress(
        ctx: TickContext, entity: Entity, notes: Sequence[ProgressNote], skipped: int, room: int
    ) -> int:
        """A call's reports; returns the events they raised (a forgotten call's: none)."""
        components = call_parts(entity)
        if components is None:
            return 0
        config, state = components
        return apply_progress(ctx, config, state, notes, skipped, room)

    def _result(self, ctx: TickContext, message: ReportResult) -> None:
        components = call_parts(message.entity)
        if components is not None:
            config, state = components
            transition(
                ctx, message.entity, config, state, CallStatus.COMPLETED, result=message.result
            )

    def _failure(self, ctx: TickContext, message: ReportFailure) -> None:
        components = call_parts(message.entity)
        if components is not None:
            config, state = components
            transition(ctx, message.entity, config, state, CallStatus.FAILED, error=message.error)
