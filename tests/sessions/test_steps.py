"""How a session moves: the step after a call runs in that call's task, stops, crashes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agentos import AgentConfig
from agentos import Disposition
from agentos import Host
from agentos import ManualClock
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import ToolPolicy
from agentos import YieldOnTimeout
from agentos import tool
from agentos.testing import Puppet
from agentos.testing import last_tool_results
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.turns import Message
from agentos.turns import TranscriptView
from agentos.turns import ViewInput
from tests.sessions.conftest import waiting_for_a_call
from tests.support.arguments import Empty
from tests.support.backends import running
from tests.support.scripting import asks
from tests.support.scripting import has_results
from tests.support.scripting import until
from tests.support.transcripts import assert_valid_transcript

pytestmark = pytest.mark.anyio


class Label(BaseModel):
    label: str


async def test_the_request_after_the_last_call_goes_out_from_that_calls_task(
    clock: ManualClock,
) -> None:
    """No scheduling hop between a call finishing and its session's next request."""
    gates = {"first": anyio.Event(), "second": anyio.Event()}
    tasks: dict[str, int] = {}

    @tool
    async def gated(args: Label) -> str:
        await gates[args.label].wait()
        tasks[args.label] = anyio.get_current_task().id
        return args.label

    def answer(request: ModelRequest) -> ModelResponse:
        tasks["request"] = anyio.get_current_task().id
        return text("both back")

    provider = ScriptedProvider(
        (
            asks("go"),
            lambda r: tool_calls(("gated", {"label": "first"}), ("gated", {"label": "second"})),
        ),
        (has_results, answer),
    )
    async with running(provider, gated, clock=clock) as (runtime, host):
        session = await host.create_session()
        session.post("go")
        await until(lambda: len(runtime.list_calls(session.session_id)) == 2, runtime)
        gates["second"].set()
        await until(lambda: "second" in tasks, runtime)
        gates["first"].set()
        with anyio.fail_after(5):
            await session.wait_idle()
    assert session.replies == ["", "both back"]
    assert tasks["request"] == tasks["first"] != tasks["second"]


async def test_stop_while_waiting_for_calls_cancels_them(clock: ManualClock) -> None:
    """Seed 000: stopping a session cancels its running calls, and the history says so."""
    async with waiting_for_a_call(clock) as (puppet, provider, runtime, session):
        session.stop()
        with pytest.raises(RuntimeError, match="is stopped"):
            session.post("more")
        with anyio.fail_after(5):
            await session.wait_idle()
        assert session.status == "stopped", session.errors
        (call,) = puppet.calls
        snapshot = runtime.status(call)
        assert (snapshot.status, snapshot.cancel_reason) == ("cancelled", "session stopped")
        assert runtime.statistics().timers_armed["hard"] == 0
    assert len(provider.requests) == 1
    assert_valid_transcript(session.history)
    (result,) = session.history[-1]["content"]
    assert result["is_error"] is True
    assert result["content"].startswith("cancelled")


async def test_stop_without_cancelling_leaves_the_calls_running(clock: ManualClock) -> None:
    """``stop(cancel_calls=False)`` detaches the calls: placeholders, and they go on."""
    async with waiting_for_a_call(clock) as (puppet, _, runtime, session):
        session.stop(cancel_calls=False)
        with anyio.fail_after(5):
            await session.wait_idle()
        assert session.status == "stopped", session.errors
        (call,) = puppet.calls
        assert runtime.status(call).status == "running"  # the runtime's calls go on
    assert_valid_transcript(session.history)
    (result,) = session.history[-1]["content"]
    assert '"status": "running"' in result["content"]


async def test_stop_while_the_model_answers_cuts_the_request_and_runs_nothing(
    clock: ManualClock,
) -> None:
    """A stop does not wait for the model: the request in flight is cancelled (a stream
    is closed at once, issue 28), none of what it would have asked for runs, and the
    history stays a valid transcript."""
    puppet = Puppet()
    answering = anyio.Event()
    cut = anyio.Event()

    class Slow:
        name = "slow"

        async def complete(self, request: ModelRequest) -> ModelResponse:
            answering.set()
            try:
                await anyio.sleep_forever()
            finally:
                cut.set()
            return tool_calls(("puppet", {}))

    async with running(Slow(), puppet.tool, clock=clock) as (_, host):
        session = await host.create_session()
        session.post("go")
        with anyio.fail_after(5):
            await answering.wait()
        session.stop()
        with anyio.fail_after(5):
            await cut.wait()
            await session.wait_idle()
    assert session.status == "stopped"
    assert session.errors == [], "a stop is no failure"
    assert puppet.calls == {}
    assert_valid_transcript(session.history)
    assert session.history == [{"role": "user", "content": [{"type": "text", "text": "go"}]}]


async def test_a_session_bug_in_a_handed_off_step_stops_that_session_only(
    clock: ManualClock,
) -> None:
    class Fragile(TranscriptView):
        """Breaks when it sees a tool result of session "bad"."""

        def build(self, view_input: ViewInput) -> Sequence[Message]:
            if view_input.session_id == "bad" and "tool_result" in str(view_input.history[-1]):
                raise KeyError("view bug")
            return super().build(view_input)

    @tool
    async def quick(args: Empty) -> int:
        return 1

    provider = ScriptedProvider(
        (asks("hello"), lambda r: tool_calls(("quick", {}))),
        (has_results, lambda r: text(f"got {last_tool_results(r)[0]['content']}")),
    )
    async with running(provider, quick, clock=clock, view=Fragile()) as (_, host):
        bad = await host.create_session(session_id="bad")
        good = await host.create_session(session_id="good")
        bad.post("hello")
        good.post("hello")
        with anyio.fail_after(5):
            await bad.wait_idle()
            await good.wait_idle()
        good.post("hello")
        with anyio.fail_after(5):
            await good.wait_idle()
    assert bad.errors == ["session_crashed: KeyError: 'view bug'"]
    assert bad.status == "failed"
    assert good.replies == ["", "got 1", "", "got 1"]
    assert good.errors == []


async def test_closing_the_host_cancels_a_step_running_in_a_calls_task(
    clock: ManualClock,
) -> None:
    asked = anyio.Event()
    cancelled: list[bool] = []

    @tool
    async def quick(args: Empty) -> int:
        return 1

    class Hangs:
        name = "hangs"

        async def complete(self, request: ModelRequest) -> ModelResponse:
            if not last_tool_results(request):
                return tool_calls(("quick", {}))
            asked.set()
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                cancelled.append(True)
                raise
            raise AssertionError("unreachable")

    config = AgentConfig(policy=ToolPolicy(default=Disposition.RUN_ASYNC))
    with anyio.fail_after(5):
        async with Runtime([quick], clock=clock) as runtime:
            async with Host(runtime, Hangs()) as host:
                session = await host.create_session(config)
                session.post("go")
                await asked.wait()
            assert cancelled == [True]
            assert session.status == "stopped"
            await session.wait_idle()  # the cut request is not left queued: nothing waits on
            extra: Any = runtime.submit("quick", {})
            assert (await runtime.wait(extra)).result == 1  # the runtime is unharmed


async def test_yield_on_timeout_reads_the_runtime_clock(clock: ManualClock) -> None:
    config = AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=60_000))
    went_on = (has_results, lambda r: text("went on"))
    async with waiting_for_a_call(clock, went_on, config=config) as (_, provider, runtime, session):
        clock.advance(59)
        await settle(runtime)
        assert len(provider.requests) == 1
        clock.advance(2)
        await until(lambda: session.idle, runtime)
        assert session.replies[-1] == "went on"
        (placeholder,) = last_tool_results(provider.requests[-1])
        assert '"status": "running"' in placeholder["content"]


async def test_past_the_yield_deadline_a_run_sync_call_still_holds_the_turn(
    clock: ManualClock,
) -> None:
    background, careful = Puppet(), Puppet(name="careful")
    provider = ScriptedProvider(
        (asks("both"), lambda r: tool_calls(("careful", {}), ("puppet", {}))),
        (has_results, lambda r: text("went on")),
    )
    config = AgentConfig(
        async_yield_strategy=YieldOnTimeout(milliseconds=60_000),
        policy=ToolPolicy(rules={"careful": Disposition.RUN_SYNC}),
    )
    async with running(provider, background.tool, careful.tool, clock=clock) as (runtime, host):
        session = await host.create_session(config)
        session.post("both")
        await until(lambda: session.status == "waiting", runtime)
        clock.advance(61)
        await settle(runtime)
        assert len(provider.requests) == 1
        assert session.status == "waiting"
        (call,) = careful.calls
        careful.complete(call, "done carefully")
        await until(lambda: session.idle, runtime)
        sync_result, placeholder = last_tool_results(provider.requests[-1])
        assert sync_result["content"] == "done carefully"
        assert '"status": "running"' in placeholder["content"]


async def test_a_yield_deadline_set_in_a_handed_off_step_still_fires() -> None:
    """The step that sets it runs in a call's task; the session's own task must wake for it."""
    background, careful = Puppet(), Puppet(name="careful")
    provider = ScriptedProvider(
        (asks("go"), lambda r: tool_calls(("careful", {}))),
        (lambda r: "carefully" in str(last_tool_results(r)), lambda r: tool_calls(("puppet", {}))),
        (has_results, lambda r: text("went on")),
    )
    config = AgentConfig(
        async_yield_strategy=YieldOnTimeout(milliseconds=20),  # on the system clock
        policy=ToolPolicy(rules={"careful": Disposition.RUN_SYNC}),
    )
    async with running(provider, background.tool, careful.tool) as (runtime, host):
        session = await host.create_session(config)
        session.post("go")
        await until(lambda: len(careful.calls) == 1, runtime)
        (call,) = careful.calls
        careful.complete(call, "done carefully")
        with anyio.fail_after(5):
            await session.wait_idle()
        assert session.replies[-1] == "went on"
        (placeholder,) = last_tool_results(provider.requests[-1])
        assert '"status": "running"' in placeholder["content"]
