"""Seed 000's decorators as written (issue 24): the order of ``retries`` and ``timeout``,
cache hits as calls, ``truncate`` in bytes, and the disposition an isolated runner hears."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agentos import AgentConfig
from agentos import CallStatus
from agentos import Decorate
from agentos import Decorator
from agentos import Disposition
from agentos import ExecutionMode
from agentos import IsolatedCall
from agentos import Json
from agentos import ManualClock
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import Session
from agentos import ToolContext
from agentos import ToolFailure
from agentos import ToolPolicy
from agentos import tool
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.turns import Caller
from agentos.turns import SystemToolbox
from tests.support.arguments import Empty
from tests.support.backends import running
from tests.support.scripting import asks
from tests.support.scripting import has_results
from tests.support.scripting import said_twice

pytestmark = pytest.mark.anyio


class Word(BaseModel):
    word: str


def decorated(tool_name: str, *decorators: Decorator, then: Disposition) -> AgentConfig:
    rule = Decorate(decorate=list(decorators), then=then)
    return AgentConfig(policy=ToolPolicy(rules={tool_name: rule}))


class Attempts:
    """A tool whose every attempt waits until the test ends it: with a result or an error."""

    def __init__(self) -> None:
        self.started: list[anyio.Event] = []
        self.endings: list[tuple[anyio.Event, list[str]]] = []

    def end(self, attempt: int, *, error: str | None = None) -> None:
        event, outcome = self.endings[attempt]
        outcome.append(error or "")
        event.set()

    def tool(self) -> Any:
        @tool
        async def attempts(args: Empty) -> str:
            ended, outcome = anyio.Event(), list[str]()
            self.endings.append((ended, outcome))
            await ended.wait()
            if outcome[0]:
                raise RuntimeError(outcome[0])
            return f"attempt {len(self.endings)}"

        return attempts


@asynccontextmanager
async def attempting(
    clock: ManualClock, *decorators: Decorator
) -> AsyncIterator[tuple[Attempts, Runtime, Session]]:
    """Session "s" asked "go", its one ``attempts`` call started under ``decorators``."""
    attempts = Attempts()
    provider = ScriptedProvider(
        (asks("go"), lambda r: tool_calls(("attempts", {}))),
        (has_results, lambda r: text("done")),
    )
    config = decorated("attempts", *decorators, then=Disposition.RUN_SYNC)
    async with running(provider, attempts.tool(), clock=clock) as (runtime, host):
        session = await host.create_session(config, session_id="s")
        session.post("go")
        await settle(runtime)
        yield attempts, runtime, session


async def test_retries_outside_timeout_bound_each_attempt(clock: ManualClock) -> None:
    """``[retries, timeout]``: the timeout is inside the retries, so each attempt gets its
    five seconds and a slow first attempt is retried, not the whole call failed."""
    decorators = Decorator(retries=1), Decorator(timeout=5)
    async with attempting(clock, *decorators) as (attempts, runtime, session):
        assert len(attempts.endings) == 1
        clock.advance(5)  # the first attempt runs out of time
        await settle(runtime)
        assert len(attempts.endings) == 2
        clock.advance(4)  # nine seconds into the call: past a whole-call bound of five
        attempts.end(1)
        with anyio.fail_after(5):
            await session.wait_idle()
        (call,) = runtime.list_calls("s")
    assert (call.status, call.result) == (CallStatus.COMPLETED, "attempt 2")


async def test_timeout_outside_retries_bounds_the_whole_call(clock: ManualClock) -> None:
    """``[timeout, retries]``: the retries run inside one five-second bound."""
    decorators = Decorator(timeout=5), Decorator(retries=1)
    async with attempting(clock, *decorators) as (attempts, runtime, session):
        clock.advance(3)
        attempts.end(0, error="flaky")
        await settle(runtime)
        assert len(attempts.endings) == 2
        clock.advance(2)  # five seconds into the call, two into the second attempt
        with anyio.fail_after(5):
            await session.wait_idle()
        (call,) = runtime.list_calls("s")
    assert call.status is CallStatus.FAILED
    assert call.error is not None and call.error.kind.value == "timed_out"


COUNTED: list[str] = []


@tool
async def shout(args: Word) -> str:
    COUNTED.append(args.word)
    return args.word.upper() * 3


async def test_a_cache_hit_is_still_a_call_the_model_can_look_at(clock: ManualClock) -> None:
    """Every call the model made is an entity: the cached one completed at once, marked as
    served from the cache, and ``get_tool_call_status`` answers for it."""
    COUNTED.clear()
    provider = ScriptedProvider(
        (asks("shout"), lambda r: tool_calls(("shout", {"word": "hey"}))),
        (has_results, lambda r: text("heard")),
    )
    config = decorated("shout", Decorator(cache=True), then=Disposition.RUN_SYNC)
    async with said_twice(provider, shout, config, clock, "shout") as (runtime, session):
        calls = runtime.list_calls("s")
        uses = [
            block["id"]
            for message in session.history
            if message["role"] == "assistant" and isinstance(message["content"], list)
            for block in message["content"]
            if block["type"] == "tool_use"
        ]
        toolbox = SystemToolbox(runtime)
        second = await toolbox.invoke(
            "get_tool_call_status", {"tool_call_id": uses[1]}, Caller("s")
        )
    assert COUNTED == ["hey"], "the second call is answered from the cache"
    assert [(c.status, c.result, c.from_cache) for c in calls] == [
        (CallStatus.COMPLETED, "HEYHEYHEY", False),
        (CallStatus.COMPLETED, "HEYHEYHEY", True),
    ]
    assert [c.provider_call_id for c in calls] == uses
    assert not second.is_error
    assert (second.content["status"], second.content["result"]) == ("completed", "HEYHEYHEY")
    assert second.content["internal_id"] == calls[1].call_id


@tool
async def accents(args: Empty) -> str:
    return "é" * 10  # two bytes each in UTF-8


async def test_truncate_keeps_the_longest_utf8_prefix_within_n_bytes(clock: ManualClock) -> None:
    """``truncate(n)`` counts bytes: 5 bytes of "ééé..." keep two characters (4 bytes), never
    half of one; the marker states the limit."""
    provider = ScriptedProvider(
        (asks("go"), lambda r: tool_calls(("accents", {}))),
        (has_results, lambda r: text("done")),
    )
    config = decorated("accents", Decorator(truncate=5), then=Disposition.RUN_SYNC)
    async with running(provider, accents, clock=clock) as (_, host):
        session = await host.create_session(config, session_id="s")
        session.post("go")
        with anyio.fail_after(5):
            await session.wait_idle()
    (result,) = [
        block
        for message in session.history
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]
    content = str(result["content"])
    assert content.startswith("éé") and not content.startswith("ééé")
    kept = content[: len(content) - len(content.lstrip("é"))]
    assert len(kept.encode()) <= 5
    marker = content[len(kept) :]
    assert "5" in re.findall(r"\d+", marker), "the marker states the limit"


class Recording:
    """An isolated runner that keeps each request it receives and answers with its input."""

    def __init__(self) -> None:
        self.requests: list[IsolatedCall] = []

    async def run(self, call: IsolatedCall, ctx: ToolContext) -> Json | ToolFailure:
        self.requests.append(call)
        return json.dumps(call.tool_input)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [(ExecutionMode.ASYNCHRONOUS, "run_isolated"), (ExecutionMode.SYNCHRONOUS, "run_sync")],
)
async def test_an_isolated_runner_hears_the_disposition_it_runs_under(
    clock: ManualClock, mode: ExecutionMode, expected: str
) -> None:
    """The request a runner receives says how the session runs the call: ``run_isolated``
    in the background, ``run_sync`` when the session runs in synchronous mode."""
    provider = ScriptedProvider(
        (asks("remote"), lambda r: tool_calls(("shout", {"word": "away"}))),
        (has_results, lambda r: text("done")),
    )
    runner = Recording()
    config = AgentConfig(
        execution_mode=mode, policy=ToolPolicy(rules={"shout": Disposition.RUN_ISOLATED})
    )
    async with running(provider, shout, clock=clock) as (runtime, host):
        runtime.add_runner("local", runner)
        session = await host.create_session(config)
        session.post("remote please")
        with anyio.fail_after(5):
            await session.wait_settled()
    assert [request.disposition for request in runner.requests] == [expected]
