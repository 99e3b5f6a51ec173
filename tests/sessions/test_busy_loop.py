"""Many busy sessions on one event loop: each pass runs some of their steps, in turn, so the
loop keeps going round for everything else on it (a page's requests, timers, other tasks)."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator
from collections.abc import Callable
from contextlib import asynccontextmanager

import anyio
import anyio.lowlevel
import pytest

from agentos import Host
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import ScriptedProvider
from agentos import Session
from agentos import SessionStatus
from agentos import tool
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import text
from agentos.testing import tool_calls
from tests.support.backends import running
from tests.support.scripting import until

pytestmark = pytest.mark.anyio

SESSIONS = 100
Answers = list[tuple[int, str | None]]
"""The pass each slow answer was given in, and the session it answered, in order."""
STEP_SECONDS = 0.002
"""How long each model answer holds the loop: every step takes at least this long."""


class Passes:
    """Counts the event loop's passes: a callback that puts itself back in line each pass."""

    def __init__(self) -> None:
        self.count = 0
        self._loop = asyncio.get_running_loop()
        self._handle = self._loop.call_soon(self._pass)

    def _pass(self) -> None:
        self.count += 1
        self._handle = self._loop.call_soon(self._pass)

    def stop(self) -> None:
        self._handle.cancel()


def slow_answer(passes: Passes, answered_in: Answers) -> Callable[[ModelRequest], ModelResponse]:
    """An answer that holds the loop ``STEP_SECONDS``; it notes in which pass it was asked,
    and for which session."""

    def answer(request: ModelRequest) -> ModelResponse:
        ends = time.perf_counter() + STEP_SECONDS
        while time.perf_counter() < ends:
            pass
        answered_in.append((passes.count, request.session_id))
        return text("done")

    return answer


def slow_model(passes: Passes, answered_in: Answers) -> ScriptedProvider:
    return ScriptedProvider((lambda request: True, slow_answer(passes, answered_in)))


@asynccontextmanager
async def all_ready(
    answered_in: Answers,
) -> AsyncIterator[tuple[Host, list[Session]]]:
    """``SESSIONS`` sessions on the slow model, each posted to in the same pass."""
    passes = Passes()
    try:
        async with running(slow_model(passes, answered_in)) as (_, host):
            sessions = [await host.create_session() for _ in range(SESSIONS)]
            for session in sessions:
                session.post("go")
            yield host, sessions
    finally:
        passes.stop()


async def test_a_pass_runs_some_of_many_ready_sessions_steps_not_all() -> None:
    answered_in: Answers = []
    async with all_ready(answered_in) as (_, sessions):
        with anyio.fail_after(30):
            for session in sessions:
                await session.wait_idle()
    assert len(answered_in) == SESSIONS
    per_pass = Counter(answered_pass for answered_pass, _ in answered_in)
    # 100 in one pass without the share: about 20 ms of steps a pass, with it
    assert max(per_pass.values()) <= 30, per_pass
    served = [session_id for _, session_id in answered_in]
    assert served == [session.session_id for session in sessions]  # in the order posted


async def test_sessions_unloaded_while_they_wait_for_a_pass_leave_the_rest_to_finish() -> None:
    answered_in: Answers = []
    async with all_ready(answered_in) as (host, sessions):
        while not answered_in:  # the first pass's steps ran; most wait for theirs
            await anyio.lowlevel.checkpoint()
        assert len(answered_in) < SESSIONS // 2
        dropped, kept = sessions[len(sessions) // 2 :], sessions[: len(sessions) // 2]
        with anyio.fail_after(30):
            for session in dropped:
                await host.unload(session.session_id, cancel=True)
            for session in kept:
                await session.wait_idle()
    assert all(session.replies == ["done"] for session in kept)
    assert all(session.status is SessionStatus.STOPPED for session in dropped)
    assert len(answered_in) < SESSIONS


async def test_the_step_after_a_call_goes_out_at_once_while_many_sessions_wait() -> None:
    """A step handed off to a finishing call's task never waits in line for a pass."""
    passes = Passes()
    released = anyio.Event()
    seen: dict[str, int] = {}

    @tool
    async def lookup() -> str:
        await released.wait()
        seen["returned"] = passes.count
        return "found"

    def answer(request: ModelRequest) -> ModelResponse:
        if last_tool_results(request):
            seen["asked"] = passes.count
            return text("done")
        return tool_calls(("lookup", {}))

    answered_in: Answers = []
    model = ScriptedProvider(
        (lambda r: bool(last_tool_results(r)) or last_user_text(r) == "look it up", answer),
        (lambda request: True, slow_answer(passes, answered_in)),
    )
    try:
        async with running(model, lookup) as (runtime, host):
            looking = await host.create_session()
            looking.post("look it up")
            await until(lambda: len(runtime.list_calls(looking.session_id)) == 1, runtime)
            others = [await host.create_session() for _ in range(SESSIONS)]
            for session in others:
                session.post("go")
            while not answered_in:  # the others fill the line
                await anyio.lowlevel.checkpoint()
            released.set()
            with anyio.fail_after(30):
                await looking.wait_idle()
                assert len(answered_in) < SESSIONS // 2
                for session in others:
                    await session.wait_idle()
    finally:
        passes.stop()
    assert looking.replies == ["", "done"]
    assert seen["asked"] - seen["returned"] <= 1
