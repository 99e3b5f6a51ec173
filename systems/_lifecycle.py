"""The only code that changes a call's status.

Every move is checked against ``components.TRANSITIONS``; the bookkeeping that
must follow a move (status counts, slot release, retirement and retention, waiters,
events, the ``tool_call.*`` log line) happens here and nowhere else.
"""

from __future__ import annotations

from components import FINAL_STATUSES
from components import TRANSITIONS
from components import CallError
from components import CallEvent
from components import CallEventKind
from components import CallStatus
from components import Entity
from components import ErrorKind
from components import Json
from components import OverdueNews
from components import ProgressKind
from components import SessionId
from components import TickContext
from components import ToolCallConfig
from components import ToolCallProgress
from components import ToolCallState
from components import snapshot_of

_EVENT_FOR_STATUS = {
    CallStatus.RUNNING: CallEventKind.STARTED,
    CallStatus.COMPLETED: CallEventKind.COMPLETED,
    CallStatus.FAILED: CallEventKind.FAILED,
    CallStatus.CANCELLED: CallEventKind.CANCELLED,
}
_LOG_NAME = {kind: f"tool_call.{kind.value}" for kind in CallEventKind}


def transition(
    ctx: TickContext,
    entity: Entity,
    config: ToolCallConfig,
    state: ToolCallState,
    new: CallStatus,
    *,
    error: CallError | None = None,
    result: object = None,
    cancel_reason: str | None = None,
    stop_work: bool = False,
) -> bool:
    """Move a call to ``new`` if the table allows it; returns whether it moved.

    ``stop_work`` is set when the runtime ends a running call (cancel, hard
    timeout) rather than the work reporting its own end: the kernel is then
    told to interrupt the work. Every field the move changes is set before the event is
    recorded, so a final event's snapshot is the call as it ended.
    """
    old = state.status
    if new not in TRANSITIONS[old]:  # ``can_transition``, without its call
        return False
    ctx.index.moved(old, new)
    state.status = new
    state.version += 1
    if new is CallStatus.RUNNING:
        state.started_at = ctx.wall
        # The STARTED event below tells subscribers; the log's entry is made when read.
        state.progress_seq += 1
        state.version += 1
    else:
        state.completed_at = ctx.wall
        state.error = error
        if new is CallStatus.COMPLETED:
            state.result = result  # type: ignore[assignment]
        if cancel_reason is not None:
            state.cancel_reason = cancel_reason
        _on_final(ctx, entity, config, old, stop_work)
    kind = _EVENT_FOR_STATUS[new]
    if error is not None and error.kind is ErrorKind.TIMED_OUT:
        kind = CallEventKind.TIMED_OUT
    _record(ctx, config, state, kind)
    return True


def heard(ctx: TickContext, session: SessionId, kind: CallEventKind) -> bool:
    """Whether a listener of ``session`` wants events of ``kind`` (else none is made)."""
    return session in ctx.subscribed and kind not in ctx.unheard.get(session, ())


def add_progress(
    state: ToolCallState, kind: ProgressKind, payload: Json, at: float
) -> ToolCallProgress:
    """Store one progress entry of the work: the bounded log, ``progress_seq`` and
    ``version`` (``started`` is only counted, in the lifecycle: the log makes its entry)."""
    log = state.progress
    assert log is not None, "a report arrives only while the call runs"
    state.progress_seq += 1
    state.version += 1
    entry = ToolCallProgress(state.progress_seq, at, kind, payload)
    log.append(entry)
    return entry


def record_progress(
    ctx: TickContext,
    config: ToolCallConfig,
    state: ToolCallState,
    entry: ToolCallProgress,
    folded: int = 0,
) -> None:
    """Tell subscribers and the log about a progress report already stored (``folded``:
    the reports before it that this event stands for).

    ``_record`` cut down to what a running call's report needs: a flood tells up to a
    thousand of these a tick, so each costs what it must and no more.
    """
    if heard(ctx, config.session_id, CallEventKind.PROGRESSED):
        ctx.events.append(
            CallEvent(
                config.call_id,
                config.session_id,
                CallEventKind.PROGRESSED,
                state.status,
                ctx.wall,
                entry,
                state.error,
                None,
                folded,
                None,
                config.disposition,
            )
        )
    if ctx.log_debug:
        ctx.log.debug(
            _LOG_NAME[CallEventKind.PROGRESSED],
            call_id=config.call_id,
            session_id=config.session_id,
            tool_name=config.tool_name,
            seq=entry.seq,
            folded=folded,
        )


def record_overdue(
    ctx: TickContext, config: ToolCallConfig, state: ToolCallState, next_seconds: float | None
) -> None:
    """Tell the owner the call is overdue: how long it ran, its newest progress and log line,
    and when it is next due."""
    _record(ctx, config, state, CallEventKind.OVERDUE, _overdue_news(ctx, state, next_seconds))


def _overdue_news(
    ctx: TickContext, state: ToolCallState, next_seconds: float | None
) -> OverdueNews:
    progress: Json = None
    log: str | None = None
    kept = state.log  # its newest payload and line, even once a flood pushed them out
    if kept is not None:
        if kept.partial is not None:
            progress = kept.partial.payload
        if kept.line is not None and isinstance(kept.line.payload, str):
            log = kept.line.payload
    started = state.started_at if state.started_at is not None else ctx.wall
    return OverdueNews(max(0.0, ctx.wall - started), next_seconds, progress, log)


def record_queued(ctx: TickContext, config: ToolCallConfig, state: ToolCallState) -> None:
    if ctx.log_info or heard(ctx, config.session_id, CallEventKind.QUEUED):  # else: nothing
        _record(ctx, config, state, CallEventKind.QUEUED)


def _on_final(
    ctx: TickContext, entity: Entity, config: ToolCallConfig, old: CallStatus, stop_work: bool
) -> None:
    queues = ctx.queues
    if entity in queues.slot_holders:
        session = config.session_id
        queues.release_slot(entity, session, ctx.limits.session_cap(session))
    if stop_work and old is CallStatus.RUNNING:
        ctx.effects.cancel.append(entity)
    elif old is CallStatus.PENDING:
        ctx.inputs.pop(entity, None)  # it never ran
    ctx.finalized.append(entity)  # retired at the tick's end, kept for its retention


def _record(
    ctx: TickContext,
    config: ToolCallConfig,
    state: ToolCallState,
    kind: CallEventKind,
    overdue: OverdueNews | None = None,
) -> None:
    if heard(ctx, config.session_id, kind):
        ctx.events.append(
            CallEvent(
                call_id=config.call_id,
                session_id=config.session_id,
                kind=kind,
                status=state.status,
                at=ctx.wall,
                error=state.error,
                snapshot=snapshot_of(config, state) if state.status in FINAL_STATUSES else None,
                overdue=overdue,
                disposition=config.disposition,
            )
        )
    if not ctx.log_info:
        return
    duration = None
    if state.completed_at is not None and state.started_at is not None:
        duration = round(state.completed_at - state.started_at, 6)
    ctx.log.info(
        _LOG_NAME[kind],
        call_id=config.call_id,
        provider_call_id=config.provider_call_id,
        session_id=config.session_id,
        conversation_id=config.conversation_id,
        tool_name=config.tool_name,
        status=state.status.value,
        duration_s=duration,
        error=None if state.error is None else state.error.message,
    )
