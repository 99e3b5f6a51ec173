"""Issue 9, the session items: unloading sessions from a long-lived host, repeated tool_use ids."""

from __future__ import annotations

import gc
import itertools
import json
import tracemalloc
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from agentos import AgentConfig
from agentos import Host
from agentos import ManualClock
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import ScriptedProvider
from agentos import Session
from agentos import SessionBusyError
from agentos import SessionStatus
from agentos import YieldOnAnyProgress
from agentos import YieldOnTimeout
from agentos.testing import Puppet
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from tests.support.backends import hosted
from tests.support.backends import running
from tests.support.scripting import APPROVE_DEFERRED
from tests.support.scripting import until

pytestmark = pytest.mark.anyio


def _assert_valid_messages(history: Sequence[Mapping[str, Any]]) -> None:
    """Roles alternate; each tool_use id is unique and answered once, next, in order."""
    for earlier, later in itertools.pairwise(history):
        assert earlier["role"] != later["role"]
    for index, message in enumerate(history):
        uses = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        if message["role"] != "assistant" or not uses:
            continue
        assert len(set(uses)) == len(uses), f"repeated tool_use ids: {uses}"
        answers = [b["tool_use_id"] for b in history[index + 1]["content"]]
        assert answers[: len(uses)] == uses


async def test_item_11_a_repeated_tool_use_id_keeps_each_calls_result(clock: ManualClock) -> None:
    """Issue 9 item 11: two calls with one tool_use id in one answer keep their own results."""
    same_id = [
        {"type": "tool_use", "id": "toolu_same", "name": "puppet", "input": {"label": label}}
        for label in ("a", "b")
    ]
    provider = ScriptedProvider(
        (lambda r: last_user_text(r) == "go", lambda r: ModelResponse(same_id, "tool_use")),
        (lambda r: bool(last_tool_results(r)), lambda r: text("one is back")),
        (lambda r: "finished" in last_user_text(r), lambda r: text("both are back")),
    )
    puppet = Puppet()
    config = AgentConfig(async_yield_strategy=YieldOnAnyProgress())
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(config)
        session.post("go")
        await until(lambda: len(puppet.calls) == 2, runtime)
        calls = {c.tool_input["label"]: c for c in runtime.list_calls(session.session_id)}
        assert calls["a"].provider_call_id == "toolu_same"
        assert calls["b"].provider_call_id == "toolu_same_2"
        puppet.complete(calls["a"].call_id, "first")
        await until(lambda: session.idle and len(provider.requests) == 2, runtime)
        result, placeholder = last_tool_results(provider.requests[1])
        assert (result["tool_use_id"], result["content"]) == ("toolu_same", "first")
        assert placeholder["tool_use_id"] == "toolu_same_2"
        assert json.loads(placeholder["content"])["internal_id"] == calls["b"].call_id
        puppet.complete(calls["b"].call_id, "second")
        await until(lambda: session.idle and len(provider.requests) == 3, runtime)
        assert (
            "[tool call toolu_same_2 (puppet) finished: completed] result: second"
            in last_user_text(provider.requests[2])
        )
        second = runtime.resolve("toolu_same_2", session_id=session.session_id)
        assert runtime.status(second).result == "second"
    assert session.replies == ["", "one is back", "both are back"]
    _assert_valid_messages(session.history)


def _calls(name: str, *inputs: dict[str, Any]) -> ModelResponse:
    return ModelResponse(
        [
            {"type": "tool_use", "id": f"toolu_{name}_{n}", "name": name, "input": value}
            for n, value in enumerate(inputs)
        ],
        "tool_use",
    )


def _live_sessions() -> int:
    gc.collect()
    return sum(1 for item in gc.get_objects() if isinstance(item, Session))


class _Stalled:
    """A model that never answers (until cancelled)."""

    name = "stalled"

    def __init__(self) -> None:
        self.asked = anyio.Event()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.asked.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


async def test_item_9_unloaded_sessions_leave_nothing_behind(clock: ManualClock) -> None:
    """Issue 9 item 9: 2,000 sessions created, stopped and unloaded leave the host and
    the runtime as they were (sessions, session entities, lineage, memory)."""
    provider = ScriptedProvider((lambda r: True, lambda r: text("hi")), keep_requests=False)
    config = AgentConfig(max_running_per_session=2)
    async with running(provider, clock=clock) as (runtime, host):
        await host.create_session(session_id="root")

        async def one_round(n: int) -> None:
            session = await host.create_session(config, session_id=f"s{n}", parent="root")
            session.post("hello")
            await session.wait_idle()
            session.stop()
            await host.unload(f"s{n}")

        for n in range(50):  # warm up: caches, free lists
            await one_round(n)
        await settle(runtime)
        sessions_before = _live_sessions()
        tracemalloc.start()
        try:
            before = tracemalloc.take_snapshot()
            for n in range(50, 2_050):
                await one_round(n)
            await settle(runtime)
            gc.collect()
            grown = sum(
                stat.size_diff
                for stat in tracemalloc.take_snapshot().compare_to(before, "filename")
            )
        finally:
            tracemalloc.stop()
        assert [s.session_id for s in host.list()] == ["root"]
        assert _live_sessions() == sessions_before == 1
        assert runtime.statistics().sessions == 0
        assert host.lineage.descendants("root") == set()
        for n in (0, 1_000, 2_049):
            with pytest.raises(LookupError):
                runtime.session(f"s{n}")
        assert runtime.session("root").agent == "agent"
        assert grown < 300_000, f"{grown} bytes kept after 2,000 sessions came and went"
        assert provider.answered == 2_050


async def test_item_9_a_stopped_session_resumes_in_the_same_host(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Issue 9 item 9: a stopped session is resumed in the host that ran it, with its
    conversation, and a call that ran on meanwhile reports its outcome, not "lost"."""
    puppet = Puppet()
    provider = ScriptedProvider(
        (lambda r: last_user_text(r) == "start", lambda r: _calls("puppet", {"label": "slow"})),
        (lambda r: bool(last_tool_results(r)), lambda r: text("it runs")),
        (lambda r: True, lambda r: text(f"heard: {last_user_text(r)}")),
    )
    config = AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=1))
    async with hosted(tmp_path / "agentos.db", provider, puppet.tool, clock=clock) as (
        _,
        runtime,
        host,
    ):
        first = await host.create_session(config, session_id="s")
        first.post("start")
        with anyio.fail_after(5):
            while not (first.idle and len(provider.requests) == 2):
                clock.advance(0.001)  # the 1 ms yield deadline
                await settle(runtime)
        first.stop(cancel_calls=False)
        await first.wait_idle()
        assert first.status is SessionStatus.STOPPED
        (call,) = runtime.list_calls("s", include_final=False)
        puppet.complete(call.call_id, "done")
        await until(lambda: runtime.status(call.call_id).is_final, runtime)

        second = await host.resume("s")
        assert second is not first and host.get("s") is second
        assert second.history[:4] == first.history
        await until(lambda: second.idle and len(provider.requests) == 3, runtime)
        told = last_user_text(provider.requests[2])
        assert told == "[tool call toolu_puppet_0 (puppet) finished: completed] result: done"
        second.post("go on")
        await until(lambda: second.idle and len(provider.requests) == 4, runtime)
        assert provider.requests[3].messages[:4] == first.history, "it goes on from there"
        assert second.replies[-1] == "heard: go on"

        second.stop()
        await second.wait_idle()
        await host.unload("s")
        assert host.list() == []
        third = await host.resume("s")
        assert third.history == second.history, "unload committed the whole conversation"
    _assert_valid_messages(third.history)


async def test_item_9_a_deferred_call_outlives_its_unloaded_session(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Issue 9 item 9: unloading a session that waits for a deferred call keeps the
    call's token: completed while unloaded, the resumed session hears the result."""
    approve = Puppet(name="approve")
    provider = ScriptedProvider(
        (lambda r: last_user_text(r) == "approve", lambda r: _calls("approve", {"label": "ok?"})),
        (lambda r: True, lambda r: text(f"heard: {last_user_text(r)}")),
    )
    config = APPROVE_DEFERRED
    async with hosted(tmp_path / "agentos.db", provider, approve.tool, clock=clock) as (
        _,
        runtime,
        host,
    ):
        session = await host.create_session(config, session_id="s")
        session.post("approve")
        await until(lambda: session.status is SessionStatus.WAITING_EXTERNAL, runtime)
        (token,) = [record.token for record in host.tokens.pending("s")]
        await host.unload("s")
        assert runtime.list_calls("s", include_final=False) == [], "it left the runtime"
        assert (await host.complete(token, "yes")).value == "applied"
        resumed = await host.resume("s")
        await until(lambda: resumed.idle and len(provider.requests) == 2, runtime)
        assert "(approve) finished: completed] result: yes" in last_user_text(provider.requests[1])


async def test_item_9_unload_refuses_to_lose_work_unless_told(clock: ManualClock) -> None:
    """Issue 9 item 9: a session mid-turn, or (without a store) with a call the model
    has not heard the end of, is not unloaded unless ``cancel=True``; then nothing hangs."""
    puppet = Puppet()
    provider = ScriptedProvider(
        (lambda r: last_user_text(r) == "start", lambda r: _calls("puppet", {"label": "slow"})),
        (lambda r: True, lambda r: text("ok")),
    )
    config = AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=1))
    stalled = _Stalled()
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        waiting = await host.create_session(config, session_id="waiting")
        waiting.post("start")
        with anyio.fail_after(5):
            while not (waiting.idle and len(provider.requests) == 2):
                clock.advance(0.001)
                await settle(runtime)
        with pytest.raises(SessionBusyError, match=r"'waiting'.*outcome the model has not heard"):
            await host.unload("waiting")
        thinking = await host.create_session(session_id="thinking", provider=stalled)
        thinking.post("hello?")
        await stalled.asked.wait()
        with pytest.raises(SessionBusyError, match="'thinking': it is requesting"):
            await host.unload("thinking")
        assert {s.session_id for s in host.list()} == {"waiting", "thinking"}

        await host.unload("thinking", cancel=True)
        await host.unload("waiting", cancel=True)
        (call,) = runtime.list_calls("waiting")
        assert call.status.value == "cancelled"
        assert host.list() == []
        with pytest.raises(RuntimeError, match="resume needs a Host with a store"):
            await host.resume("waiting")


async def test_item_9_idle_sessions_unload_after_the_idle_timeout(clock: ManualClock) -> None:
    """Issue 9 item 9: ``unload_idle_after`` unloads a session idle that long (on the
    runtime's clock); one whose call is still out stays."""
    puppet, approve = Puppet(), Puppet(name="approve")
    provider = ScriptedProvider(
        (lambda r: last_user_text(r) == "approve", lambda r: _calls("approve", {"label": "ok?"})),
        (lambda r: True, lambda r: text("ok")),
    )
    config = APPROVE_DEFERRED
    async with running(provider, puppet.tool, approve.tool, clock=clock, unload_idle_after=60) as (
        runtime,
        host,
    ):
        chat = await host.create_session(session_id="chat")
        waits = await host.create_session(config, session_id="waits")
        chat.post("hello")
        waits.post("approve")
        await until(
            lambda: (
                chat.idle
                and waits.status is SessionStatus.WAITING_EXTERNAL
                and len(provider.requests) == 2
            ),
            runtime,
        )
        clock.advance(59)
        await settle(runtime)
        assert {s.session_id for s in host.list()} == {"chat", "waits"}
        chat.post("still here")
        await until(lambda: chat.idle and len(provider.requests) == 3, runtime)
        clock.advance(1)
        await settle(runtime)
        assert {s.session_id for s in host.list()} == {"chat", "waits"}, "chat spoke at 59 s"
        clock.advance(59)
        await until(lambda: [s.session_id for s in host.list()] == ["waits"], runtime)
        with pytest.raises(LookupError):
            runtime.session("chat")
        clock.advance(3_600)
        await settle(runtime)
        assert [s.session_id for s in host.list()] == ["waits"], "its approval is still out"
    with pytest.raises(ValueError, match="unload_idle_after must be a positive number"):
        Host(runtime, provider, unload_idle_after=0)


async def test_item_9_the_scripted_model_keeps_only_the_newest_requests() -> None:
    """Issue 9 item 9: ``ScriptedProvider`` keeps the newest 100 requests unless asked."""
    request = ModelRequest(model="m", system="", messages=[{"role": "user", "content": "hi"}])
    bounded, everything, nothing = (
        ScriptedProvider(),
        ScriptedProvider(keep_requests=True),
        ScriptedProvider(keep_requests=False),
    )
    for provider in (bounded, everything, nothing):
        for _ in range(150):
            await provider.complete(request)
        assert provider.answered == 150
    assert (len(bounded.requests), len(everything.requests), len(nothing.requests)) == (100, 150, 0)
    with pytest.raises(ValueError, match="keep_requests must be a bool or an int >= 0"):
        ScriptedProvider(keep_requests=-1)
