"""Each system on its own, over a bare world and TickContext, without the kernel."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import esper
import pytest

from components import CallError
from components import CallEventKind
from components import CallId
from components import CallStatus
from components import CancelCall
from components import CancelReply
from components import DeadlineKind
from components import Entity
from components import ErrorKind
from components import Limits
from components import ProgressBatch
from components import ProgressKind
from components import ReportProgress
from components import ReportResult
from components import SessionId
from components import StatusQuery
from components import SubmitCall
from components import TickContext
from components import TimeoutSettings
from components import ToolCallConfig
from components import ToolCallState
from components import Waiter
from components import finished_snapshot
from components import finished_status
from components import new_call_id
from systems import PHASES
from systems import DeliverySystem
from systems import ExecutorSystem
from systems import IngestSystem
from systems import IntrospectionSystem
from systems import SchedulerSystem
from systems import TimeoutSystem


@pytest.fixture(autouse=True)
def world() -> Iterator[None]:
    name = f"test-{uuid.uuid4()}"
    esper.switch_world(name)
    yield
    esper.switch_world("default")
    esper.delete_world(name)


def context(
    max_running: int = 10, per_session: int = 10, retention: float | None = None
) -> TickContext:
    return TickContext(limits=Limits(max_running, per_session, retention))


def submit(
    ctx: TickContext,
    session: str = "s",
    *,
    hard: float | None = None,
    overdue: float | None = None,
    rejection: CallError | None = None,
    parent: CallId | None = None,
    provider: str | None = None,
) -> Entity:
    config = ToolCallConfig(
        call_id=new_call_id(),
        session_id=SessionId(session),
        tool_name="t",
        tool_input={},
        provider_call_id=provider,
        parent_call_id=parent,
        timeouts=TimeoutSettings(hard, overdue),
    )
    ctx.batch.append(SubmitCall(config, ctx.wall, None, rejection))
    IngestSystem().process(ctx)
    return ctx.index.by_id[config.call_id]


def tick(ctx: TickContext, *messages: object) -> None:
    ctx.batch.extend(messages)  # type: ignore[arg-type]
    for phase in PHASES:
        phase().process(ctx)


def status(ctx: TickContext, entity: Entity) -> CallStatus:
    """The call's status: from the world, or from its record once a tick has ended it."""
    record = ctx.finished.get(entity)
    if record is not None:
        return finished_status(record)
    return esper.component_for_entity(entity, ToolCallState).status


def config(entity: Entity) -> ToolCallConfig:
    return esper.component_for_entity(entity, ToolCallConfig)


# ------------------------------------------------------------------ ingest


def test_ingest_creates_an_indexed_pending_entity() -> None:
    ctx = context()
    entity = submit(ctx, "s")
    assert status(ctx, entity) is CallStatus.PENDING
    assert ctx.index.by_session == {"s": {config(entity).call_id: entity}}
    assert ctx.index.status_counts[CallStatus.PENDING] == 1
    assert ctx.submitted == [entity]


def test_ingest_fails_a_rejected_call_at_once() -> None:
    ctx = context()
    entity = submit(ctx, rejection=CallError(ErrorKind.UNKNOWN_TOOL, "no such tool"))
    assert status(ctx, entity) is CallStatus.FAILED
    assert ctx.submitted == []
    assert ctx.index.status_counts[CallStatus.FAILED] == 1
    assert ctx.index.status_counts[CallStatus.PENDING] == 0


def test_ingest_drops_reports_for_final_or_missing_calls() -> None:
    ctx = context()
    entity = submit(ctx)
    tick(ctx)
    reply = CancelReply()
    tick(ctx, CancelCall(config(entity).call_id, None, "stop", reply))
    assert reply.took
    tick(ctx, ReportResult(entity, "late"), ReportProgress(entity, ProgressKind.LOG, "x", 0.0))
    tick(ctx, ReportResult(999_999, "nobody"))
    assert not esper.entity_exists(entity), "a finished call leaves the world"
    state = finished_snapshot(ctx.finished[entity])
    assert state.status is CallStatus.CANCELLED
    assert state.result is None
    assert state.progress is not None
    assert [entry.kind for entry in state.progress] == [ProgressKind.STARTED]


def test_ingest_tells_each_report_and_folds_past_the_ticks_room() -> None:
    """The tick-wide bound on ``progressed`` events: calls past it fold into one event each,
    and what nobody hears of is counted, not built, while the kept log stays the newest."""
    ctx = context()
    ctx.limits.progress_events_per_tick = 5
    first, second, unheard = submit(ctx, "s"), submit(ctx, "s"), submit(ctx, "quiet")
    tick(ctx)
    ctx.subscribed.add(SessionId("s"))
    ctx.effects.clear()
    notes = [(ProgressKind.PARTIAL, number, 0.0) for number in range(4)]
    batches = [ProgressBatch(entity, lambda: (notes, 2)) for entity in (first, second, unheard)]
    tick(ctx, *batches)
    events = ctx.effects.deliver[SessionId("s")]
    told = [(event.progress.payload, event.folded) for event in events if event.progress]
    assert told == [(0, 2), (1, 0), (2, 0), (3, 0), (3, 5)]
    for entity in (first, second, unheard):
        state = esper.component_for_entity(entity, ToolCallState)
        assert state.progress_seq == 1 + 2 + 4
        assert state.progress is not None
        assert [entry.payload for entry in state.progress.entries][-4:] == [0, 1, 2, 3]


def test_ingest_cancel_respects_session_scope() -> None:
    ctx = context()
    entity = submit(ctx, "owner")
    reply = CancelReply()
    tick(ctx, CancelCall(config(entity).call_id, SessionId("other"), "x", reply))
    assert not reply.found
    assert status(ctx, entity) is CallStatus.RUNNING


# --------------------------------------------------------------- scheduler


def test_scheduler_takes_sessions_in_turn_and_skips_cancelled() -> None:
    ctx = context(max_running=2, per_session=2)
    a = [submit(ctx, "a") for _ in range(3)]
    b = [submit(ctx, "b") for _ in range(2)]
    tick(ctx, CancelCall(config(a[0]).call_id, None, "x", CancelReply()))
    assert [status(ctx, e) for e in a + b] == [
        CallStatus.CANCELLED,
        CallStatus.RUNNING,
        CallStatus.PENDING,
        CallStatus.RUNNING,
        CallStatus.PENDING,
    ]
    assert ctx.queues.running_by_session == {"a": 1, "b": 1}


def test_a_session_at_its_cap_rejoins_the_ring_when_a_call_ends() -> None:
    ctx = context(max_running=10, per_session=1)
    first, second = submit(ctx, "a"), submit(ctx, "a")
    tick(ctx)
    assert (status(ctx, first), status(ctx, second)) == (CallStatus.RUNNING, CallStatus.PENDING)
    assert "a" not in ctx.queues.in_ring
    tick(ctx, ReportResult(first, 1))
    assert status(ctx, second) is CallStatus.RUNNING
    assert ctx.queues.running_total == 1
    assert ctx.queues.slot_holders == {second}


def test_a_child_of_a_running_parent_skips_the_queue_but_counts() -> None:
    ctx = context(max_running=1, per_session=1)
    parent = submit(ctx)
    tick(ctx)
    child = submit(ctx, parent=config(parent).call_id)
    SchedulerSystem().process(ctx)
    assert ctx.admitted == [child]
    assert ctx.queues.running_total == 2
    assert ctx.queues.nested_admissions == 1
    ExecutorSystem().process(ctx)
    queued = submit(ctx)
    tick(ctx, ReportResult(parent, "done"))
    assert status(ctx, queued) is CallStatus.PENDING, "over the cap until the child ends too"
    tick(ctx, ReportResult(child, "done"))
    assert status(ctx, queued) is CallStatus.RUNNING


def test_a_parent_in_another_session_lends_nothing() -> None:
    ctx = context(max_running=10, per_session=1)
    foreign = submit(ctx, "a")
    submit(ctx, "b")
    tick(ctx)
    child = submit(ctx, "b", parent=config(foreign).call_id)
    tick(ctx)
    assert status(ctx, child) is CallStatus.PENDING
    assert ctx.queues.nested_admissions == 0


def test_a_call_cancelled_and_forgotten_while_queued_is_skipped() -> None:
    ctx = context(max_running=10, per_session=1, retention=5)
    first, queued, last = submit(ctx), submit(ctx), submit(ctx)
    tick(ctx, CancelCall(config(queued).call_id, None, "x", CancelReply()))
    ctx.now += 5
    tick(ctx)
    assert not esper.entity_exists(queued)
    tick(ctx, ReportResult(first, 1))
    assert status(ctx, last) is CallStatus.RUNNING


# ---------------------------------------------------------------- executor


def test_executor_starts_admitted_calls_and_arms_deadlines() -> None:
    ctx = context()
    ctx.now, ctx.wall = 100.0, 5000.0
    entity = submit(ctx, hard=5, overdue=2)
    SchedulerSystem().process(ctx)
    ExecutorSystem().process(ctx)
    state = esper.component_for_entity(entity, ToolCallState)
    assert state.status is CallStatus.RUNNING
    assert state.started_at == 5000.0
    assert ctx.effects.start == [entity]
    assert sorted((when, kind) for when, _, _, kind in ctx.deadlines.heap) == [
        (102.0, DeadlineKind.OVERDUE),
        (105.0, DeadlineKind.HARD),
    ]


# ----------------------------------------------------------------- timeout


def test_timeout_fails_running_calls_and_skips_stale_deadlines() -> None:
    ctx = context()
    slow, quick = submit(ctx, hard=5), submit(ctx, hard=5)
    tick(ctx, ReportResult(quick, "fast"))
    ctx.effects.clear()
    ctx.now += 5
    tick(ctx)
    assert status(ctx, slow) is CallStatus.FAILED
    assert status(ctx, quick) is CallStatus.COMPLETED
    assert ctx.effects.cancel == [slow]
    assert ctx.deadlines.heap == []


def test_retention_removes_the_entity_and_every_index_entry() -> None:
    ctx = context(retention=10)
    entity = submit(ctx, "s")
    call_id = config(entity).call_id
    tick(ctx, ReportResult(entity, 1))
    ctx.now += 10
    TimeoutSystem().process(ctx)
    assert not esper.entity_exists(entity)
    assert entity not in ctx.finished
    assert call_id not in ctx.index.by_id
    assert ctx.index.by_session == {}
    assert ctx.index.status_counts[CallStatus.COMPLETED] == 0
    assert ctx.effects.forget == [entity]


def test_retention_forgets_finished_calls_in_the_order_they_ended() -> None:
    """A finished call's retention is its record's due time in a queue, not a deadline in
    the heap: the heap holds only the calls' own (stale once they ended) hard deadlines."""
    ctx = context(retention=10)
    first, second = submit(ctx, hard=30), submit(ctx, hard=30)
    tick(ctx)
    tick(ctx, ReportResult(first, 1))
    ctx.now += 1
    tick(ctx, ReportResult(second, 2))
    assert [kind for _, _, _, kind in ctx.deadlines.heap] == [DeadlineKind.HARD] * 2
    assert list(ctx.finished.queue) == [first, second]
    ctx.effects.clear()
    ctx.now += 9
    tick(ctx)
    assert ctx.effects.forget == [first]
    assert ctx.finished.next_due() == ctx.now + 1
    ctx.now += 1
    tick(ctx)
    assert ctx.effects.forget == [first, second]
    assert ctx.finished.next_due() is None
    assert ctx.index.by_id == {}


def test_provider_ids_are_indexed_per_session_until_retention_forgets_their_calls() -> None:
    ctx = context(retention=1)
    first, second = submit(ctx, "a", provider="toolu_1"), submit(ctx, "a", provider="toolu_1")
    other = submit(ctx, "b", provider="toolu_1")
    assert ctx.index.with_provider_id(SessionId("a"), "toolu_1") == [first, second]
    assert ctx.index.with_provider_id(SessionId("b"), "toolu_1") == [other]
    assert ctx.index.with_provider_id(SessionId("c"), "toolu_1") == []
    tick(ctx, ReportResult(first, 1))
    ctx.now += 1
    tick(ctx, ReportResult(second, 2), ReportResult(other, 3))
    assert ctx.index.with_provider_id(SessionId("a"), "toolu_1") == [second]
    ctx.now += 1
    tick(ctx)
    assert ctx.index.by_provider == {}
    assert ctx.index.by_session == {}


# ----------------------------------------------------------- introspection


def test_waiters_are_released_on_final_or_at_their_deadline() -> None:
    ctx = context()
    done, slow = submit(ctx), submit(ctx)
    released: list[str] = []
    on_done = Waiter(done, None, lambda: released.append("done"))
    on_slow = Waiter(slow, ctx.now + 3, lambda: released.append("slow"))
    ctx.waiters.by_entity = {done: [on_done], slow: [on_slow]}
    ctx.waiters.deadlines = [(ctx.now + 3, 1, on_slow)]
    tick(ctx, ReportResult(done, 1))
    assert ctx.effects.release == [on_done]
    assert not on_done.timed_out
    ctx.effects.clear()
    ctx.now += 3
    IntrospectionSystem().process(ctx)
    assert ctx.effects.release == [on_slow]
    assert on_slow.timed_out
    assert ctx.waiters.by_entity == {}


def test_queued_status_queries_are_resolved() -> None:
    ctx = context()
    entity = submit(ctx)
    known = StatusQuery(config(entity).call_id, lambda found: None)
    unknown = StatusQuery(CallId("missing"), lambda found: None)
    tick(ctx, known, unknown)
    assert ctx.effects.answer == [(known, entity), (unknown, None)]


# ---------------------------------------------------------------- delivery


def test_events_are_grouped_by_subscribed_session() -> None:
    ctx = context()
    ctx.subscribed = {SessionId("watched")}
    watched = submit(ctx, "watched")
    submit(ctx, "ignored")
    ExecutorSystem().process(ctx)
    SchedulerSystem().process(ctx)
    ExecutorSystem().process(ctx)
    DeliverySystem().process(ctx)
    events = ctx.effects.deliver
    assert list(events) == ["watched"]
    assert [event.kind for event in events[SessionId("watched")]] == [
        CallEventKind.QUEUED,
        CallEventKind.STARTED,
    ]
    assert all(event.call_id == config(watched).call_id for event in events["watched"])  # type: ignore[index]


# ------------------------------------------------------------------- cost


def test_no_system_scans_the_world(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tick's cost follows what changed: systems use indexes, never esper queries."""
    ctx = context(max_running=30, per_session=30, retention=1)
    entities = [submit(ctx, f"s{i % 3}", hard=2, overdue=1) for i in range(30)]

    def scan(*_: object) -> None:
        raise AssertionError("a system scanned the world")

    monkeypatch.setattr(esper, "get_component", scan)
    monkeypatch.setattr(esper, "get_components", scan)
    tick(ctx, ReportResult(entities[0], 1), ReportProgress(entities[1], ProgressKind.LOG, "", 0))
    for _ in range(3):
        ctx.now += 1
        tick(ctx)
    assert ctx.stats.calls_forgotten == 30
    assert ctx.index.by_id == {}
