"""Issue 51: a finished call the runtime keeps is one compact record, and answers as it ended.

Once a call ends it leaves the world (the tick that ends it retires it); status, wait,
looks, listings, cancels, completions and statistics read its record until retention
forgets it, and must say exactly what the call's final event said.
"""

from __future__ import annotations

import anyio
import pytest

from agentos import CallEvent
from agentos import CallOptions
from agentos import CallSnapshot
from agentos import CallStatus
from agentos import ErrorKind
from agentos import ManualClock
from agentos import Runtime
from agentos import UnknownCallError
from agentos.testing import Puppet
from agentos.testing import settle


async def ended(runtime: Runtime, session: str) -> dict[str, CallSnapshot]:
    """The snapshot each call of ``session`` ended with, as its final event told it."""
    told: dict[str, CallSnapshot] = {}

    def listen(event: CallEvent) -> None:
        if event.snapshot is not None:
            told[event.call_id] = event.snapshot

    runtime.on_call_events(session, listen)
    await settle(runtime)
    return told


@pytest.mark.anyio
async def test_every_read_of_a_finished_call_says_what_its_final_event_said(
    puppet: Puppet, clock: ManualClock
) -> None:
    async with Runtime([puppet.tool], clock=clock) as runtime:
        told = await ended(runtime, "s")
        said = runtime.submit(
            "puppet", {"label": "said"}, session_id="s", provider_call_id="toolu_1"
        )
        failed = runtime.submit("puppet", {}, session_id="s", provider_call_id="toolu_1")
        cancelled = runtime.submit("puppet", {}, session_id="s")
        timed_out = runtime.submit("puppet", {}, session_id="s", options=CallOptions(timeout=5))
        deferred = runtime.submit("puppet", {}, session_id="s", options=CallOptions(deferred=True))
        unknown_tool = runtime.submit("nope", {"a": [1, {"b": None}]}, session_id="s")
        await settle(runtime)
        puppet.progress(said, {"done": 3, "of": 4})
        for line in range(60):  # past the 50 kept: some are dropped, the newest line stays
            puppet.log(said, f"line {line}")
        puppet.complete(said, {"answer": [1, 2.5, "three", True, None]})
        puppet.fail(failed, "it broke")
        await settle(runtime)
        runtime.cancel(cancelled, "no longer needed")
        clock.advance(5)
        await settle(runtime)
        runtime.complete(deferred, error="the outside failed it")
        await settle(runtime)

        calls = [said, failed, cancelled, timed_out, deferred, unknown_tool]
        assert set(told) == set(calls)
        for call_id in calls:
            final = told[call_id]
            assert final.is_final
            assert runtime.status(call_id) == final
            assert runtime.status(call_id, session_id="s") == final
            assert await runtime.wait(call_id, timeout=0) == final
            assert runtime.look(call_id, "observer") == (final, True)
            assert runtime.look(call_id, "observer") == (final, False)
            assert runtime.owner(call_id) == "s"
            with pytest.raises(UnknownCallError):
                runtime.status(call_id, session_id="another")
        assert runtime.list_calls("s") == [told[call_id] for call_id in calls]
        assert runtime.list_calls("s", include_final=False) == []
        assert runtime.resolve("toolu_1", session_id="s") == failed, "the newest of the id"

        kept = runtime.status(said)
        assert kept.progress_dropped > 0 and kept.newest_log is not None
        assert kept.newest_log.payload == "line 59"
        assert kept.newest_progress is not None and kept.newest_progress.payload == {
            "done": 3,
            "of": 4,
        }
        assert runtime.status(timed_out).error is not None
        assert runtime.status(timed_out).error.kind is ErrorKind.TIMED_OUT  # type: ignore[union-attr]
        assert runtime.status(cancelled).cancel_reason == "no longer needed"
        assert runtime.status(unknown_tool).status is CallStatus.FAILED


@pytest.mark.anyio
async def test_what_a_reader_changes_in_a_finished_calls_answer_changes_nothing_kept(
    puppet: Puppet,
) -> None:
    async with Runtime([puppet.tool]) as runtime:
        call_id = runtime.submit("puppet", {"label": "kept"})
        await settle(runtime)
        puppet.complete(call_id, {"items": [1, 2]})
        with anyio.fail_after(5):
            answer = await runtime.wait(call_id)
        answer.tool_input["label"] = "changed"
        assert isinstance(answer.result, dict) and isinstance(answer.result["items"], list)
        answer.result["items"].append(3)
        again = runtime.status(call_id)
        assert again.tool_input == {"label": "kept"}
        assert again.result == {"items": [1, 2]}


@pytest.mark.anyio
async def test_cancelling_or_completing_a_finished_call_moves_nothing(puppet: Puppet) -> None:
    async with Runtime([puppet.tool]) as runtime:
        done = runtime.submit("puppet", {}, session_id="s")
        deferred = runtime.submit("puppet", {}, session_id="s", options=CallOptions(deferred=True))
        await settle(runtime)
        puppet.complete(done, 1)
        runtime.complete(deferred, 2)
        await settle(runtime)
        outcome = runtime.cancel(done, "too late")
        assert (outcome.cancelled, outcome.previous_status) == (False, CallStatus.COMPLETED)
        with pytest.raises(UnknownCallError):
            runtime.cancel(done, session_id="another")
        again = runtime.complete(deferred, 3)
        assert (again.applied, again.previous_status) == (False, CallStatus.COMPLETED)
        with pytest.raises(UnknownCallError):  # only a deferred call is completed from outside
            runtime.complete(done, 3)
        assert runtime.status(done).result == 1
        assert runtime.status(done).cancel_reason is None
        assert runtime.status(deferred).result == 2


@pytest.mark.anyio
async def test_a_finished_call_counts_until_retention_forgets_it(
    puppet: Puppet, clock: ManualClock
) -> None:
    async with Runtime([puppet.tool], clock=clock, retention_seconds=10) as runtime:
        done = runtime.submit("puppet", {}, options=CallOptions(timeout=30, overdue_after=5))
        live = runtime.submit("puppet", {}, options=CallOptions(timeout=30, overdue_after=5))
        await settle(runtime)
        puppet.complete(done, 1)
        await settle(runtime)
        statistics = runtime.statistics()
        assert statistics.calls_by_status[CallStatus.COMPLETED] == 1
        assert statistics.calls_by_status[CallStatus.RUNNING] == 1
        assert dict(statistics.timers_armed) == {"hard": 1, "overdue": 1, "retention": 1}
        clock.advance(10)
        await settle(runtime)
        with pytest.raises(UnknownCallError):
            runtime.status(done)
        assert runtime.list_calls("default") == [runtime.status(live)]
        statistics = runtime.statistics()
        assert statistics.calls_forgotten == 1
        assert statistics.calls_by_status[CallStatus.COMPLETED] == 0
        assert dict(statistics.timers_armed) == {"hard": 1, "overdue": 1, "retention": 0}


@pytest.mark.anyio
async def test_a_call_nested_under_a_finished_parent_queues_as_any_other(puppet: Puppet) -> None:
    """The scheduler looks its parent up: one that has ended is not running, so the child
    waits for a slot of its own (it read the parent's components, gone once it ended)."""
    async with Runtime([puppet.tool], max_running_per_session=1) as runtime:
        parent = runtime.submit("puppet", {})
        await settle(runtime)
        puppet.complete(parent, None)
        await settle(runtime)
        child = runtime.submit("puppet", {}, parent_call_id=parent)
        await settle(runtime)
        assert runtime.status(child).status is CallStatus.RUNNING
        assert runtime.statistics().nested_admissions == 0
        puppet.complete(child, "ok")
        with anyio.fail_after(5):
            assert (await runtime.wait(child)).result == "ok"
