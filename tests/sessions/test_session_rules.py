"""Seed 000 behaviours that sessions must get exactly right (issue 10, section 2)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel

from agentos import AgentConfig
from agentos import CallEvent
from agentos import CallEventKind
from agentos import CallId
from agentos import CallOptions
from agentos import CallSnapshot
from agentos import CallStatus
from agentos import Completion
from agentos import Disposition
from agentos import ExecutionMode
from agentos import Host
from agentos import ManualClock
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import ProgressKind
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import SessionStatus
from agentos import SqliteStore
from agentos import ToolContext
from agentos import ToolPolicy
from agentos import YieldOnTimeout
from agentos import tool
from agentos.testing import Puppet
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from components import PROGRESS_KEPT
from tests.support.backends import hosted
from tests.support.backends import running
from tests.support.scripting import has_results

pytestmark = pytest.mark.anyio


async def submitted_calls(runtime: Runtime, session_id: str) -> list[CallSnapshot]:
    """The session's calls, once the model's first tool calls are submitted and settled."""
    with anyio.fail_after(5):
        while not runtime.list_calls(session_id):
            await settle(runtime)
    await settle(runtime)
    return runtime.list_calls(session_id)


async def test_synchronous_mode_runs_a_turns_calls_one_after_another_in_order(
    clock: ManualClock,
) -> None:
    """Seed: "existing synchronous behaviour is unchanged": the second call starts only
    once the first has ended, so two 3 s calls take 6 s, not 3 s."""
    puppet = Puppet()
    provider = ScriptedProvider(
        (
            lambda r: "two" in last_user_text(r),
            lambda r: tool_calls(("puppet", {"label": "a"}), ("puppet", {"label": "b"})),
        ),
        (has_results, lambda r: text("both done")),
    )
    config = AgentConfig(execution_mode=ExecutionMode.SYNCHRONOUS)
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(config, session_id="s")
        session.post("two")
        first, second = await submitted_calls(runtime, "s")
        assert first.tool_input == {"label": "a"}
        assert (first.status, second.status) == (CallStatus.RUNNING, CallStatus.PENDING)
        clock.advance(3)
        puppet.complete(first.call_id, "A")
        await settle(runtime)
        assert runtime.status(second.call_id).status is CallStatus.RUNNING
        clock.advance(3)
        puppet.complete(second.call_id, "B")
        with anyio.fail_after(5):
            await session.wait_idle()
        first, second = runtime.list_calls("s")
    assert second.started_at is not None and first.completed_at is not None
    assert second.started_at >= first.completed_at
    assert second.completed_at is not None and first.started_at is not None
    assert second.completed_at - first.started_at == 6
    assert [block["content"] for block in session.history[2]["content"]] == ["A", "B"]
    assert session.replies[-1] == "both done"


async def test_yield_on_timeout_yields_at_the_first_call_to_end_or_the_timer(
    clock: ManualClock,
) -> None:
    """Seed: yield_on_timeout(ms) is "yield after N milliseconds even if nothing
    finished": a call ending first yields too, without waiting for the timer."""
    puppet = Puppet()
    provider = ScriptedProvider(
        (
            lambda r: "two" in last_user_text(r),
            lambda r: tool_calls(("puppet", {"label": "a"}), ("puppet", {"label": "b"})),
        ),
        (has_results, lambda r: text("one is back")),
        (lambda r: True, lambda r: text("the other too")),
    )
    config = AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=60_000))
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(config, session_id="s")
        session.post("two")
        with anyio.fail_after(5):
            while len(runtime.list_calls("s")) < 2:
                await settle(runtime)
        first, second = runtime.list_calls("s")
        puppet.complete(first.call_id, "A")
        with anyio.fail_after(5):
            await session.wait_idle()
        assert provider.answered == 2, "the first call's end yielded the turn at once"
        results = last_tool_results(provider.requests[-1])
        assert results[0]["content"] == "A"
        assert '"status": "running"' in results[1]["content"]
        puppet.complete(second.call_id, "B")
        with anyio.fail_after(5):
            while provider.answered < 3:
                await settle(runtime)
            await session.wait_idle()
    assert "B" in last_user_text(provider.requests[-1])
    assert session.replies[-1] == "the other too"


@pytest.mark.parametrize("arguments", ["not json at all", "[1, 2]", [1, 2], 7])
async def test_arguments_that_are_not_a_json_object_fail_the_call_saying_so(
    clock: ManualClock, arguments: object
) -> None:
    """Seed 000 via issue 10: never a field-level message about a wrapper key."""
    puppet = Puppet()

    def odd_call(request: ModelRequest) -> ModelResponse:
        response = tool_calls(("puppet", {}))
        response.content[0]["input"] = arguments
        return response

    provider = ScriptedProvider(
        (lambda r: "go" in last_user_text(r), odd_call),
        (has_results, lambda r: text("noted")),
    )
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(session_id="s")
        session.post("go")
        with anyio.fail_after(5):
            await session.wait_idle()
        (call,) = runtime.list_calls("s")
    assert call.status is CallStatus.FAILED
    assert call.error is not None and "must be a JSON object" in call.error.message
    (result,) = session.history[2]["content"]
    assert result["is_error"] is True and "must be a JSON object" in result["content"]


async def test_raising_a_sessions_cap_admits_its_queued_calls_at_once(
    runtime: Runtime,
) -> None:
    """Issue 10: set_session_cap wrote outside a tick, so nothing queued was admitted
    until one of the session's calls ended."""
    runtime.set_session_cap("s", 1)
    calls = [runtime.submit("puppet", {}, session_id="s") for _ in range(3)]
    await settle(runtime)
    assert [runtime.status(c).status for c in calls] == [
        CallStatus.RUNNING,
        CallStatus.PENDING,
        CallStatus.PENDING,
    ]
    runtime.set_session_cap("s", 3)
    await settle(runtime)
    assert {runtime.status(c).status for c in calls} == {CallStatus.RUNNING}
    runtime.set_session_cap("s", None)
    await settle(runtime)
    assert runtime.statistics().running == 3


async def test_statistics_show_armed_timers_peak_running_and_no_internal_error(
    clock: ManualClock,
) -> None:
    """Issue 10: "no timer armed for a final call" and "no internal error", read directly."""
    puppet = Puppet()
    async with Runtime([puppet.tool], clock=clock, retention_seconds=10) as runtime:
        calls = [
            runtime.submit(
                "puppet", {}, session_id="s", options=CallOptions(timeout=5, overdue_after=2)
            )
            for _ in range(3)
        ]
        await settle(runtime)
        stats = runtime.statistics()
        assert dict(stats.timers_armed) == {"hard": 3, "overdue": 3, "retention": 0}
        clock.advance(2)  # overdue fired, and re-armed for another interval
        await settle(runtime)
        assert runtime.statistics().timers_armed["overdue"] == 3
        for call in calls:
            puppet.complete(call, "done")
        await settle(runtime)
        stats = runtime.statistics()
        assert dict(stats.timers_armed) == {"hard": 0, "overdue": 0, "retention": 3}
        assert (stats.peak_running, stats.running) == (3, 0)
        clock.advance(10)
        await settle(runtime)
        stats = runtime.statistics()
        assert dict(stats.timers_armed) == {"hard": 0, "overdue": 0, "retention": 0}
        assert stats.internal_errors == 0


async def test_a_token_of_a_call_that_already_ended_is_never_applied(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Issue 10: with a store, completing the token of a cancelled deferred call
    answered ``applied`` (the store took it), though the call never got the result."""
    puppet = Puppet()
    provider = ScriptedProvider(
        (lambda r: "approve" in last_user_text(r), lambda r: tool_calls(("puppet", {}))),
        (has_results, lambda r: text("waiting for approval")),
    )
    config = AgentConfig(policy=ToolPolicy(rules={"puppet": Disposition.DEFER}))
    async with hosted(tmp_path / "agentos.db", provider, puppet.tool, clock=clock) as (
        store,
        runtime,
        host,
    ):
        session = await host.create_session(config, session_id="s")
        session.post("approve this")
        with anyio.fail_after(5):
            while session.status is not SessionStatus.WAITING_EXTERNAL:
                await settle(runtime)
        (call,) = runtime.list_calls("s")
        (record,) = host.tokens.pending("s")
        runtime.cancel(call.call_id, "no longer needed")
        outcome = await host.complete(record.token, {"approved": True})
        assert outcome is not Completion.APPLIED
        assert runtime.status(call.call_id).status is CallStatus.CANCELLED
        stored = await store.get_token(record.token)
        assert stored is not None and stored.completed_at is None


async def test_a_continuation_token_never_reads_as_a_command_line_option(
    clock: ManualClock,
) -> None:
    """A token starting with ``-`` (1 in 64 of urlsafe ones) made ``agentos complete``
    read it as an option."""
    async with running(ScriptedProvider(), clock=clock) as (_, host):
        tokens = [
            await host.tokens.issue(
                "s", CallId(f"c{n}"), provider_call_id=f"toolu_{n}", tool_name="t", tool_input={}
            )
            for n in range(500)
        ]
    assert [t for t in tokens if not t[0].isalnum()] == []


async def test_a_sessions_own_status_reads_the_same_everywhere(
    path: Path, clock: ManualClock
) -> None:
    """Issue 10: ``waiting_external`` (only a deferred call left) is the session's own
    status, read alike from the Session, the Host, the store and ``agentos sessions``."""
    provider = ScriptedProvider(
        (lambda r: "approve" in last_user_text(r), lambda r: tool_calls(("puppet", {}))),
    )
    config = AgentConfig(policy=ToolPolicy(rules={"puppet": Disposition.DEFER}))
    async with hosted(path, provider, Puppet().tool, clock=clock) as (store, runtime, host):
        session = await host.create_session(config, session_id="s")
        chat = await host.create_session(session_id="chat")
        session.post("approve this")
        with anyio.fail_after(5):
            while session.status is not SessionStatus.WAITING_EXTERNAL:
                await settle(runtime)
        assert {s.session_id: s.status for s in host.list()} == {
            "s": SessionStatus.WAITING_EXTERNAL,
            "chat": SessionStatus.IDLE,
        }
        assert runtime.session("s").status is SessionStatus.WAITING_EXTERNAL
    async with await SqliteStore.open(path) as store:
        stored = {s.session_id: s.status for s in await store.list_sessions()}
    assert stored == {"s": "waiting_external", "chat": "idle"}
    listed = await anyio.run_process(
        [sys.executable, "-m", "agentos.cli", "--db", str(path), "sessions", "--json"]
    )
    rows = [json.loads(line) for line in listed.stdout.decode().splitlines()]
    assert {row["session_id"]: row["status"] for row in rows} == stored
    assert chat.status is SessionStatus.STOPPED, "closing the host stopped it"


async def test_a_calls_progress_starts_with_a_started_entry_when_it_runs(
    puppet: Puppet,
    runtime: Runtime,
) -> None:
    """Seed: a call's progress log opens with ``started`` once it runs; a queued call
    has none yet, and gets it when a slot frees."""
    runtime.set_session_cap("s", 1)
    first = runtime.submit("puppet", {}, session_id="s")
    queued = runtime.submit("puppet", {}, session_id="s")
    await settle(runtime)
    running = runtime.status(first)
    assert running.status is CallStatus.RUNNING
    assert [entry.kind for entry in running.progress] == [ProgressKind.STARTED]
    assert running.progress[0].kind == "started"
    assert (running.progress[0].seq, running.progress_seq) == (1, 1)
    assert running.progress[0].at == running.started_at
    waiting = runtime.status(queued)
    assert waiting.status is CallStatus.PENDING
    assert (waiting.progress, waiting.progress_seq) == ((), 0)
    puppet.progress(first, {"percent": 50})
    await settle(runtime)
    assert [entry.kind for entry in runtime.status(first).progress] == ["started", "partial"]
    puppet.complete(first)
    await runtime.wait(first)
    await settle(runtime)
    now_running = runtime.status(queued)
    assert now_running.status is CallStatus.RUNNING
    assert [entry.kind for entry in now_running.progress] == ["started"]


class Lines(BaseModel):
    lines: int
    gate: str


@tool
async def print_lines(args: Lines, ctx: ToolContext) -> str:
    """Print ``lines`` lines, then wait until the test writes to the ``gate`` FIFO."""
    script = (
        "import sys\n"
        f"for i in range({args.lines}):\n"
        "    print(f'line {i}')\n"
        "sys.stdout.flush()\n"
        f"print('gate said', open({args.gate!r}).read())\n"
    )
    done = await ctx.run_process([sys.executable, "-c", script])
    return done.stdout.decode()


def watch_for(runtime: Runtime, session_id: str, payload: str) -> anyio.Event:
    """An event set once an ``output`` progress entry with ``payload`` is reported."""
    seen = anyio.Event()

    def check(event: CallEvent) -> None:
        entry = event.progress
        if entry is not None and entry.kind is ProgressKind.OUTPUT and entry.payload == payload:
            seen.set()

    runtime.on_call_events(session_id, check)
    return seen


async def open_gate(gate: Path, text: str) -> None:
    """Write to the FIFO the subprocess reads (opening it blocks until the reader is there)."""
    await anyio.to_thread.run_sync(gate.write_text, text)


async def test_subprocess_stdout_lines_arrive_as_output_progress_while_it_runs(
    tmp_path: Path,
) -> None:
    """Seed: lines a ``ctx.run_process`` subprocess prints show as ``output`` progress
    while it still runs; the result still carries all of stdout."""
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    async with Runtime([print_lines]) as runtime:
        seen = watch_for(runtime, "s", "line 2")
        call = runtime.submit("print_lines", {"lines": 3, "gate": str(gate)}, session_id="s")
        with anyio.fail_after(10):
            await seen.wait()
        running = runtime.status(call)
        assert running.status is CallStatus.RUNNING
        assert [(entry.kind, entry.payload) for entry in running.progress] == [
            (ProgressKind.STARTED, None),
            (ProgressKind.OUTPUT, "line 0"),
            (ProgressKind.OUTPUT, "line 1"),
            (ProgressKind.OUTPUT, "line 2"),
        ]
        await open_gate(gate, "go")
        with anyio.fail_after(10):
            final = await runtime.wait(call)
    assert final.status is CallStatus.COMPLETED
    assert final.result == "line 0\nline 1\nline 2\ngate said go\n"
    assert final.progress[-1].payload == "gate said go"


async def test_a_subprocess_output_flood_keeps_progress_bounded_and_ticks_short(
    tmp_path: Path,
) -> None:
    """Seed: 10,000 lines of output keep the newest ``PROGRESS_KEPT`` entries and count
    the rest; they arrive in a few coalesced messages, so no tick grows long (how long a
    tick takes is the benchmarks' to say: ``faults.progress_flood_max_tick_ms``)."""
    lines = 10_000
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    async with Runtime([print_lines]) as runtime:
        seen = watch_for(runtime, "s", f"line {lines - 1}")
        call = runtime.submit("print_lines", {"lines": lines, "gate": str(gate)}, session_id="s")
        with anyio.fail_after(30):
            await seen.wait()
        running = runtime.status(call)
        stats = runtime.statistics()
        await open_gate(gate, "go")
        with anyio.fail_after(10):
            final = await runtime.wait(call)
    assert running.status is CallStatus.RUNNING
    assert running.progress_seq == 1 + lines
    assert len(running.progress) == PROGRESS_KEPT
    assert running.progress_dropped == 1 + lines - PROGRESS_KEPT
    assert [entry.payload for entry in running.progress] == [
        f"line {i}" for i in range(lines - PROGRESS_KEPT, lines)
    ]
    assert stats.messages_applied < lines / 10
    assert isinstance(final.result, str)
    assert final.result.splitlines()[:-1] == [f"line {i}" for i in range(lines)]


async def test_an_overdue_call_is_told_again_each_interval_until_it_ends(
    clock: ManualClock,
) -> None:
    """Seed: a running call past ``overdue_after`` raises OVERDUE, and left running
    raises it again every interval; ending the call (settled or cancelled) disarms it."""
    puppet = Puppet()
    overdue: list[CallId] = []

    def count(event: CallEvent) -> None:
        if event.kind is CallEventKind.OVERDUE:
            overdue.append(event.call_id)

    async with Runtime([puppet.tool], clock=clock) as runtime:
        runtime.on_call_events("s", count)
        done = runtime.submit("puppet", {}, session_id="s", options=CallOptions(overdue_after=30))
        dropped = runtime.submit(
            "puppet", {}, session_id="s", options=CallOptions(overdue_after=30)
        )
        await settle(runtime)
        clock.advance(29)
        await settle(runtime)
        assert overdue == []
        clock.advance(1)
        await settle(runtime)
        assert sorted(overdue) == sorted([done, dropped])
        assert runtime.status(done).overdue
        assert runtime.statistics().timers_armed["overdue"] == 2  # re-armed
        clock.advance(30)
        await settle(runtime)
        assert overdue.count(done) == overdue.count(dropped) == 2
        puppet.complete(done)
        await runtime.wait(done)
        runtime.cancel(dropped)
        await settle(runtime)
        assert runtime.statistics().timers_armed["overdue"] == 0
        clock.advance(90)
        await settle(runtime)
        assert len(overdue) == 4


async def test_an_overdue_call_grants_a_turn_each_interval_while_the_turn_waits(
    clock: ManualClock,
) -> None:
    """Seed: with the default ``yield_when_all_done`` and ``call_overdue_after``, an
    overdue call grants the model a turn (an overdue notice names it, it still runs),
    and each further interval, twice the one before, grants another."""
    puppet = Puppet()
    provider = ScriptedProvider(
        (
            lambda r: "slow" in last_user_text(r),
            lambda r: tool_calls(("puppet", {"label": "slow"})),
        ),
        (lambda r: "is overdue" in last_user_text(r), lambda r: text("still waiting on it")),
    )
    config = AgentConfig(call_overdue_after=30)
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(config, session_id="s")
        session.post("slow")
        (call,) = await submitted_calls(runtime, "s")
        asked = len(provider.requests)
        assert asked == 1
        for interval, seconds in ((1, 30), (2, 60)):
            clock.advance(seconds)
            with anyio.fail_after(5):
                while len(provider.requests) == asked:
                    await settle(runtime)
            await settle(runtime)
            asked = len(provider.requests)
            assert asked == 1 + interval
            request = provider.requests[-1]
            assert f"tool call {call.provider_call_id} is overdue" in last_user_text(request)
            assert runtime.status(call.call_id).status is CallStatus.RUNNING
        puppet.complete(call.call_id, "at last")
        await runtime.wait(call.call_id)
        await settle(runtime)
        assert runtime.statistics().timers_armed["overdue"] == 0


@pytest.mark.parametrize("durable", [False, True], ids=["memory", "store"])
async def test_a_token_expires_on_the_runtimes_clock(
    tmp_path: Path, clock: ManualClock, durable: bool
) -> None:
    """Issue 10: a token past the host's ``token_ttl`` answers ``expired`` (with or
    without a store), leaves the pending list, and the model is told the call expired."""
    provider = ScriptedProvider(
        (lambda r: "approve" in last_user_text(r), lambda r: tool_calls(("puppet", {}))),
        (has_results, lambda r: text("noted")),
    )
    config = AgentConfig(policy=ToolPolicy(rules={"puppet": Disposition.DEFER}))
    async with contextlib.AsyncExitStack() as stack:
        store = None
        if durable:
            store = await stack.enter_async_context(await SqliteStore.open(tmp_path / "a.db"))
        runtime = await stack.enter_async_context(Runtime([Puppet().tool], clock=clock))
        host = await stack.enter_async_context(Host(runtime, provider, store=store, token_ttl=60))
        session = await host.create_session(config, session_id="s")
        session.post("approve this")
        with anyio.fail_after(5):
            while session.status is not SessionStatus.WAITING_EXTERNAL:
                await settle(runtime)
        (record,) = host.tokens.pending("s")
        assert runtime.statistics().timers_armed["hard"] == 1
        clock.advance(59)
        await settle(runtime)
        assert host.tokens.pending("s") == [record], "not yet"
        clock.advance(1)
        with anyio.fail_after(5):
            while not (session.idle and len(provider.requests) == 2):
                await settle(runtime)
        call = runtime.status(record.call_id)
        assert call.status is CallStatus.FAILED and call.error is not None
        assert call.error.message == "expired: nobody completed it within 60 s"
        assert host.tokens.pending("s") == []
        assert await host.complete(record.token, "too late") is Completion.EXPIRED
        (result,) = last_tool_results(provider.requests[1])
        assert result["is_error"] is True and "expired" in result["content"]
        assert runtime.statistics().timers_armed["hard"] == 0
