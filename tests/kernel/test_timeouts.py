"""Hard timeouts, overdue events and retention, on the manual clock."""

from __future__ import annotations

import math

import anyio
import pytest

from agentos import CallEventKind
from agentos import CallOptions
from agentos import CallStatus
from agentos import ErrorKind
from agentos import ManualClock
from agentos import Runtime
from agentos import UnknownCallError
from agentos import tool
from agentos.testing import Puppet
from agentos.testing import settle
from tests.support.arguments import Empty
from tests.support.scripting import advance

pytestmark = pytest.mark.anyio


async def test_a_hard_timeout_fails_the_call_and_cancels_the_work(
    clock: ManualClock, puppet: Puppet, runtime: Runtime
) -> None:
    call = runtime.submit("puppet", {}, options=CallOptions(timeout=5))
    await settle(runtime)
    await advance(clock, runtime, 4.9)
    assert runtime.status(call).status is CallStatus.RUNNING
    await advance(clock, runtime, 0.1)
    snapshot = runtime.status(call)
    assert snapshot.status is CallStatus.FAILED
    assert snapshot.error is not None
    assert snapshot.error.kind is ErrorKind.TIMED_OUT
    assert snapshot.error.message == "timed out after 5 s"
    assert puppet.calls[call].cancelled and puppet.calls[call].cleaned_up


@pytest.mark.runtime(max_running=1)
async def test_the_timeout_counts_from_the_start_not_from_the_queue(
    clock: ManualClock, puppet: Puppet, runtime: Runtime
) -> None:
    first = runtime.submit("puppet", {})
    queued = runtime.submit("puppet", {}, options=CallOptions(timeout=10))
    await settle(runtime)
    clock.advance(60)
    puppet.complete(first)
    await settle(runtime)
    assert runtime.status(queued).status is CallStatus.RUNNING
    await advance(clock, runtime, 9)
    assert runtime.status(queued).status is CallStatus.RUNNING
    await advance(clock, runtime, 1)
    assert runtime.status(queued).status is CallStatus.FAILED


async def test_timeouts_come_from_the_call_then_the_tool_then_the_runtime(
    clock: ManualClock,
) -> None:
    @tool(timeout=3)
    async def quick(args: Empty) -> None:
        await anyio.sleep_forever()

    puppet = Puppet()
    async with Runtime([quick, puppet.tool], clock=clock, default_timeout=7) as runtime:
        by_tool = runtime.submit("quick", {})
        by_runtime = runtime.submit("puppet", {})
        by_call = runtime.submit("quick", {}, options=CallOptions(timeout=1))
        never = runtime.submit("puppet", {}, options=CallOptions(timeout=math.inf))
        await settle(runtime)
        ended = {}
        for step in range(1, 9):
            await advance(clock, runtime, 1)
            for call in (by_tool, by_runtime, by_call, never):
                if call not in ended and runtime.status(call).is_final:
                    ended[call] = step
        assert ended == {by_call: 1, by_tool: 3, by_runtime: 7}


async def test_overdue_only_raises_an_event(clock: ManualClock) -> None:
    puppet = Puppet()
    async with Runtime([puppet.tool], clock=clock) as runtime, runtime.subscribe("s") as events:
        call = runtime.submit("puppet", {}, session_id="s", options=CallOptions(overdue_after=30))
        await settle(runtime)
        version = runtime.status(call).version
        await advance(clock, runtime, 30)
        snapshot = runtime.status(call)
        assert snapshot.status is CallStatus.RUNNING
        assert snapshot.overdue
        assert snapshot.version == version + 1
        kinds = [events.receive_nowait().kind for _ in range(3)]
        assert kinds == [CallEventKind.QUEUED, CallEventKind.STARTED, CallEventKind.OVERDUE]
        puppet.complete(call, "worth the wait")
        assert (await runtime.wait(call)).result == "worth the wait"


async def test_finished_calls_are_forgotten_after_retention(clock: ManualClock) -> None:
    puppet = Puppet()
    async with Runtime([puppet.tool], clock=clock, retention_seconds=60) as runtime:
        done = runtime.submit("puppet", {}, session_id="s")
        live = runtime.submit("puppet", {}, session_id="s")
        await settle(runtime)
        puppet.complete(done)
        await runtime.wait(done)
        await advance(clock, runtime, 59)
        assert runtime.status(done).status is CallStatus.COMPLETED
        await advance(clock, runtime, 1)
        with pytest.raises(UnknownCallError):
            runtime.status(done)
        assert [s.call_id for s in runtime.list_calls("s")] == [live]
        stats = runtime.statistics()
        assert stats.calls_forgotten == 1
        assert stats.calls_by_status[CallStatus.COMPLETED] == 0
        await advance(clock, runtime, 3600)
        assert runtime.status(live).status is CallStatus.RUNNING


async def test_an_idle_runtime_does_not_tick(runtime: Runtime) -> None:
    runtime.submit("puppet", {}, options=CallOptions(timeout=100))
    await settle(runtime)
    ticks = runtime.statistics().ticks
    for _ in range(20):
        await anyio.lowlevel.checkpoint()
    await settle(runtime)
    assert runtime.statistics().ticks == ticks


@tool
async def at_once(args: Empty) -> int:
    """Returns at once."""
    return 1


async def test_thousands_of_finished_calls_are_forgotten_each_at_its_own_time(
    clock: ManualClock,
) -> None:
    """30 seconds of 100 calls each, kept 60 s: each second's calls are forgotten together,
    exactly 60 s after they ended, across the point where the dues already passed are
    dropped (1,500 of 3,000)."""
    async with Runtime([at_once], clock=clock, retention_seconds=60) as runtime:
        for _ in range(30):
            calls = [runtime.submit("at_once", {}, session_id="s") for _call in range(100)]
            for call in calls:
                await runtime.wait(call)
            await advance(clock, runtime, 1)
        assert len(runtime.list_calls("s")) == 3000
        await advance(clock, runtime, 29.5)  # 59.5 s after the first second's calls ended
        assert len(runtime.list_calls("s")) == 3000
        for second in range(30):
            await advance(clock, runtime, 1)
            assert len(runtime.list_calls("s")) == 3000 - 100 * (second + 1), second
            assert runtime.statistics().calls_forgotten == 100 * (second + 1)
