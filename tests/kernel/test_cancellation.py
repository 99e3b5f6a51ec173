"""Cancel reaches the work: tasks are cancelled, threads told, process groups killed."""

from __future__ import annotations

import gc
import os
import queue
import threading
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel

from agentos import CallCancelled
from agentos import CallOptions
from agentos import CallStatus
from agentos import ErrorKind
from agentos import ManualClock
from agentos import Runtime
from agentos import ToolContext
from agentos import tool
from agentos.testing import Puppet
from agentos.testing import settle
from tests.kernel.conftest import held_in_a_thread
from tests.support.arguments import Empty
from tests.support.processes import alive
from tests.support.processes import dies_within

pytestmark = pytest.mark.anyio


async def test_a_sync_tool_stops_cooperatively(clock: ManualClock) -> None:
    entered = threading.Event()
    exited = threading.Event()
    outcome: list[str] = []

    @tool
    def polite(args: Empty, ctx: ToolContext) -> str:
        entered.set()
        try:
            while not ctx.wait_cancelled(5):
                pass
            ctx.check_cancelled()
        except CallCancelled as error:
            outcome.append(str(error))
            raise
        finally:
            exited.set()
        return "never"

    async with Runtime([polite], clock=clock) as runtime:
        call = runtime.submit("polite", {})
        assert await anyio.to_thread.run_sync(entered.wait, 5)
        assert runtime.cancel(call).cancelled
        assert runtime.status(call).status is CallStatus.CANCELLED
        assert await anyio.to_thread.run_sync(exited.wait, 5)
    assert outcome == [f"tool call {call} was cancelled"]


async def test_a_sync_tool_that_ignores_cancel_cannot_hold_anything(clock: ManualClock) -> None:
    entered = threading.Event()
    release = threading.Event()
    finished = threading.Event()

    @tool
    def deaf(args: Empty) -> str:
        entered.set()
        release.wait(10)
        finished.set()
        return "late"

    puppet = Puppet()
    async with Runtime([deaf, puppet.tool], clock=clock, max_running=1) as runtime:
        call = runtime.submit("deaf", {})
        queued = runtime.submit("puppet", {})
        assert await anyio.to_thread.run_sync(entered.wait, 5)
        outcome = runtime.cancel(call)
        assert outcome.cancelled
        assert outcome.previous_status is CallStatus.RUNNING
        assert runtime.status(call).status is CallStatus.CANCELLED
        await settle(runtime)
        assert runtime.status(queued).status is CallStatus.RUNNING, "the slot was freed"
        puppet.complete(queued, "ok")
        assert (await runtime.wait(queued)).result == "ok"
        assert not finished.is_set()
        release.set()
        assert await anyio.to_thread.run_sync(finished.wait, 5)
        await settle(runtime)
        assert runtime.status(call).status is CallStatus.CANCELLED
        assert runtime.status(call).result is None


async def test_an_async_tool_that_swallows_cancel_is_still_reported_cancelled(
    clock: ManualClock,
) -> None:
    attempts: list[str] = []
    done = anyio.Event()

    @tool
    async def stubborn(args: Empty) -> str:
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            attempts.append("swallowed")
        try:
            await anyio.sleep(3600)  # anyio cancels again at the next await
        finally:
            attempts.append("cancelled again")
            done.set()
        return "never"

    @tool
    async def returns_anyway(args: Empty) -> str:
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            return "I refuse"
        return "never"

    async with Runtime([stubborn, returns_anyway], clock=clock) as runtime:
        first = runtime.submit("stubborn", {})
        second = runtime.submit("returns_anyway", {})
        await settle(runtime)
        assert runtime.cancel(first).cancelled
        assert runtime.cancel(second).cancelled
        with anyio.fail_after(5):
            await done.wait()
        await settle(runtime)
        assert attempts == ["swallowed", "cancelled again"]
        for call in (first, second):
            snapshot = runtime.status(call)
            assert snapshot.status is CallStatus.CANCELLED
            assert snapshot.result is None


async def test_a_cancel_waits_while_the_tool_is_in_a_shielded_scope(clock: ManualClock) -> None:
    """As anyio's own cancel does: a tool's shielded section (a spawn it must not lose, its
    cleanup) runs to its end though the call was cancelled in it; the cancel meets the
    tool at its first await after, and the call ends cancelled."""
    inside, release, ended = anyio.Event(), anyio.Event(), anyio.Event()
    steps: list[str] = []

    @tool
    async def careful(args: Empty) -> str:
        with anyio.CancelScope(shield=True):
            inside.set()
            await release.wait()
            steps.append("shielded part done")
        try:
            await anyio.sleep_forever()
        finally:
            steps.append("cancelled after")
            ended.set()
        return "never"

    async with Runtime([careful], clock=clock) as runtime:
        call = runtime.submit("careful", {})
        with anyio.fail_after(5):
            await inside.wait()
        assert runtime.cancel(call).cancelled
        for _ in range(10):  # loop passes in which the cancel is tried and held off
            await anyio.lowlevel.checkpoint()
        release.set()
        with anyio.fail_after(5):
            await ended.wait()
        await settle(runtime)
        assert runtime.status(call).status is CallStatus.CANCELLED
    assert steps == ["shielded part done", "cancelled after"]


async def test_cancel_kills_a_subprocess_tools_whole_process_group(
    clock: ManualClock, tmp_path: Path
) -> None:
    fifo = tmp_path / "pid"
    os.mkfifo(fifo)
    finished = anyio.Event()

    @tool
    async def shell(args: Empty, ctx: ToolContext) -> int:
        try:
            script = f"sleep 300 & echo $! > {fifo}; sleep 300"
            result = await ctx.run_process(["sh", "-c", script])
            return result.returncode
        finally:
            finished.set()

    async with Runtime([shell], clock=clock) as runtime:
        call = runtime.submit("shell", {})
        background = int(await anyio.to_thread.run_sync(fifo.read_text))
        assert alive(background)
        assert runtime.cancel(call).cancelled
        with anyio.fail_after(5):
            await finished.wait()
    assert await anyio.to_thread.run_sync(dies_within, background, 5.0)
    assert not alive(background)


async def test_run_process_collects_output(clock: ManualClock) -> None:
    @tool
    async def echo(args: Empty, ctx: ToolContext) -> dict[str, object]:
        result = await ctx.run_process(["sh", "-c", "cat; echo err >&2; exit 3"], input=b"hi")
        return {
            "code": result.returncode,
            "out": result.stdout.decode(),
            "err": result.stderr.decode(),
        }

    async with Runtime([echo], clock=clock) as runtime:
        snapshot = await runtime.wait(runtime.submit("echo", {}))
    assert snapshot.result == {"code": 3, "out": "hi", "err": "err\n"}


async def test_cancel_while_a_thread_waits_for_a_worker_slot(clock: ManualClock) -> None:
    busy, gate = held_in_a_thread("busy", "done")
    async with Runtime([busy], clock=clock, max_threads=1) as runtime:
        holder = runtime.submit("busy", {})
        waiting = runtime.submit("busy", {})
        await settle(runtime)
        assert runtime.status(waiting).status is CallStatus.RUNNING
        assert runtime.cancel(waiting).cancelled
        gate.set()
        assert (await runtime.wait(holder)).result == "done"
        snapshot = runtime.status(waiting)
        assert snapshot.status is CallStatus.CANCELLED
        assert snapshot.error is not None
        assert snapshot.error.kind is ErrorKind.CANCELLED


async def test_a_sync_tool_cancelled_before_it_waits_wakes_at_once(clock: ManualClock) -> None:
    """``wait_cancelled`` after the cancel came returns True without sleeping."""
    cancelled = threading.Event()
    woke: queue.SimpleQueue[bool] = queue.SimpleQueue()

    @tool
    def late(args: Empty, ctx: ToolContext) -> None:
        cancelled.wait(10)
        woke.put(ctx.wait_cancelled(10))

    async with Runtime([late], clock=clock) as runtime:
        call = runtime.submit("late", {})
        await settle(runtime)
        assert runtime.cancel(call).cancelled
        cancelled.set()
        assert await anyio.to_thread.run_sync(woke.get, True, 5) is True


async def test_threads_serve_waiting_calls_in_order_and_skip_cancelled_ones(
    clock: ManualClock,
) -> None:
    """With one thread, calls waiting for it run in the order submitted; those cancelled
    while they wait (one, or a hundred) never run, and one whose thread ignores its cancel
    frees the thread's slot for the next at once."""
    deaf, release = held_in_a_thread("deaf", "late")
    ran: list[str] = []

    @tool
    def note(args: Order) -> str:
        ran.append(args.item)
        return args.item

    async with Runtime([deaf, note], clock=clock, max_threads=1) as runtime:
        holder = runtime.submit("deaf", {})
        queued = [runtime.submit("note", {"item": item}) for item in "abcd"]
        dropped = [runtime.submit("note", {"item": f"n{n}"}) for n in range(100)]
        last = runtime.submit("note", {"item": "last"})
        await settle(runtime)
        for call in (queued[1], *dropped):
            assert runtime.cancel(call).cancelled
        assert runtime.cancel(holder).cancelled
        for call in (queued[0], queued[2], queued[3], last):
            assert (await runtime.wait(call, 5)).status is CallStatus.COMPLETED
        assert ran == ["a", "c", "d", "last"]
        assert not release.is_set(), "the cancelled call's thread still runs"
        release.set()


class Order(BaseModel):
    item: str


async def test_only_a_running_call_holds_its_validated_input(clock: ManualClock) -> None:
    """A call cancelled before it ran lets its pydantic input go; a running one holds it
    until it ends (nothing keeps an input past its call's work)."""
    gate = anyio.Event()

    @tool
    async def order(args: Order) -> str:
        await gate.wait()
        return args.item

    def held() -> list[str]:
        gc.collect()
        return sorted(found.item for found in gc.get_objects() if isinstance(found, Order))

    async with Runtime([order], clock=clock, max_running=1) as runtime:
        running = runtime.submit("order", {"item": "running"}, session_id="s")
        queued = runtime.submit("order", {"item": "queued"}, session_id="s")
        await settle(runtime)
        assert runtime.status(queued).status is CallStatus.PENDING
        assert held() == ["queued", "running"]
        runtime.cancel(queued)
        await settle(runtime)
        assert held() == ["running"]
        gate.set()
        assert (await runtime.wait(running)).result == "running"
        assert held() == []


async def test_the_work_hears_why_it_was_cancelled_or_timed_out(clock: ManualClock) -> None:
    heard: list[str | None] = []

    @tool
    async def listening(args: Empty, ctx: ToolContext) -> str:
        try:
            await anyio.sleep_forever()
        finally:
            heard.append(ctx.cancel_reason)
        return "never"

    async with Runtime([listening], clock=clock) as runtime:
        call = runtime.submit("listening", {})
        await settle(runtime)
        runtime.cancel(call, "the person changed their mind")
        runtime.submit("listening", {}, options=CallOptions(timeout=5))
        await settle(runtime)
        clock.advance(5)
        await settle(runtime)
    assert heard == ["the person changed their mind", "timed out after 5 s"]
