"""The Runtime's Python API: submit, status, wait, cancel, list, subscribe, statistics."""

from __future__ import annotations

import threading

import anyio
import pytest
from structlog.testing import capture_logs

from agentos import CallEvent
from agentos import CallEventKind
from agentos import CallOptions
from agentos import CallSnapshot
from agentos import CallStatus
from agentos import ManualClock
from agentos import Runtime
from agentos import RuntimeClosedError
from agentos import ToolContext
from agentos import UnknownCallError
from agentos import WrongThreadError
from agentos import tool
from agentos.testing import Puppet
from agentos.testing import settle
from tests.kernel.conftest import held_in_a_thread
from tests.support.arguments import Empty
from tests.support.rendezvous import rendezvous

pytestmark = pytest.mark.anyio


@pytest.mark.runtime(max_running=1)
async def test_submit_returns_at_once_and_status_reads_every_state(
    puppet: Puppet, runtime: Runtime
) -> None:
    first = runtime.submit("puppet", {"label": "a"}, session_id="s")
    second = runtime.submit("puppet", {"label": "b"}, session_id="s")
    assert runtime.status(first).status is CallStatus.RUNNING
    assert runtime.status(second).status is CallStatus.PENDING
    await settle(runtime)
    puppet.progress(first, {"percent": 50})
    await settle(runtime)
    seen = runtime.status(first)
    # The runtime's ``started`` entry comes first.
    assert [entry.payload for entry in seen.progress] == [None, {"percent": 50}]
    puppet.complete(first, {"answer": 42})
    final = await runtime.wait(first)
    assert final.status is CallStatus.COMPLETED
    assert final.result == {"answer": 42}
    assert final.is_final and final.completed_at is not None
    await settle(runtime)
    assert runtime.status(second).status is CallStatus.RUNNING
    assert final.tool_input == {"label": "a"}


async def test_two_long_calls_run_concurrently() -> None:
    """Each call waits until the other has started: run one after the other, they would hang."""
    async with Runtime([rendezvous()]) as runtime:
        calls = [runtime.submit("rendezvous", {}) for _ in range(2)]
        with anyio.fail_after(5):
            results = [await runtime.wait(call) for call in calls]
    assert [snapshot.result for snapshot in results] == ["met", "met"]


async def test_sync_tools_run_concurrently_in_threads() -> None:
    barrier = threading.Barrier(2, timeout=5)

    @tool
    def meet(args: Empty) -> int:
        return barrier.wait()

    async with Runtime([meet]) as runtime:
        calls = [runtime.submit("meet", {}) for _ in range(2)]
        results = sorted([(await runtime.wait(call)).result for call in calls])  # type: ignore[type-var]
    assert results == [0, 1]


async def test_cancel_stops_a_running_call_and_its_cleanup_runs(
    puppet: Puppet, runtime: Runtime
) -> None:
    call = runtime.submit("puppet", {})
    await settle(runtime)
    outcome = runtime.cancel(call, "user changed their mind")
    assert outcome.cancelled and outcome.previous_status is CallStatus.RUNNING
    snapshot = runtime.status(call)
    assert snapshot.status is CallStatus.CANCELLED
    assert snapshot.cancel_reason == "user changed their mind"
    await settle(runtime)
    assert puppet.calls[call].cancelled and puppet.calls[call].cleaned_up
    again = runtime.cancel(call)
    assert not again.cancelled and again.previous_status is CallStatus.CANCELLED


@pytest.mark.runtime(max_running=1)
async def test_cancel_of_a_pending_call_never_starts_it(puppet: Puppet, runtime: Runtime) -> None:
    running = runtime.submit("puppet", {})
    queued = runtime.submit("puppet", {})
    outcome = runtime.cancel(queued)
    assert outcome.previous_status is CallStatus.PENDING and outcome.cancelled
    puppet.complete(running)
    await runtime.wait(running)
    await settle(runtime)
    assert not puppet.started(queued)
    assert runtime.status(queued).status is CallStatus.CANCELLED


async def test_a_late_result_never_overwrites_cancelled(clock: ManualClock) -> None:
    stubborn, release = held_in_a_thread("stubborn", "finished anyway")
    async with Runtime([stubborn], clock=clock) as runtime:
        call = runtime.submit("stubborn", {})
        await settle(runtime)
        assert runtime.cancel(call).cancelled
        release.set()
        await settle(runtime)
        snapshot = runtime.status(call)
        assert snapshot.status is CallStatus.CANCELLED and snapshot.result is None


async def test_wait_returns_the_current_snapshot_when_time_runs_out(
    clock: ManualClock, runtime: Runtime
) -> None:
    call = runtime.submit("puppet", {})
    results = []

    async def wait() -> None:
        results.append(await runtime.wait(call, timeout=30))

    async with anyio.create_task_group() as group:
        group.start_soon(wait)
        await settle(runtime)
        clock.advance(29)
        await settle(runtime)
        assert results == []
        clock.advance(1)
    assert results[0].status is CallStatus.RUNNING and not results[0].is_final
    assert runtime.statistics().waiters == 0


async def test_many_waiters_are_released_by_one_completion(
    puppet: Puppet, runtime: Runtime
) -> None:
    call = runtime.submit("puppet", {})
    results = []

    async def wait() -> None:
        results.append((await runtime.wait(call)).result)

    async with anyio.create_task_group() as group:
        for _ in range(3):
            group.start_soon(wait)
        await settle(runtime)
        assert runtime.statistics().waiters == 3
        puppet.complete(call, "done")
    assert results == ["done"] * 3


async def test_a_cancelled_waiter_leaves_no_trace(runtime: Runtime) -> None:
    call = runtime.submit("puppet", {})
    with anyio.move_on_after(0.05):
        await runtime.wait(call)
    assert runtime.statistics().waiters == 0


async def test_list_calls_is_per_session_in_submission_order(
    puppet: Puppet, runtime: Runtime
) -> None:
    a1 = runtime.submit("puppet", {}, session_id="a")
    b1 = runtime.submit("puppet", {}, session_id="b")
    a2 = runtime.submit("puppet", {}, session_id="a")
    await settle(runtime)
    puppet.complete(a1)
    await settle(runtime)
    assert [s.call_id for s in runtime.list_calls("a")] == [a1, a2]
    assert [s.call_id for s in runtime.list_calls("a", include_final=False)] == [a2]
    assert [s.call_id for s in runtime.list_calls("b")] == [b1]
    assert runtime.list_calls("nobody") == []


async def test_session_scope_hides_other_sessions_calls(runtime: Runtime) -> None:
    call = runtime.submit("puppet", {}, session_id="owner")
    with pytest.raises(UnknownCallError) as foreign:
        runtime.status(call, session_id="intruder")
    with pytest.raises(UnknownCallError) as missing:
        runtime.status("no-such-call", session_id="intruder")
    assert str(foreign.value) == str(missing.value).replace("no-such-call", call)
    with pytest.raises(UnknownCallError):
        runtime.cancel(call, session_id="intruder")
    assert runtime.status(call).status is CallStatus.RUNNING
    assert runtime.status(call, session_id="owner").session_id == "owner"


async def test_unknown_ids_raise_a_specific_error(clock: ManualClock) -> None:
    async with Runtime([], clock=clock) as runtime:
        for read in (runtime.status, runtime.cancel):
            with pytest.raises(UnknownCallError, match="no tool call with id 'nope'"):
                read("nope")
        with pytest.raises(UnknownCallError):
            await runtime.wait("nope")


async def test_subscribers_see_their_sessions_events_in_order(
    puppet: Puppet, runtime: Runtime
) -> None:
    async with runtime.subscribe("mine") as events:
        call = runtime.submit("puppet", {}, session_id="mine")
        runtime.submit("puppet", {}, session_id="other")
        await settle(runtime)
        puppet.progress(call, {"step": 1})
        puppet.complete(call, 1)
        await runtime.wait(call)
        kinds = []
        with anyio.move_on_after(0.1):
            async for event in events:
                assert event.session_id == "mine" and event.call_id == call
                kinds.append(event.kind)
                if event.kind is CallEventKind.COMPLETED:
                    break
    assert kinds == [
        CallEventKind.QUEUED,
        CallEventKind.STARTED,
        CallEventKind.PROGRESSED,
        CallEventKind.COMPLETED,
    ]
    assert runtime.statistics().subscribers == 0


async def test_the_event_that_ends_a_call_carries_its_final_snapshot(clock: ManualClock) -> None:
    """A listener hears the outcome in the event, without asking the runtime mid-delivery."""
    puppet = Puppet()
    heard: list[CallEvent] = []
    async with Runtime([puppet.tool], clock=clock) as runtime:
        runtime.on_call_events("mine", heard.append)
        done, failed = (runtime.submit("puppet", {}, session_id="mine") for _ in range(2))
        cancelled = runtime.submit("puppet", {}, session_id="mine")
        await settle(runtime)
        puppet.progress(done, {"step": 1})
        puppet.complete(done, {"answer": 42})
        puppet.fail(failed, "no")
        runtime.cancel(cancelled, "enough")
        await settle(runtime)
    ends = {e.call_id: e.snapshot for e in heard if e.status.is_final}
    assert all(e.snapshot is None for e in heard if not e.status.is_final)
    finished, broke, stopped = (ends[call] for call in (done, failed, cancelled))
    assert finished is not None and finished.result == {"answer": 42}
    assert finished.progress[-1].payload == {"step": 1}
    assert broke is not None and broke.error is not None and "no" in broke.error.message
    assert stopped is not None and stopped.cancel_reason == "enough"
    assert {snapshot.status for snapshot in ends.values() if snapshot} == {
        CallStatus.COMPLETED,
        CallStatus.FAILED,
        CallStatus.CANCELLED,
    }
    # made field by field (without the named tuple's defaults): every field is there
    assert all(len(snapshot) == len(CallSnapshot._fields) for snapshot in ends.values() if snapshot)


async def test_statistics_count_every_status(clock: ManualClock) -> None:
    puppet = Puppet()
    async with Runtime([puppet.tool], clock=clock, max_running=2) as runtime:
        calls = [runtime.submit("puppet", {}) for _ in range(4)]
        runtime.submit("missing-tool", {})
        await settle(runtime)
        puppet.complete(calls[0])
        runtime.cancel(calls[1])
        await settle(runtime)
        stats = runtime.statistics()
        assert dict(stats.calls_by_status) == {
            CallStatus.PENDING: 0,
            CallStatus.RUNNING: 2,
            CallStatus.COMPLETED: 1,
            CallStatus.FAILED: 1,
            CallStatus.CANCELLED: 1,
        }
        assert stats.running == 2 and stats.ticks > 0 and stats.last_tick_us > 0


async def test_status_threadsafe_answers_from_another_thread(runtime: Runtime) -> None:
    call = runtime.submit("puppet", {})
    seen = await anyio.to_thread.run_sync(runtime.status_threadsafe, call)
    assert seen.status is CallStatus.RUNNING
    with pytest.raises(UnknownCallError):
        await anyio.to_thread.run_sync(runtime.status_threadsafe, "nope")
    with pytest.raises(RuntimeError, match="other threads"):
        runtime.status_threadsafe(call)


async def test_closing_cancels_what_is_still_live(clock: ManualClock) -> None:
    puppet = Puppet()
    async with Runtime([puppet.tool], clock=clock) as runtime:
        call = runtime.submit("puppet", {})
        await settle(runtime)
    assert puppet.calls[call].cleaned_up
    with pytest.raises(RuntimeClosedError, match="closed"):
        runtime.submit("puppet", {})
    with pytest.raises(RuntimeClosedError):
        runtime.status(call)


async def test_a_runtime_must_be_entered_before_use() -> None:
    runtime = Runtime([])
    with pytest.raises(RuntimeClosedError, match="not started"):
        runtime.submit("x", {})


async def test_two_runtimes_in_one_process_keep_separate_worlds(clock: ManualClock) -> None:
    puppet = Puppet()
    async with (
        Runtime([puppet.tool], clock=clock) as one,
        Runtime([puppet.tool], clock=clock) as two,
    ):
        a = one.submit("puppet", {})
        b = two.submit("puppet", {})
        await settle(one)
        puppet.complete(a, "one")
        assert (await one.wait(a)).result == "one"
        assert two.status(b).status is CallStatus.RUNNING
        with pytest.raises(UnknownCallError):
            two.status(a)


async def test_a_deferred_call_waits_for_its_outcome_from_outside(
    puppet: Puppet, runtime: Runtime
) -> None:
    call = runtime.submit("puppet", {}, options=CallOptions(deferred=True))
    failing = runtime.submit("puppet", {}, options=CallOptions(deferred=True))
    await settle(runtime)
    assert runtime.status(call).status is CallStatus.PENDING
    assert not puppet.started(call)
    first = runtime.complete(call, {"approved": True})
    assert first.applied
    assert first.previous_status is CallStatus.PENDING
    assert (await runtime.wait(call)).result == {"approved": True}
    again = runtime.complete(call, "other")
    assert not again.applied
    assert again.previous_status is CallStatus.COMPLETED
    runtime.complete(failing, error="the reviewer said no")
    snapshot = runtime.status(failing)
    assert snapshot.status is CallStatus.FAILED
    assert snapshot.error is not None
    assert snapshot.error.message == "the reviewer said no"


async def test_only_deferred_calls_can_be_completed_from_outside(runtime: Runtime) -> None:
    ordinary = runtime.submit("puppet", {})
    with pytest.raises(UnknownCallError):
        runtime.complete(ordinary, 1)
    with pytest.raises(UnknownCallError):
        runtime.complete("nope", 1)
    deferred = runtime.submit("puppet", {}, options=CallOptions(deferred=True))
    with pytest.raises(ValueError, match="the result is not JSON"):
        runtime.complete(deferred, {1, 2})
    assert runtime.status(ordinary).status is CallStatus.RUNNING
    assert runtime.status(deferred).status is CallStatus.PENDING


async def test_call_event_listeners_hear_their_session_and_cannot_break_it(
    clock: ManualClock,
) -> None:
    puppet = Puppet()
    heard: list[tuple[str, str]] = []

    def broken(event: object) -> None:
        raise RuntimeError("listener bug")

    async with Runtime([puppet.tool], clock=clock) as runtime:
        stop = runtime.on_call_events("mine", lambda e: heard.append((e.call_id, e.kind)))
        runtime.on_call_events("mine", broken)
        call = runtime.submit("puppet", {}, session_id="mine")
        runtime.submit("puppet", {}, session_id="other")
        await settle(runtime)
        puppet.complete(call, 1)
        assert (await runtime.wait(call)).result == 1
        stop()
        runtime.cancel(runtime.submit("puppet", {}, session_id="mine"))
    assert heard == [
        (call, CallEventKind.QUEUED),
        (call, CallEventKind.STARTED),
        (call, CallEventKind.COMPLETED),
    ]


async def test_a_listener_hears_only_the_kinds_it_asks_for(clock: ManualClock) -> None:
    """``kinds`` filters a listener's events; a listener of every kind beside it still
    hears them all, and once it stops the filtered one goes on as before."""
    puppet = Puppet()
    ends: list[CallEventKind] = []
    everything: list[CallEventKind] = []
    async with Runtime([puppet.tool], clock=clock) as runtime:
        runtime.on_call_events(
            "mine", lambda e: ends.append(e.kind), kinds={CallEventKind.COMPLETED}
        )
        first = runtime.submit("puppet", {}, session_id="mine")
        await settle(runtime)
        stop = runtime.on_call_events("mine", lambda e: everything.append(e.kind))
        second = runtime.submit("puppet", {}, session_id="mine")
        await settle(runtime)
        puppet.progress(second, {"step": 1})
        await settle(runtime)
        for call in (first, second):
            puppet.complete(call, 1)
            await settle(runtime)
        stop()
        third = runtime.submit("puppet", {}, session_id="mine")
        await settle(runtime)
        puppet.complete(third, 1)
        await settle(runtime)
        with pytest.raises(ValueError, match="'finished' is not a valid CallEventKind"):
            runtime.on_call_events("mine", ends.append, kinds={"finished"})  # type: ignore[arg-type]
    assert ends == [CallEventKind.COMPLETED] * 3
    assert everything == [
        CallEventKind.QUEUED,
        CallEventKind.STARTED,
        CallEventKind.PROGRESSED,
        CallEventKind.COMPLETED,
        CallEventKind.COMPLETED,
    ]


async def test_last_status_is_the_world_as_the_last_tick_left_it(clock: ManualClock) -> None:
    """``last_status`` applies nothing queued, so a call-event callback may read it while a
    tick delivers; it reads its own world beside another runtime's, knows no other id,
    refuses a foreign thread and, closed, answers None (it never crashes a session)."""
    puppet, theirs = Puppet(), Puppet()
    heard: list[tuple[CallEventKind, CallStatus | None]] = []
    async with (
        Runtime([puppet.tool], clock=clock) as runtime,
        Runtime([theirs.tool], clock=ManualClock()) as beside,
    ):
        runtime.on_call_events(
            "mine",
            lambda e: heard.append((e.kind, runtime.last_status(e.call_id))),
            kinds={CallEventKind.STARTED, CallEventKind.COMPLETED},
        )
        call = runtime.submit("puppet", {}, session_id="mine")
        assert runtime.last_status(call) is None, "no tick has applied the submit yet"
        await settle(runtime)
        other = beside.submit("puppet", {}, session_id="mine")
        await settle(beside)
        assert (runtime.last_status(call), beside.last_status(other)) == ("running", "running")
        assert runtime.last_status(other) is None
        with pytest.raises(WrongThreadError, match="status_threadsafe"):
            await anyio.to_thread.run_sync(lambda: runtime.last_status(call))
        puppet.complete(call, 1)
        await settle(runtime)
        assert runtime.last_status(call) is CallStatus.COMPLETED
    assert runtime.last_status(call) is None, "closed: a late reader gets no status, no error"
    assert heard == [
        (CallEventKind.STARTED, CallStatus.RUNNING),
        (CallEventKind.COMPLETED, CallStatus.COMPLETED),
    ]


async def test_a_hand_off_runs_next_in_the_task_of_the_call_that_finished(
    clock: ManualClock,
) -> None:
    release = anyio.Event()
    followed = anyio.Event()
    tasks: dict[str, int] = {}
    handed: list[tuple[str, bool]] = []

    @tool
    async def quick(args: Empty) -> int:
        await release.wait()
        tasks["tool"] = anyio.get_current_task().id
        return 1

    async with Runtime([quick], clock=clock) as runtime:

        async def follow_up(name: str) -> None:
            tasks[name] = anyio.get_current_task().id
            assert runtime.status(call).status is CallStatus.COMPLETED
            if name == "mine":
                followed.set()

        def listen(event: CallEvent) -> None:
            if event.kind in (
                CallEventKind.COMPLETED,
                CallEventKind.QUEUED,
                CallEventKind.CANCELLED,
            ):
                handed.append((f"mine {event.kind}", runtime.hand_off(lambda: follow_up("mine"))))

        runtime.on_call_events("mine", listen)
        assert not runtime.hand_off(lambda: follow_up("never"))  # not from a callback
        with pytest.raises(TypeError, match="hand_off takes a coroutine function, got int"):
            runtime.hand_off(5)  # type: ignore[arg-type]
        call = runtime.submit("quick", {}, session_id="mine")
        await settle(runtime)
        handed.clear()
        release.set()
        # queued behind the finishing call: reported by the same tick, handed off to a new task
        runtime.cancel(runtime.submit("quick", {}, session_id="mine"))
        with anyio.fail_after(5):
            await followed.wait()
        assert tasks["mine"] == tasks["tool"]
        assert handed[:2] == [("mine queued", False), ("mine cancelled", False)]
        assert handed[2:] == [("mine completed", True)]


async def test_a_hand_off_to_another_session_gets_a_task_of_its_own(clock: ManualClock) -> None:
    release = anyio.Event()
    done = anyio.Event()
    tasks: dict[str, int] = {}

    @tool
    async def quick(args: Empty, ctx: ToolContext) -> int:
        await release.wait()
        tasks[f"tool {ctx.session_id}"] = anyio.get_current_task().id
        return 1

    async with Runtime([quick], clock=clock) as runtime:

        async def record(name: str) -> None:
            tasks[name] = anyio.get_current_task().id
            if len(tasks) == 3:
                done.set()

        runtime.on_call_events(
            "a",
            lambda e: e.kind is CallEventKind.COMPLETED and runtime.hand_off(lambda: record("a")),
        )
        runtime.on_call_events(
            "b", lambda e: e.kind is CallEventKind.QUEUED and runtime.hand_off(lambda: record("b"))
        )
        runtime.submit("quick", {}, session_id="a")
        await settle(runtime)
        release.set()  # the tool's task runs before the driver: its tick also takes b's submit
        runtime.submit("quick", {}, session_id="b")
        with anyio.fail_after(5):
            await done.wait()
        statistics = runtime.statistics()
    assert tasks["a"] == tasks["tool a"]
    assert tasks["b"] != tasks["tool a"]
    assert (statistics.hand_offs_here, statistics.hand_offs_spawned) == (1, 1)


async def test_a_failing_hand_off_is_logged_and_harms_nothing(clock: ManualClock) -> None:
    puppet = Puppet()

    async def broken() -> None:
        raise RuntimeError("follow-up bug")

    async with Runtime([puppet.tool], clock=clock) as runtime:
        runtime.on_call_events("s", lambda e: runtime.hand_off(broken))
        first = runtime.submit("puppet", {}, session_id="s")
        second = runtime.submit("puppet", {}, session_id="s")
        await settle(runtime)
        with capture_logs() as logs:
            puppet.complete(first, 1)
            assert (await runtime.wait(first)).result == 1
            await settle(runtime)
        puppet.complete(second, 2)
        assert (await runtime.wait(second)).result == 2
    failures = [entry for entry in logs if entry["event"] == "call_event_hand_off.failed"]
    assert failures and failures[0]["error"] == "RuntimeError: follow-up bug"


async def test_a_batch_starts_its_calls_in_one_tick_of_its_own(runtime: Runtime) -> None:
    """Submits inside ``batch()`` are applied as it ends, in the caller's task: the calls are
    running at once and the driver is not woken for a tick of its own."""
    await settle(runtime)
    ticks = runtime.statistics().ticks
    with runtime.batch():
        calls = [runtime.submit("puppet", {"label": str(n)}, session_id="s") for n in "ab"]
        assert runtime.statistics().ticks == ticks, "nothing applied inside the batch"
        assert runtime.pending_work()
    assert not runtime.pending_work()
    assert runtime.statistics().ticks == ticks + 1
    for _ in range(3):
        await anyio.lowlevel.checkpoint()
    assert runtime.statistics().ticks == ticks + 1, "the driver had nothing left to tick"
    assert all(runtime.status(call).status is CallStatus.RUNNING for call in calls)


async def test_a_batch_holds_back_no_other_tasks_submits(clock: ManualClock) -> None:
    """A batch open across an await delays only its own task's submits."""
    puppet = Puppet()
    release = anyio.Event()
    async with Runtime([puppet.tool], clock=clock) as runtime, anyio.create_task_group() as tg:

        async def batching() -> None:
            with runtime.batch():
                runtime.submit("puppet", {"label": "held"}, session_id="a")
                await release.wait()

        tg.start_soon(batching)
        await anyio.lowlevel.checkpoint()
        other = runtime.submit("puppet", {"label": "other"}, session_id="b")
        with anyio.fail_after(5):
            while not puppet.calls.get(other, None) or not puppet.calls[other].started:
                await anyio.lowlevel.checkpoint()
        release.set()

        def failing() -> None:
            with runtime.batch():
                runtime.submit("puppet", {"label": "late"}, session_id="a")
                raise RuntimeError("the caller's own error")

        with pytest.raises(RuntimeError):
            failing()
        assert not runtime.pending_work(), "a batch that raised still applied what it held"


async def test_a_shared_batch_leaves_its_submits_to_a_tick_already_coming(
    puppet: Puppet,
    runtime: Runtime,
) -> None:
    """Issue 29: with ``share_tick`` and a call running (its report will tick), batches
    leave their submits to one coming tick instead of a tick each; a read sees them at
    once all the same."""
    await started(puppet, runtime.submit("puppet", {"label": "running"}, session_id="s"))
    await settle(runtime)
    ticks = runtime.statistics().ticks
    shared = []
    for label in "ab":
        with runtime.batch(share_tick=True):
            shared.append(runtime.submit("puppet", {"label": label}, session_id=label))
    assert runtime.statistics().ticks == ticks, "neither batch ticked on its own"
    assert runtime.pending_work()
    await started(puppet, *shared)
    assert runtime.statistics().ticks == ticks + 1, "one tick started both"
    assert [runtime.status(call).status for call in shared] == [CallStatus.RUNNING] * 2
    with runtime.batch(share_tick=True):
        late = runtime.submit("puppet", {"label": "late"}, session_id="c")
    assert runtime.pending_work(), "left to the coming tick"
    assert runtime.status(late).status is CallStatus.RUNNING, "a read applies it at once"


async def started(puppet: Puppet, *call_ids: str) -> None:
    """Until each of the puppet's calls ``call_ids`` has started."""
    with anyio.fail_after(5):
        while not all(c in puppet.calls and puppet.calls[c].started for c in call_ids):
            await anyio.lowlevel.checkpoint()


async def test_a_session_status_is_read_right_after_it_changes(clock: ManualClock) -> None:
    """Status news wakes no tick of its own, yet a read sees it at once."""
    async with Runtime([], clock=clock) as runtime:
        runtime.open_session("s", agent="a", model="m")
        await settle(runtime)
        ticks = runtime.statistics().ticks
        runtime.update_session("s", status="requesting", requests=1, errors=0)
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        assert runtime.statistics().ticks == ticks, "no tick for a status alone"
        snapshot = runtime.session("s")
        assert (snapshot.status, snapshot.requests) == ("requesting", 1)


async def test_a_status_applied_later_keeps_the_time_it_changed(clock: ManualClock) -> None:
    async with Runtime([], clock=clock) as runtime:
        runtime.open_session("s", agent="a", model="m")
        await settle(runtime)
        changed = clock.wall()
        runtime.update_session("s", status="requesting", requests=1, errors=0)
        clock.advance(30)
        assert runtime.session("s").updated_at == changed


async def test_a_session_reopened_does_not_take_its_old_status(clock: ManualClock) -> None:
    """A status still waiting for a tick belongs to the session it was said of: a close
    and a reopen in the same tick leave the new session as it opened."""
    async with Runtime([], clock=clock) as runtime:
        runtime.open_session("s", agent="a", model="m")
        await settle(runtime)
        runtime.update_session("s", status="stopped", requests=3, errors=0)
        runtime.close_session("s")
        runtime.open_session("s", agent="a", model="m")
        snapshot = runtime.session("s")
        assert (snapshot.status, snapshot.requests) == ("idle", 0)
