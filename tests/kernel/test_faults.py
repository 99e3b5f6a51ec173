"""Issue 9: what one bad tool, listener or thread must not be able to do to the runtime.

Each test names the item of the issue it holds to, and failed on the code before the fix.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from collections.abc import Sequence
from functools import partial
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from pydantic import BaseModel

from agentos import CallEvent
from agentos import CallEventKind
from agentos import CallOptions
from agentos import CallStatus
from agentos import ErrorKind
from agentos import Host
from agentos import ManualClock
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import ToolContext
from agentos import tool
from agentos.testing import Puppet
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from tests.support.arguments import Empty
from tests.support.backends import running
from tests.support.scripting import advance
from tests.support.scripting import has_results

pytestmark = pytest.mark.anyio


# ------------------------------------------------------------- 1. stray CancelledError


@tool
async def awaits_a_cancelled_task(args: Empty) -> str:
    victim = asyncio.ensure_future(asyncio.sleep(3600))
    victim.cancel()
    await victim
    return "unreachable"


@tool
def raises_cancelled_in_a_thread(args: Empty) -> str:
    raise asyncio.CancelledError


@pytest.mark.parametrize("name", ["awaits_a_cancelled_task", "raises_cancelled_in_a_thread"])
async def test_a_tool_raising_cancelled_error_fails_only_its_own_call(name: str) -> None:
    """Item 1: the call ends failed with a clear message; the runtime and the other calls live."""
    puppet = Puppet()
    tools = [awaits_a_cancelled_task, raises_cancelled_in_a_thread, puppet.tool]
    body_ran_to_its_end = False
    async with Runtime(tools) as runtime:
        bystander = runtime.submit("puppet", {}, session_id="other")
        stray = runtime.submit(name, {}, session_id="s", options=CallOptions(retries=1))
        with anyio.fail_after(5):
            final = await runtime.wait(stray)
        assert final.status is CallStatus.FAILED
        assert final.error is not None and final.error.kind is ErrorKind.TOOL_ERROR
        assert "CancelledError although nobody cancelled this call" in final.error.message
        assert runtime.status(bystander).status is CallStatus.RUNNING
        puppet.complete(bystander, "still here")
        with anyio.fail_after(5):
            assert (await runtime.wait(bystander)).result == "still here"
        body_ran_to_its_end = True
    assert body_ran_to_its_end, "before the fix the runtime cancelled the body silently"


async def test_a_stray_cancel_in_a_session_tool_leaves_the_session_talking() -> None:
    """Item 1, through a session: the call that is reported from its own task."""
    provider = ScriptedProvider(
        (
            lambda r: "go" in last_user_text(r),
            lambda r: tool_calls(("awaits_a_cancelled_task", {})),
        ),
        (has_results, lambda r: text("it failed, moving on")),
    )
    async with running(provider, awaits_a_cancelled_task) as (_, host):
        session = await host.create_session(session_id="s")
        session.post("go")
        with anyio.fail_after(5):
            await session.wait_idle()
    assert session.history[-1]["content"][0]["text"] == "it failed, moving on"
    result = session.history[2]["content"][0]
    assert result["is_error"] is True and "CancelledError" in result["content"]
    assert session.errors == []


# ------------------------------------------------------------------- 2. timers re-armed


@pytest.mark.runtime(max_running=1)
async def test_a_cancel_that_admits_a_queued_call_arms_its_timeout(
    clock: ManualClock, runtime: Runtime
) -> None:
    """Item 2: the queued call's hard timeout fires at its deadline.

    The manual clock wakes a runtime only once the deadline its driver sleeps
    until has passed, as a real timer would; before the fix the driver slept
    on with no deadline, and the timeout never fired.
    """
    first = runtime.submit("puppet", {})
    queued = runtime.submit("puppet", {}, options=CallOptions(timeout=1))
    await settle(runtime)
    assert runtime.cancel(first).cancelled
    await settle(runtime)
    assert runtime.status(queued).status is CallStatus.RUNNING
    await advance(clock, runtime, 0.5)
    assert runtime.status(queued).status is CallStatus.RUNNING
    await advance(clock, runtime, 0.5)
    snapshot = runtime.status(queued)
    assert snapshot.status is CallStatus.FAILED
    assert snapshot.error is not None and snapshot.error.kind is ErrorKind.TIMED_OUT


async def test_the_timeout_of_a_cancel_admitted_call_fires_on_the_system_clock() -> None:
    """Item 2, on real time: before the fix the driver slept until something else woke it."""
    puppet = Puppet()
    async with Runtime([puppet.tool], max_running=1) as runtime:
        first = runtime.submit("puppet", {})
        queued = runtime.submit("puppet", {}, options=CallOptions(timeout=0.05))
        await settle(runtime)
        runtime.cancel(first)
        with anyio.fail_after(5):
            snapshot = await runtime.wait(queued)
        assert snapshot.error is not None and snapshot.error.kind is ErrorKind.TIMED_OUT


async def test_retention_forgets_cancelled_and_completed_calls_on_an_idle_runtime(
    clock: ManualClock,
) -> None:
    """Item 2: calls ended by cancel() or complete() leave the world when retention runs out."""
    puppet = Puppet()
    async with Runtime([puppet.tool], clock=clock, retention_seconds=10) as runtime:
        running = [runtime.submit("puppet", {}) for _ in range(50)]
        deferred = [
            runtime.submit("puppet", {}, options=CallOptions(deferred=True)) for _ in range(50)
        ]
        await settle(runtime)
        for call in running:
            runtime.cancel(call)
        for call in deferred:
            runtime.complete(call, {"ok": True})
        await settle(runtime)
        await advance(clock, runtime, 10)
        assert runtime.statistics().calls_forgotten == 100
        assert runtime.sessions() == []


# -------------------------------------------------------------- 3. results checked once


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


BAD_RESULTS: dict[str, tuple[Callable[[], object], str]] = {
    "huge int": (lambda: 10**5000, "more than 4300 digits"),
    "lone surrogate": (lambda: "caf\ud800", "lone surrogate"),
    "nested surrogate": (lambda: {"rows": [{"name": "\udc00"}]}, "lone surrogate"),
    "too deep": (lambda: _nested(300), "nested deeper than 200"),
    "too large text": (lambda: "x" * 1_000_001, "too large"),
    "too large rows": (lambda: [{"row": "y" * 100} for _ in range(20_000)], "too large"),
}


class BadInput(BaseModel):
    kind: str


@tool
async def returns_bad(args: BadInput) -> object:
    return BAD_RESULTS[args.kind][0]()


@tool
def returns_bad_in_a_thread(args: BadInput) -> object:
    return BAD_RESULTS[args.kind][0]()


@pytest.mark.parametrize("tool_name", ["returns_bad", "returns_bad_in_a_thread"])
@pytest.mark.parametrize("kind", list(BAD_RESULTS))
async def test_a_result_that_is_not_json_safe_fails_the_call(kind: str, tool_name: str) -> None:
    """Item 3 (and 7's size cap): checked at settle time, the model reads why."""
    async with Runtime([returns_bad, returns_bad_in_a_thread]) as runtime:
        call = runtime.submit(tool_name, {"kind": kind})
        with anyio.fail_after(10):
            final = await runtime.wait(call)
    assert final.status is CallStatus.FAILED
    assert final.error is not None and final.error.kind is ErrorKind.INVALID_RESULT
    assert BAD_RESULTS[kind][1] in final.error.message
    final.error.message.encode("utf-8")


CONTROL_KEYS = [chr(code) for code in range(32) if chr(code) not in "\b\t\n\f\r"][:16]
SMALL_BUT_LONG = {
    "big numbers": {key: -(2**64 - 1) for key in CONTROL_KEYS},
    "escaped text": {key: "\x01" * 50 for key in CONTROL_KEYS},
}
"""Small flat dicts whose JSON text is long: every key a control character (six
characters escaped), every value a 21-digit number or escaped text."""


@pytest.mark.parametrize("kind", list(SMALL_BUT_LONG))
async def test_a_small_dict_whose_json_is_over_the_limit_fails_the_call(kind: str) -> None:
    """A result's JSON text is measured as encoded, however few its items: one character
    over ``max_result_chars`` fails the call (on 3e98e4c a quick copy let it through)."""
    value = SMALL_BUT_LONG[kind]
    length = len(json.dumps(value, ensure_ascii=False))

    @tool
    async def long_dict(args: Empty) -> object:
        return value

    for limit, status in ((length, CallStatus.COMPLETED), (length - 1, CallStatus.FAILED)):
        async with Runtime([long_dict], max_result_chars=limit) as runtime:
            with anyio.fail_after(10):
                final = await runtime.wait(runtime.submit("long_dict", {}))
        assert final.status is status, (limit, final.error)
    assert final.error is not None and "too large" in final.error.message


@tool
async def surrogate_error(args: Empty) -> str:
    raise ValueError("bad byte \udcff in the file")


async def test_a_session_never_stops_on_a_value_a_tool_returned() -> None:
    """Item 3: before the fix the session crashed rendering these, leaving a bare tool_use."""
    uses = [("returns_bad", {"kind": kind}) for kind in BAD_RESULTS] + [("surrogate_error", {})]
    provider = ScriptedProvider(
        (lambda r: "go" in last_user_text(r), lambda r: tool_calls(*uses)),
        (has_results, lambda r: text("read them all")),
    )
    async with running(provider, returns_bad, surrogate_error) as (_, host):
        session = await host.create_session(session_id="s")
        session.post("go")
        with anyio.fail_after(10):
            await session.wait_idle()
    assert session.errors == []
    results = session.history[2]["content"]
    assert [block["is_error"] for block in results] == [True] * len(uses)
    assert "lone surrogate" in results[1]["content"]
    assert session.history[-1]["content"][0]["text"] == "read them all"
    for block in results:
        block["content"].encode("utf-8")


# --------------------------------------------------------------------- 4. other threads


@tool
async def forever(args: Empty) -> None:
    await anyio.sleep_forever()


async def test_cancel_and_complete_from_another_thread_are_refused_at_once() -> None:
    """Item 4: before the fix they ran a tick on the worker thread and corrupted state."""
    refusals: list[str] = []

    @tool
    def meddles(args: Target) -> str:
        for attempt in (
            lambda: runtime.cancel(args.call_id),
            lambda: runtime.complete(args.call_id, 1),
        ):
            try:
                attempt()
            except RuntimeError as error:
                refusals.append(str(error))
        return "done"

    async with Runtime([forever, meddles]) as runtime:
        victim = runtime.submit("forever", {}, options=CallOptions(deferred=True))
        with anyio.fail_after(5):
            await runtime.wait(runtime.submit("meddles", {"call_id": victim}))
        assert runtime.status(victim).status is CallStatus.PENDING
    assert len(refusals) == 2
    assert all("from other threads use" in refusal for refusal in refusals)


class Target(BaseModel):
    call_id: str


async def test_four_threads_cancel_two_thousand_calls_each() -> None:
    """Item 4: cancel_threadsafe from 4 threads x 2,000 leaves every call known and final."""
    async with Runtime([forever], max_running=64) as runtime:
        calls = [runtime.submit("forever", {}, session_id=f"s{i % 8}") for i in range(8_000)]
        await settle(runtime)
        outcomes: list[bool] = []

        def cancel_share(share: Sequence[str]) -> None:
            for call in share:
                outcomes.append(runtime.cancel_threadsafe(call, "stress").cancelled)

        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                for index in range(4):
                    share = calls[index * 2_000 : (index + 1) * 2_000]
                    group.start_soon(partial(anyio.to_thread.run_sync, cancel_share, share))
        assert outcomes == [True] * 8_000
        snapshots = [runtime.status(call) for call in calls]
        assert {snapshot.status for snapshot in snapshots} == {CallStatus.CANCELLED}
        assert runtime.statistics().running == 0
        assert runtime.statistics().calls_by_status[CallStatus.CANCELLED] == 8_000


async def test_a_sync_tool_submits_and_cancels_from_its_thread() -> None:
    """Item 4: submit is safe from any thread; the *_threadsafe methods answer there."""

    @tool
    def spawns(args: Empty) -> str:
        child = runtime.submit("forever", {}, session_id="s")
        status = runtime.status_threadsafe(child).status
        outcome = runtime.cancel_threadsafe(child, "not needed")
        return f"{status.value} {outcome.cancelled}"

    async with Runtime([forever, spawns]) as runtime:
        with anyio.fail_after(5):
            final = await runtime.wait(runtime.submit("spawns", {}, session_id="s"))
        calls = runtime.list_calls("s")
    assert final.result in ("pending True", "running True")
    assert [call.status for call in calls] == [CallStatus.COMPLETED, CallStatus.CANCELLED]


async def test_threadsafe_methods_refuse_the_loop_thread() -> None:
    async with Runtime([forever]) as runtime:
        call = runtime.submit("forever", {}, options=CallOptions(deferred=True))
        with pytest.raises(RuntimeError, match="for other threads"):
            runtime.cancel_threadsafe(call)
        with pytest.raises(RuntimeError, match="for other threads"):
            runtime.complete_threadsafe(call, 1)


# ----------------------------------------------------------------- 5. bounded shutdown


def run_script(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a fresh interpreter (within 60 s); it must exit 0."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


_SHUTDOWN_SCRIPT = """
import logging, sys, threading, time
import anyio
from pydantic import BaseModel
from agentos import Runtime, tool

logging.basicConfig(level=logging.WARNING, stream=sys.stdout, format="%(message)s")


class Empty(BaseModel):
    pass


stuck_started = threading.Event()


@tool
async def stubborn(args: Empty) -> str:
    stubborn_started.set()
    while True:
        try:
            await anyio.sleep(3600)
        except BaseException:
            pass


@tool
def stuck(args: Empty) -> str:
    stuck_started.set()
    while True:
        time.sleep(0.05)


async def main() -> None:
    global stubborn_started
    stubborn_started = anyio.Event()
    async with Runtime([stubborn, stuck], shutdown_grace=0.5) as runtime:
        calls = [runtime.submit("stubborn"), runtime.submit("stuck")]
        print("calls", *calls, flush=True)
        await stubborn_started.wait()
        await anyio.to_thread.run_sync(stuck_started.wait)
        closing = time.monotonic()
    print(f"closed_in {time.monotonic() - closing:.2f}", flush=True)


anyio.run(main)
print("run returned", flush=True)
"""


def test_close_is_bounded_by_the_grace_period_and_the_interpreter_exits() -> None:
    """Item 5: an async tool that swallows cancellation and a thread that never ends.

    Before the fix the process never exited.
    """
    done = run_script(_SHUTDOWN_SCRIPT)
    lines = done.stdout.splitlines()
    calls = next(line for line in lines if line.startswith("calls")).split()[1:]
    closed_in = float(next(line for line in lines if line.startswith("closed_in")).split()[1])
    assert closed_in < 5
    abandoned = next(line for line in lines if "runtime.work_abandoned" in line)
    assert all(call in abandoned for call in calls)
    assert "run returned" in lines


_FORKED_IDS_SCRIPT = """
import asyncio, os
from pydantic import BaseModel
from agentos import Runtime, tool

class Empty(BaseModel):
    pass

@tool
async def noop(args: Empty) -> None:
    return None

async def one_call_id() -> str:
    async with Runtime([noop]) as runtime:
        return runtime.submit("noop", {}, session_id="s")

one_call_id_now = lambda: asyncio.run(one_call_id())
one_call_id_now()  # the process has drawn ids before it forks
read, write = os.pipe()
child = os.fork()
if child == 0:
    os.write(write, one_call_id_now().encode())
    os._exit(0)
mine = one_call_id_now()
os.waitpid(child, 0)
print(mine, os.read(read, 100).decode())
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_forked_process_draws_call_ids_of_its_own() -> None:
    """A worker forked from a process that made calls (a pre-fork server, multiprocessing)
    must not hand out the ids its parent will: each reads randomness of its own. Each is
    a random UUID in its canonical text."""
    parent, child = run_script(_FORKED_IDS_SCRIPT).stdout.split()
    assert parent != child
    for call_id in (parent, child):
        assert str(uuid.UUID(call_id)) == call_id
        assert uuid.UUID(call_id).version == 4


# -------------------------------------------------------------- 6. listeners contained


class Boom(BaseException):
    """Not an Exception: a listener bug of the kind that used to escape."""


@pytest.mark.parametrize(
    "error", [Boom("boom"), asyncio.CancelledError(), GeneratorExit(), ValueError("bad")]
)
async def test_a_listener_raising_any_base_exception_cannot_kill_the_runtime(
    error: BaseException,
) -> None:
    """Item 6: the listener's bug is logged; the runtime and the body go on."""
    puppet = Puppet()
    body_ran_to_its_end = False

    def listener(event: CallEvent) -> None:
        raise error

    async def follow_up() -> None:
        raise error

    def hands_off(event: CallEvent) -> None:
        runtime.hand_off(follow_up)

    async with Runtime([puppet.tool]) as runtime:
        runtime.on_call_events("noisy", listener)
        runtime.on_call_events("noisy", hands_off)
        noisy = runtime.submit("puppet", {}, session_id="noisy")
        other = runtime.submit("puppet", {}, session_id="other")
        await settle(runtime)
        puppet.complete(noisy, 1)
        with anyio.fail_after(5):
            assert (await runtime.wait(noisy)).status is CallStatus.COMPLETED
        await settle(runtime)
        puppet.complete(other, 2)
        with anyio.fail_after(5):
            assert (await runtime.wait(other)).result == 2
        assert runtime.statistics().internal_errors >= 2, "the listener's and the hand-off's"
        body_ran_to_its_end = True
    assert body_ran_to_its_end


async def test_cancel_from_inside_a_listener_works_on_a_live_call() -> None:
    """Item 6: before the fix it raised UnknownCallError (the tick was already running)."""
    puppet = Puppet()
    outcomes: list[Any] = []
    async with Runtime([puppet.tool]) as runtime:
        first = runtime.submit("puppet", {}, session_id="s")
        second = runtime.submit("puppet", {}, session_id="s")
        seen: list[CallEventKind] = []

        def listener(event: CallEvent) -> None:
            seen.append(event.kind)
            if event.call_id == first and event.kind is CallEventKind.COMPLETED:
                outcomes.append(runtime.cancel(second, "the first one answered"))

        runtime.on_call_events("s", listener)
        await settle(runtime)
        puppet.complete(first, 1)
        with anyio.fail_after(5):
            final = await runtime.wait(second)
    assert final.status is CallStatus.CANCELLED
    assert final.cancel_reason == "the first one answered"
    assert outcomes[0].cancelled and outcomes[0].previous_status is CallStatus.RUNNING
    assert seen[-2:] == [CallEventKind.COMPLETED, CallEventKind.CANCELLED]


async def test_a_subscriber_that_stopped_reading_does_not_break_delivery() -> None:
    puppet = Puppet()
    async with Runtime([puppet.tool]) as runtime, runtime.subscribe("s") as events:
        await events.aclose()
        call = runtime.submit("puppet", {}, session_id="s")
        await settle(runtime)
        puppet.complete(call, 1)
        with anyio.fail_after(5):
            assert (await runtime.wait(call)).status is CallStatus.COMPLETED


# ------------------------------------------------------- 7. progress floods and bursts


class Count(BaseModel):
    n: int


@tool
async def floods(args: Count, ctx: ToolContext) -> str:
    for index in range(args.n):
        ctx.progress({"i": index})
    return "flooded"


@tool
def floods_from_a_thread(args: Count, ctx: ToolContext) -> str:
    for index in range(args.n):
        ctx.progress({"i": index})
    return "flooded"


@pytest.mark.parametrize(("name", "n"), [("floods", 200_000), ("floods_from_a_thread", 50_000)])
async def test_a_progress_flood_is_coalesced_before_the_inbox(name: str, n: int) -> None:
    """Item 7: the log keeps the newest 50 and counts the rest (the runtime's ``started``
    entry among them); a few messages, not n."""
    async with Runtime([floods, floods_from_a_thread]) as runtime:
        call = runtime.submit(name, {"n": n})
        with anyio.fail_after(60):
            final = await runtime.wait(call)
        statistics = runtime.statistics()
    assert final.result == "flooded"
    assert final.progress_seq == n + 1
    assert [entry.payload for entry in final.progress] == [{"i": i} for i in range(n - 50, n)]
    assert final.progress_dropped == n + 1 - 50
    # At most one progress batch per tick (plus submit, start, result): how many ticks
    # a flood spans depends on the machine's speed, the bound per tick does not.
    assert statistics.messages_applied <= statistics.ticks + 3 < n / 2


async def test_a_burst_of_submits_is_applied_over_several_ticks() -> None:
    """Item 7: at most 1,000 inbox messages a tick; the rest wait, so others move between."""
    left_in_inbox: list[int] = []
    async with Runtime([forever]) as runtime:

        def listener(event: CallEvent) -> None:
            if event.kind is CallEventKind.QUEUED:
                left_in_inbox.append(runtime.statistics().inbox_length)

        runtime.on_call_events("burst", listener)
        for _ in range(3_000):
            runtime.submit("forever", {}, session_id="burst", options=CallOptions(deferred=True))
        await settle(runtime)
        assert runtime.statistics().pending == 3_000
    assert max(left_in_inbox) == 2_000
    assert len(left_in_inbox) == 3_000


# ------------------------------------------------------------------ 13. quiet library

_QUIET_SCRIPT = """
import sys
import anyio
from pydantic import BaseModel
from agentos import Runtime, ToolContext, tool

if sys.argv[1] == "configured":
    import logging
    logging.basicConfig(level=logging.INFO)


class Empty(BaseModel):
    pass


@tool
async def chatty(args: Empty, ctx: ToolContext) -> str:
    ctx.progress({"step": 1})
    ctx.log("working")
    return "ok"


@tool
async def broken(args: Empty) -> str:
    raise ValueError("broken tool")


async def main() -> None:
    async with Runtime([chatty, broken]) as runtime:
        calls = [runtime.submit(name) for name in ("chatty", "broken") * 5]
        for call in calls:
            await runtime.wait(call)


anyio.run(main)
"""


def test_the_library_prints_nothing_unless_logging_is_configured() -> None:
    """Item 13: before the fix every call printed its tool_call.* lines."""
    quiet = run_script(_QUIET_SCRIPT, "quiet")
    assert (quiet.stdout, quiet.stderr) == ("", "")
    configured = run_script(_QUIET_SCRIPT, "configured")
    assert configured.stderr.count("tool_call.completed") == 5
    assert configured.stderr.count("tool_call.failed") == 5


def test_a_program_that_logs_nothing_never_loads_a_logging_library() -> None:
    """structlog (and the rich it pulls in: 60 ms of import, 7,000 objects every full
    collection walks) is loaded to write a line, not by ``import agentos`` nor by calls
    that log nothing."""
    script = _QUIET_SCRIPT + "print(sorted({'structlog', 'rich'} & set(sys.modules)))"
    assert run_script(script, "quiet").stdout == "[]\n"


def test_threads_are_daemons_so_exit_never_waits_for_a_tool() -> None:
    """Item 5: the worker threads sync tools run in; the soak found them outliving the runtime."""
    seen: list[bool] = []

    @tool
    def which_thread(args: Empty) -> str:
        seen.append(threading.current_thread().daemon)
        return "ok"

    async def main() -> None:
        async with Runtime([which_thread]) as runtime:
            await runtime.wait(runtime.submit("which_thread"))

    started = time.monotonic()
    anyio.run(main)
    assert seen == [True]
    assert time.monotonic() - started < 30
    workers = [t for t in threading.enumerate() if t.name == "agentos tool worker"]
    for worker in workers:
        worker.join(5)
    assert not any(worker.is_alive() for worker in workers), "closing ends the idle workers"


# ------------------------------------------- sessions outlive the runtime's retention


async def test_a_turn_longer_than_retention_still_tells_every_outcome(clock: ManualClock) -> None:
    """Found by the soak: a call forgotten by retention before its turn read it crashed
    the session (UnknownCallError); the session now keeps the final snapshot."""
    puppet = Puppet()
    provider = ScriptedProvider(
        (
            lambda r: "two" in last_user_text(r),
            lambda r: tool_calls(("puppet", {"label": "a"}), ("puppet", {"label": "b"})),
        ),
        (has_results, lambda r: text("both back")),
    )
    async with (
        Runtime([puppet.tool], clock=clock, retention_seconds=1) as runtime,
        Host(runtime, provider) as host,
    ):
        session = await host.create_session(session_id="s")
        session.post("two")
        with anyio.fail_after(5):
            while len(puppet.calls) < 2:
                await settle(runtime)
        first, second = list(puppet.calls)
        puppet.complete(first, "A done")
        await settle(runtime)
        await advance(clock, runtime, 5)  # the first call leaves the world while the turn waits
        assert runtime.statistics().calls_forgotten == 1
        puppet.complete(second, "B done")
        with anyio.fail_after(5):
            await session.wait_idle()
    assert session.errors == []
    contents = [block["content"] for block in session.history[2]["content"]]
    assert contents == ["A done", "B done"]
    assert session.history[-1]["content"][0]["text"] == "both back"
