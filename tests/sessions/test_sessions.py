"""Sessions on a host: the turn loop, dispositions, yield strategies and the success criteria."""

from __future__ import annotations

import json
import pickle
import sys
import time
from collections.abc import AsyncIterator
from collections.abc import Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from pydantic import BaseModel

from agentos import AgentConfig
from agentos import CallStatus
from agentos import Completion
from agentos import Decorate
from agentos import Decorator
from agentos import Disposition
from agentos import ErrorRecord
from agentos import ExecutionMode
from agentos import Host
from agentos import LocalProcessRunner
from agentos import ManualClock
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import ProviderError
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import Session
from agentos import SessionStatus
from agentos import ToolContext
from agentos import ToolPolicy
from agentos import UnknownSessionError
from agentos import UsageError
from agentos import WrongThreadError
from agentos import YieldOnAnyProgress
from agentos import YieldOnTimeout
from agentos import tool
from agentos.testing import Puppet
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.turns import Message
from tests.sessions.conftest import ScriptRule
from tests.support.arguments import Empty
from tests.support.backends import running
from tests.support.rendezvous import rendezvous
from tests.support.scripting import APPROVE_DEFERRED
from tests.support.scripting import asks
from tests.support.scripting import has_results
from tests.support.scripting import said_twice
from tests.support.scripting import until
from tests.support.transcripts import assert_valid_transcript

pytestmark = pytest.mark.anyio


def when(predicate: Callable[[ModelRequest], bool]) -> Callable[[ModelRequest], bool]:
    return predicate


def result_payloads(request: ModelRequest) -> list[Any]:
    payloads = []
    for block in last_tool_results(request):
        try:
            payloads.append(json.loads(block["content"]))
        except ValueError:
            payloads.append(block["content"])
    return payloads


HostFactory = Callable[..., Any]


async def test_two_long_calls_in_one_turn_run_concurrently(clock: ManualClock) -> None:
    provider = ScriptedProvider(
        (asks("meet"), lambda r: tool_calls(("rendezvous", {}), ("rendezvous", {}))),
        (has_results, lambda r: text(f"both said {result_payloads(r)}")),
    )
    async with running(provider, rendezvous(), clock=clock) as (_, host):
        session = await host.create_session()
        session.post("meet")
        with anyio.fail_after(5):
            await session.wait_idle()
    assert session.replies[-1] == "both said ['met', 'met']"
    assert_valid_transcript(session.history)


async def test_yield_on_any_progress_gives_a_partial_turn_when_the_first_call_ends(
    runtime: Runtime, puppet: Puppet
) -> None:
    provider = ScriptedProvider(
        (asks("two things"), lambda r: tool_calls(("puppet", {"label": "a"}), ("puppet", {}))),
        (has_results, lambda r: text("one is back")),
    )
    config = AgentConfig(async_yield_strategy=YieldOnAnyProgress())
    async with Host(runtime, provider) as host:
        session = await host.create_session(config)
        session.post("two things")
        await until(lambda: len(puppet.calls) == 2, runtime)
        first, second = list(puppet.calls)
        puppet.complete(first, "A done")
        await until(lambda: session.idle, runtime)
        partial = provider.requests[1]
        payloads = result_payloads(partial)
        assert payloads[0] == "A done"
        assert payloads[1]["agentos_placeholder"] is True
        assert payloads[1]["internal_id"] == second
        assert runtime.status(second).status is CallStatus.RUNNING
        assert_valid_transcript(session.history)
        puppet.complete(second, "B done")
        await until(lambda: len(provider.requests) == 3 and session.idle, runtime)
        late = last_user_text(provider.requests[2])
        assert "finished: completed" in late
        assert "B done" in late


def _status_script() -> ScriptedProvider:
    def look(request: ModelRequest) -> ModelResponse:
        placeholder = next(p for p in result_payloads(request) if isinstance(p, dict))
        return tool_calls(("get_tool_call_status", {"tool_call_id": placeholder["tool_call_id"]}))

    return ScriptedProvider(
        (asks("check the calendar"), lambda r: tool_calls(("puppet", {"label": "cal"}))),
        (lambda r: "how is it going" in last_user_text(r) and has_results(r), look),
        (
            lambda r: any(
                isinstance(p, dict) and p.get("status") == "running" for p in result_payloads(r)
            ),
            lambda r: text(f"still going: {result_payloads(r)[0]['progress'][-1]['payload']}"),
        ),
        (asks("stop it"), lambda r: tool_calls(("cancel_tool_call", {"tool_call_id": "PLACE"}))),
        (has_results, lambda r: text(f"done: {result_payloads(r)}")),
    )


async def test_a_question_during_a_slow_call_is_answered_with_its_status(
    runtime: Runtime, puppet: Puppet
) -> None:
    provider = _status_script()
    async with Host(runtime, provider) as host:
        session = await host.create_session()
        session.post("check the calendar")
        await until(lambda: len(puppet.calls) == 1, runtime)
        (call,) = puppet.calls
        puppet.progress(call, {"percent": 40})
        await settle(runtime)
        session.post("how is it going?")
        await until(lambda: session.idle, runtime)
        assert session.replies[-1] == "still going: {'percent': 40}"
        assert runtime.status(call).status is CallStatus.RUNNING
        assert_valid_transcript(session.history)
        puppet.complete(call, "free at 10")
        await until(lambda: session.idle and len(provider.requests) == 4, runtime)
        assert "free at 10" in last_user_text(provider.requests[-1])


async def test_the_model_can_cancel_a_running_call(runtime: Runtime, puppet: Puppet) -> None:
    cancelled: list[Any] = []

    def cancel(request: ModelRequest) -> ModelResponse:
        call_id = next(iter(puppet.calls))
        return tool_calls(("cancel_tool_call", {"tool_call_id": call_id, "reason": "user"}))

    def report(request: ModelRequest) -> ModelResponse:
        cancelled.extend(result_payloads(request))
        return text("cancelled it")

    provider = ScriptedProvider(
        (asks("slow"), lambda r: tool_calls(("puppet", {}))),
        (lambda r: "stop" in last_user_text(r) and has_results(r), cancel),
        (has_results, report),
    )
    async with Host(runtime, provider) as host:
        session = await host.create_session()
        session.post("slow")
        await until(lambda: len(puppet.calls) == 1, runtime)
        session.post("stop that")
        await until(lambda: session.idle and cancelled != [], runtime)
        (call,) = puppet.calls
        assert cancelled[0] == {
            "tool_call_id": runtime.status(call).provider_call_id,
            "internal_id": call,
            "cancelled": True,
            "previous_status": "running",
        }
        assert runtime.status(call).status is CallStatus.CANCELLED
        await settle(runtime)
        assert puppet.calls[call].cleaned_up
        assert_valid_transcript(session.history)


async def test_tool_calls_are_entities_under_their_provider_ids(
    runtime: Runtime, puppet: Puppet
) -> None:
    provider = ScriptedProvider(
        (asks("go"), lambda r: tool_calls(("puppet", {"label": "x"}))),
        (has_results, lambda r: text("ok")),
    )
    async with Host(runtime, provider) as host:
        session = await host.create_session(session_id="s1")
        session.post("go")
        await until(lambda: len(puppet.calls) == 1, runtime)
        tool_use_id = session.history[1]["content"][0]["id"]
        call_id = runtime.resolve(tool_use_id, session_id="s1")
        snapshot = runtime.status(call_id)
        assert snapshot.provider_call_id == tool_use_id
        assert snapshot.session_id == "s1"
        assert snapshot.tool_input == {"label": "x"}
        assert snapshot.status is CallStatus.RUNNING


def _two_step_script() -> ScriptedProvider:
    return ScriptedProvider(
        (asks("plan"), lambda r: tool_calls(("quick", {}), ("quick", {}))),
        (has_results, lambda r: text(f"results {result_payloads(r)}")),
        (asks("meanwhile"), lambda r: text("answered")),
    )


@tool
async def quick(args: Empty, ctx: ToolContext) -> str:
    return f"done {ctx.provider_call_id}"


@pytest.mark.parametrize("mode", list(ExecutionMode))
async def test_synchronous_mode_is_the_plain_blocking_loop(
    clock: ManualClock, mode: ExecutionMode
) -> None:
    provider = _two_step_script()
    async with running(provider, quick, clock=clock) as (_, host):
        session = await host.create_session(AgentConfig(execution_mode=mode))
        session.post("plan")
        with anyio.fail_after(5):
            await session.wait_idle()
    roles = [(m["role"], [b["type"] for b in m["content"]]) for m in session.history]
    assert roles == [
        ("user", ["text"]),
        ("assistant", ["tool_use", "tool_use"]),
        ("user", ["tool_result", "tool_result"]),
        ("assistant", ["text"]),
    ]
    assert "agentos_placeholder" not in json.dumps(session.history)
    assert_valid_transcript(session.history)


async def test_in_synchronous_mode_a_user_message_waits_for_the_calls(
    runtime: Runtime, puppet: Puppet
) -> None:
    provider = ScriptedProvider(
        (asks("slow"), lambda r: tool_calls(("puppet", {}))),
        (has_results, lambda r: text("got it")),
        (asks("meanwhile"), lambda r: text("answered later")),
    )
    config = AgentConfig(execution_mode=ExecutionMode.SYNCHRONOUS)
    async with Host(runtime, provider) as host:
        session = await host.create_session(config)
        session.post("slow")
        await until(lambda: len(puppet.calls) == 1, runtime)
        session.post("meanwhile?")
        await settle(runtime)
        assert len(provider.requests) == 1, "the turn blocks on the call"
        puppet.complete(next(iter(puppet.calls)), "x")
        await until(lambda: session.idle, runtime)
    assert session.replies == ["", "got it", "answered later"]


async def test_orphaned_for_calls_a_restored_history_mentions(clock: ManualClock) -> None:
    history: list[Message] = [
        {"role": "user", "content": "check"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_old", "name": "puppet", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_old",
                    "content": json.dumps({"agentos_placeholder": True, "tool_call_id": "x-1"}),
                }
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "running"}]},
    ]
    seen: list[Any] = []

    def look(request: ModelRequest) -> ModelResponse:
        return tool_calls(("get_tool_call_status", {"tool_call_id": "toolu_old"}))

    def report(request: ModelRequest) -> ModelResponse:
        seen.extend(result_payloads(request))
        return text("it is gone")

    provider = ScriptedProvider((asks("status"), look), (has_results, report))
    puppet = Puppet()
    async with running(provider, puppet.tool, clock=clock) as (_, host):
        session = await host.create_session(session_id="restored", history=history)
        session.post("status?")
        with anyio.fail_after(5):
            await session.wait_idle()
    assert seen[0]["status"] == "orphaned"
    assert seen[0]["is_final"] is True


@asynccontextmanager
async def waiting_for_approval(
    runtime: Runtime, *rules: ScriptRule
) -> AsyncIterator[tuple[ScriptedProvider, Host, Session]]:
    """A session told to ``approve this``, its turn waiting for the deferred puppet call its
    model made; the model answers the turns after by ``rules``."""
    provider = ScriptedProvider(
        (asks("approve"), lambda r: tool_calls(("puppet", {"label": "approval"}))), *rules
    )
    config = AgentConfig(policy=ToolPolicy(rules={"puppet": Disposition.DEFER}))
    async with Host(runtime, provider) as host:
        session = await host.create_session(config)
        session.post("approve this")
        await until(lambda: session.status is SessionStatus.WAITING_EXTERNAL, runtime)
        yield provider, host, session


async def test_deferred_calls_complete_by_token(runtime: Runtime, puppet: Puppet) -> None:
    """Seed 000, yield_when_all_done: a turn holding a deferred call waits for its token
    (status ``waiting_external``); the next request carries the result as an ordinary
    tool_result, with no placeholder and no late notice."""
    async with waiting_for_approval(runtime, (has_results, lambda r: text("approved!"))) as (
        provider,
        host,
        session,
    ):
        assert host.list()[0].status is SessionStatus.WAITING_EXTERNAL
        (record,) = host.tokens.pending(session.session_id)
        assert runtime.status(record.call_id).status is CallStatus.PENDING
        assert puppet.calls == {}, "a deferred call does not run here"
        assert len(provider.requests) == 1, "the turn waits for the token"
        assert await host.complete(record.token, {"ok": True}) is Completion.APPLIED
        assert await host.complete(record.token, {"ok": True}) is Completion.ALREADY_COMPLETED
        assert await host.complete("no-such-token") is Completion.UNKNOWN
        await until(lambda: session.idle and len(provider.requests) == 2, runtime)
        assert session.replies[-1] == "approved!"
        (result,) = last_tool_results(provider.requests[1])
        assert json.loads(result["content"]) == {"ok": True}
        assert "finished:" not in last_user_text(provider.requests[1])
    assert_valid_transcript(session.history)


async def test_a_user_message_cuts_a_wait_for_a_deferred_call_short(
    runtime: Runtime,
) -> None:
    """A user message grants a turn while a deferred call waits: the model gets a
    placeholder with the continuation token, and the outcome later, once."""
    async with waiting_for_approval(
        runtime,
        (lambda r: "finished: completed" in last_user_text(r), lambda r: text("approved!")),
        (has_results, lambda r: text("still waiting")),
    ) as (provider, host, session):
        session.post("any news?")
        await until(lambda: session.idle and len(provider.requests) == 2, runtime)
        placeholder = result_payloads(provider.requests[1])[0]
        (record,) = host.tokens.pending(session.session_id)
        assert placeholder["continuation_token"] == record.token
        assert placeholder["internal_id"] == record.call_id
        assert last_user_text(provider.requests[1]) == "any news?"
        assert await host.complete(record.token, "yes") is Completion.APPLIED
        await until(lambda: session.idle and len(provider.requests) == 3, runtime)
        assert session.replies[-1] == "approved!"
    assert_valid_transcript(session.history)


async def test_a_deferred_call_does_not_hold_back_a_finished_calls_outcome(
    clock: ManualClock,
) -> None:
    """yield_when_all_done, after a user message cut the wait: the outcome of a call that
    ended by itself is told at once, not held until a person completes the deferred one,
    so ``wait_settled()`` (deferred calls not included) returns."""
    puppet, approve = Puppet(), Puppet(name="approve")
    provider = ScriptedProvider(
        (asks("both"), lambda r: tool_calls(("puppet", {}), ("approve", {}))),
        (lambda r: "finished: completed" in last_user_text(r), lambda r: text("one is done")),
        (has_results, lambda r: text("both under way")),
    )
    config = APPROVE_DEFERRED
    async with running(provider, puppet.tool, approve.tool, clock=clock) as (runtime, host):
        session = await host.create_session(config)
        session.post("do both")
        await until(lambda: bool(puppet.calls), runtime)
        session.post("any news?")
        await until(lambda: session.idle and len(provider.requests) == 2, runtime)
        puppet.complete(next(iter(puppet.calls)), "done by itself")
        with anyio.fail_after(5):
            await session.wait_settled()
        assert len(provider.requests) == 3
        told = last_user_text(provider.requests[2])
        assert "(puppet) finished: completed] result: done by itself" in told
        assert session.replies[-1] == "one is done"
        (record,) = host.tokens.pending(session.session_id)
        assert await host.complete(record.token, "yes") is Completion.APPLIED
        with anyio.fail_after(5):
            await session.wait_settled(include_deferred=True)
        assert "(approve) finished: completed" in last_user_text(provider.requests[3])
    assert_valid_transcript(session.history)


async def told_more_while_a_call_runs(
    host: Host, config: AgentConfig, puppet: Puppet, ask: str, more: str
) -> Session:
    """A session told ``ask`` (its model starts one puppet call), then ``more`` while the call
    runs: idle again, the call still running."""
    session = await host.create_session(config)
    session.post(ask)
    await until(lambda: len(puppet.calls) == 1, host.runtime)
    session.post(more)
    await until(lambda: session.idle, host.runtime)
    return session


async def test_a_result_read_through_status_is_not_delivered_again(
    runtime: Runtime, puppet: Puppet
) -> None:
    def look(request: ModelRequest) -> ModelResponse:
        call_id = next(iter(puppet.calls))
        return tool_calls(("get_tool_call_status", {"tool_call_id": call_id}))

    provider = ScriptedProvider(
        (asks("fetch"), lambda r: tool_calls(("puppet", {}))),
        (lambda r: "look" in last_user_text(r) and has_results(r), look),
        (has_results, lambda r: text("noted")),
    )
    config = AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=60_000))
    async with Host(runtime, provider) as host:
        session = await told_more_while_a_call_runs(host, config, puppet, "fetch", "working?")
        call_id = next(iter(puppet.calls))
        puppet.complete(call_id, "the answer")
        await settle(runtime)
        session.post("look now")
        await until(lambda: session.idle, runtime)
        requests = len(provider.requests)
        await settle(runtime)
        assert len(provider.requests) == requests
    assert sum("the answer" in json.dumps(m) for m in session.history) == 1


async def test_fifty_sessions_and_one_failing_provider(clock: ManualClock) -> None:
    class Broken:
        name = "broken"

        async def complete(self, request: ModelRequest) -> ModelResponse:
            raise ProviderError("overloaded", "the service is overloaded", status=529)

    good = ScriptedProvider(
        (asks("hello"), lambda r: tool_calls(("quick", {}))),
        (has_results, lambda r: text(f"hi {r.session_id}")),
    )
    async with running(good, quick, clock=clock) as (_, host):
        sessions: list[Session] = []
        for number in range(50):
            provider = Broken() if number == 7 else None
            sessions.append(await host.create_session(session_id=f"s{number}", provider=provider))
        for session in sessions:
            session.post("hello")
        with anyio.fail_after(10):
            for session in sessions:
                await session.wait_idle()
    broken = sessions.pop(7)
    assert broken.errors == ["overloaded: the service is overloaded"]
    assert broken.history == [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]
    for session in sessions:
        assert session.replies[-1] == f"hi {session.session_id}"
        assert session.errors == []
        assert_valid_transcript(session.history)


async def test_a_failed_turn_keeps_the_history_valid_for_the_next(clock: ManualClock) -> None:
    failures = [ProviderError("rate_limited", "slow down", status=429)]

    class Flaky:
        name = "flaky"

        async def complete(self, request: ModelRequest) -> ModelResponse:
            if failures:
                raise failures.pop()
            return text(f"seen {last_user_text(request)}")

    async with running(Flaky(), clock=clock) as (_, host):
        session = await host.create_session()
        session.post("one")
        with anyio.fail_after(5):
            await session.wait_idle()
        session.post("two")
        with anyio.fail_after(5):
            await session.wait_idle()
    assert session.errors == ["rate_limited: slow down"]
    assert session.replies == ["seen onetwo"]
    assert_valid_transcript(session.history)


async def test_an_error_is_a_record_with_its_kind_time_and_turn(clock: ManualClock) -> None:
    class Failing:
        name = "failing"

        async def complete(self, request: ModelRequest) -> ModelResponse:
            raise ProviderError("overloaded", "try later", status=529)

    before = time.time()
    async with running(Failing(), clock=clock) as (_, host):
        session = await host.create_session()
        for message in ("one", "two"):
            session.post(message)
            with anyio.fail_after(5):
                await session.wait_idle()
    first, second = session.errors
    assert (first.kind, first.message, first.turn) == ("overloaded", "try later", 1)
    assert second.turn == 2 and before <= first.at <= second.at <= time.time()
    assert isinstance(first, ErrorRecord) and first == "overloaded: try later"
    copy = pickle.loads(pickle.dumps(first))
    assert (copy.kind, copy.message, copy.at, copy.turn) == (first.kind, "try later", first.at, 1)


async def test_host_errors(clock: ManualClock) -> None:
    async with running(ScriptedProvider(), clock=clock) as (_, host):
        with pytest.raises(UnknownSessionError, match="no session with id 'nope'"):
            host.get("nope")
        session = await host.create_session(session_id="a")
        with pytest.raises(ValueError, match="already exists"):
            await host.create_session(session_id="a")
        with pytest.raises(UnknownSessionError):
            await host.create_session(parent="ghost")
        with pytest.raises(ValueError, match="must not be empty"):
            session.post("  ")
        with pytest.raises(TypeError, match="a user message is a str"):
            session.post(5)  # type: ignore[arg-type]
        host.stop("a")
        with anyio.fail_after(5):
            await session.wait_idle()
        assert [s.status for s in host.list()] == ["stopped"]


class SlowToStop:
    """A model that answers nothing, and takes 20 loop passes to unwind when cancelled."""

    name = "slow-to-stop"

    def __init__(self) -> None:
        self.asked = anyio.Event()
        self.unwound = False

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.asked.set()
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                for _ in range(20):
                    await anyio.lowlevel.checkpoint()
            self.unwound = True
        raise AssertionError("never answered")


async def test_a_closing_host_waits_for_every_sessions_task_and_starts_no_more(
    clock: ManualClock,
) -> None:
    """Closing ends each session's task, one mid-turn too, before the host is closed; a
    closed host refuses a new session with the error that says how to open one."""
    model = SlowToStop()
    async with Runtime([], clock=clock) as runtime:
        async with Host(runtime, model) as host:
            (await host.create_session(session_id="a")).post("hi")
            await host.create_session(session_id="b")
            with anyio.fail_after(5):
                await model.asked.wait()
        assert model.unwound, "the host closed before the session's task ended"
        with pytest.raises(UsageError, match="use 'async with Host"):
            await host.create_session(session_id="c")


def test_agent_config_loads_from_json_and_toml(tmp_path: Any) -> None:
    toml = tmp_path / "agent.toml"
    toml.write_text(
        'model = "claude-x"\nexecution_mode = "synchronous"\n'
        '[async_yield_strategy]\nkind = "yield_on_timeout"\nmilliseconds = 500\n'
        '[policy]\ndefault = "run_sync"\nrules = { slow = "defer" }\n'
    )
    config = AgentConfig.from_file(toml)
    assert config.model == "claude-x"
    assert config.async_yield_strategy == YieldOnTimeout(milliseconds=500)
    assert config.policy.disposition("slow") is Disposition.DEFER
    assert config.disposition("slow") is Disposition.RUN_SYNC, "synchronous mode wins"
    as_json = tmp_path / "agent.json"
    as_json.write_text(json.dumps({"policy": {"default": "teleport"}}))
    with pytest.raises(ValueError, match=r"policy\.default"):
        AgentConfig.from_file(as_json)


async def test_a_model_that_never_answers_times_the_turn_out(clock: ManualClock) -> None:
    class Silent:
        name = "silent"

        async def complete(self, request: ModelRequest) -> ModelResponse:
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

    async with running(Silent(), clock=clock) as (_, host):
        session = await host.create_session(AgentConfig(request_timeout=0.01))
        session.post("anyone there?")
        with anyio.fail_after(5):
            await session.wait_idle()
    assert session.errors == ["timeout: no answer from the model in 0.01s"]


async def test_a_stop_as_the_request_times_out_stops_the_session_and_the_timeout_is_told(
    clock: ManualClock,
) -> None:
    """The model's request runs out of time, and the session is stopped while that
    cancel reaches the provider: the stop takes, and the error says timeout (it raised
    inside the provider on 3e98e4c, which then read as the provider's bug)."""
    stopped: list[Session] = []

    class StoppedAtTheDeadline:
        name = "stopped"

        async def complete(self, request: ModelRequest) -> ModelResponse:
            try:
                await anyio.sleep_forever()
            finally:
                stopped[0].stop()
            raise AssertionError("unreachable")

    async with running(StoppedAtTheDeadline(), clock=clock) as (_, host):
        session = await host.create_session(AgentConfig(request_timeout=0.01))
        stopped.append(session)
        session.post("anyone there?")
        with anyio.fail_after(5):
            await session.wait_idle()
    assert session.ended
    assert session.errors == ["timeout: no answer from the model in 0.01s"]


async def test_sessions_are_entities_too(clock: ManualClock) -> None:
    provider = ScriptedProvider((asks("hi"), lambda r: text("hello")))
    async with running(provider, clock=clock) as (runtime, host):
        await host.create_session(AgentConfig(name="greeter", model="m1"), session_id="p")
        child = await host.create_session(session_id="c", parent="p")
        child.post("hi")
        with anyio.fail_after(5):
            await child.wait_idle()
        entity = runtime.session("c")
        assert (entity.agent, entity.parent_session_id, entity.status) == ("agent", "p", "idle")
        assert entity.requests == 1
        assert runtime.session("p").model == "m1"
        with pytest.raises(UnknownSessionError, match="no session with id"):
            runtime.session("nobody")


COUNTED: list[str] = []


class Word(BaseModel):
    word: str


@tool
async def shout(args: Word) -> str:
    COUNTED.append(args.word)
    return args.word.upper() * 10


async def test_decorate_caches_truncates_labels_and_times_out(clock: ManualClock) -> None:
    COUNTED.clear()
    provider = ScriptedProvider(
        (asks("shout"), lambda r: tool_calls(("shout", {"word": "hey"}))),
        (has_results, lambda r: text(f"heard {result_payloads(r)}")),
    )
    rule = Decorate(
        decorate=[
            Decorator(label="loud"),
            Decorator(cache=True),
            Decorator(truncate=12),
            Decorator(timeout=5),
            Decorator(retries=1),
        ],
        then=Disposition.RUN_SYNC,
    )
    config = AgentConfig(policy=ToolPolicy(rules={"shout": rule}))
    async with said_twice(provider, shout, config, clock, "shout") as (runtime, session):
        call, cached = runtime.list_calls("s")
    assert COUNTED == ["hey"], "the second call is answered from the cache"
    assert (cached.from_cache, cached.result, cached.label) == (True, call.result, "loud")
    assert session.replies[-1] == session.replies[1]
    assert session.replies[1] == "heard ['HEYHEYHEYHEY... [truncated to 12 of 30 bytes]']"
    assert call.label == "loud"
    assert_valid_transcript(session.history)


def test_decorators_are_checked() -> None:
    with pytest.raises(ValueError, match="exactly one of"):
        Decorator(label="x", cache=True)
    with pytest.raises(ValueError, match="each decorator may appear once"):
        Decorate(decorate=[Decorator(cache=True), Decorator(cache=True)])


async def test_run_isolated_goes_to_the_agents_runner(clock: ManualClock, tmp_path: Any) -> None:
    script = tmp_path / "runner.py"
    script.write_text(
        "import json, sys\n"
        "e = json.load(sys.stdin)\n"
        "print(json.dumps({'token': e['token'], 'result': 'far ' + e['tool_input']['word']}))\n"
    )
    provider = ScriptedProvider(
        (asks("remote"), lambda r: tool_calls(("shout", {"word": "away"}))),
        (has_results, lambda r: text(f"got {result_payloads(r)}")),
    )
    config = AgentConfig(policy=ToolPolicy(rules={"shout": Disposition.RUN_ISOLATED}))
    async with running(provider, shout, clock=clock) as (runtime, host):
        runtime.add_runner("local", LocalProcessRunner([sys.executable, str(script)]))
        session = await host.create_session(config)
        session.post("remote please")
        with anyio.fail_after(10):
            await session.wait_idle()
    assert session.replies[-1] == "got ['far away']"


async def test_the_models_bad_tool_calls_come_back_as_errors_it_can_read(
    clock: ManualClock,
) -> None:
    bad = ModelResponse(
        [
            {"type": "tool_use", "id": "toolu_b1", "name": "no_such_tool", "input": {}},
            {"type": "tool_use", "id": "toolu_b2", "name": "shout", "input": {"word": 5}},
            {"type": "tool_use", "id": "toolu_b3", "name": "shout", "input": "loud"},
            {"type": "tool_use", "id": "toolu_b4", "name": "get_tool_call_status", "input": {}},
        ],
        "tool_use",
    )
    seen: list[Any] = []

    def report(request: ModelRequest) -> ModelResponse:
        seen.extend(last_tool_results(request))
        return text("I see the errors")

    provider = ScriptedProvider((asks("go"), lambda r: bad), (has_results, report))
    async with running(provider, shout, clock=clock) as (_, host):
        session = await host.create_session()
        session.post("go")
        with anyio.fail_after(5):
            await session.wait_idle()
    assert [block["is_error"] for block in seen] == [True, True, True, True]
    assert "unknown tool 'no_such_tool'" in seen[0]["content"]
    assert "word: Input should be a valid string" in seen[1]["content"]
    assert "invalid input for tool 'shout': tool input must be a JSON object" in seen[2]["content"]
    assert '"code":"invalid_input"' in seen[3]["content"]
    assert session.replies[-1] == "I see the errors"
    assert_valid_transcript(session.history)


async def test_an_overdue_call_grants_the_model_a_turn(
    runtime: Runtime, puppet: Puppet, clock: ManualClock
) -> None:
    provider = ScriptedProvider(
        (asks("slow"), lambda r: tool_calls(("puppet", {}))),
        (has_results, lambda r: text("started")),
        (lambda r: "is overdue" in last_user_text(r), lambda r: text("still waiting on it")),
    )
    config = AgentConfig(async_yield_strategy=YieldOnAnyProgress(), call_overdue_after=30)
    async with Host(runtime, provider) as host:
        session = await told_more_while_a_call_runs(host, config, puppet, "slow", "anything new?")
        requests = len(provider.requests)
        clock.advance(30)
        await until(lambda: session.idle and len(provider.requests) == requests + 1, runtime)
    assert session.replies[-1] == "still waiting on it"
    assert_valid_transcript(session.history)


@pytest.mark.parametrize("view", ["transcript", "board"])
async def test_a_post_from_another_thread_is_refused_and_post_threadsafe_works(
    view: str,
) -> None:
    """A caller on the wrong thread: ``post`` and ``stop`` raise ``WrongThreadError``
    naming the thread-safe form and change nothing (before, the post ran on the foreign
    thread and the loop never woke); ``post_threadsafe`` and ``stop_threadsafe`` do it."""
    provider = ScriptedProvider((lambda r: True, lambda r: text("hello back")))
    async with running(provider) as (_, host):
        session = await host.create_session(AgentConfig(context_view=view))
        with pytest.raises(WrongThreadError, match="post_threadsafe"):
            await anyio.to_thread.run_sync(lambda: session.post("from a thread"))
        with pytest.raises(WrongThreadError, match="stop_threadsafe"):
            await anyio.to_thread.run_sync(session.stop)
        assert (session.requests, session.chat) == (0, [])
        await anyio.to_thread.run_sync(lambda: session.post_threadsafe("from a thread"))
        with pytest.raises(ValueError, match="empty"):
            await anyio.to_thread.run_sync(lambda: session.post_threadsafe(" "))
        with anyio.fail_after(5):
            await session.wait_idle()
        assert [(entry.role, entry.text) for entry in session.chat] == [
            ("user", "from a thread"),
            ("agent", "hello back"),
        ]
        await anyio.to_thread.run_sync(session.stop_threadsafe)
        assert session.status == "stopped"
    session.stop()  # review finding: once ended, stopping again is nothing, runtime or not
    await anyio.to_thread.run_sync(session.stop)


async def test_on_change_hears_a_calls_end_while_the_turn_waits_on(clock: ManualClock) -> None:
    """A call ending while its turn still waits for another moves nothing in the turn, but
    a UI shows the call's end (the MCP resource lists the calls still running): its
    ``on_change`` callbacks hear of it."""
    puppet = Puppet()
    provider = ScriptedProvider(
        (lambda r: not last_tool_results(r), lambda r: tool_calls(("puppet", {}), ("puppet", {}))),
        (lambda r: True, lambda r: text("both done")),
    )
    running_now: list[int] = []
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session()
        session.on_change(
            lambda: running_now.append(
                len(runtime.list_calls(session.session_id, include_final=False))
            )
        )
        session.post("go")
        await until(lambda: len(puppet.calls) == 2, runtime)
        first, second = puppet.calls
        puppet.complete(first, 1)
        await settle(runtime)
        assert session.status == "waiting" and running_now[-1] == 1
        puppet.complete(second, 2)
        with anyio.fail_after(5):
            await session.wait_idle()
    assert session.replies[-1] == "both done" and running_now[-1] == 0


@pytest.mark.parametrize("view", ["transcript", "board"])
async def test_on_change_hears_every_event_and_a_raising_listener_harms_nothing(
    view: str,
) -> None:
    """``Session.on_change`` (for a UI): called after each event the session takes; one that
    raises is logged and the session goes on; the returned function stops it.
    ``next_messages`` is what the model would read now."""
    provider = ScriptedProvider((lambda r: True, lambda r: text("hello back")))
    heard: list[str] = []
    async with running(provider) as (_, host):
        session = await host.create_session(AgentConfig(context_view=view))

        def broken() -> None:
            raise RuntimeError("listener bug")

        session.on_change(broken)
        stop = session.on_change(lambda: heard.append(session.status.value))
        session.post("hi")
        with anyio.fail_after(5):
            await session.wait_idle()
        assert session.errors == []
        assert heard[0] == "requesting" and heard[-1] == "idle"
        count = len(heard)
        stop()
        session.post("again")
        with anyio.fail_after(5):
            await session.wait_idle()
        assert len(heard) == count, "stopped"
        shown = json.dumps(session.next_messages())
        assert "hello back" in shown and "again" in shown
