"""A property-based test of sessions: a hypothesis state machine over a real ``Host``.

Four sessions (yield when all done, on any progress, on a 1 s timeout, and
synchronous mode) talk to a model that obeys its user: ``tools a=N s=M d=K``
calls N background tools (``puppet``, ``run_async``), M blocking ones
(``careful``, ``run_sync``) and K deferred ones (``approve``, ``defer``),
``status`` lists the running calls, ``cancel`` cancels the last background
call it started; anything else, and every turn that only carries results,
gets a text; it yields once per request, as a real one would. The machine
posts such messages (also while calls run), ends calls (results, failures,
cancels from outside, deferred ones completed from outside, several at once so
that some end while a step runs), moves the ``ManualClock`` and stops
sessions. After every step,
with everything settled, it checks:

- every request the model got was valid Messages: alternating roles, and
  every ``tool_use`` answered by exactly one ``tool_result``, first and in
  order, in the next message;
- each session's history is valid too (an unanswered ``tool_use`` may end it
  only while the session waits for calls), and every late outcome was told once,
  only for a call that got a placeholder;
- nothing is stuck: a session waits only while one of its calls runs, and a
  session whose calls have all ended has told the model every outcome;
- no session recorded an error.

Like ``test_lifecycle_machine``, each example runs one event loop in a
background thread (``tests/_loop_thread.py``) and every rule acts, then
settles, on that loop.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import anyio.lowlevel
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from agentos import (
    PLACEHOLDER_KEY,
    AgentConfig,
    Disposition,
    ExecutionMode,
    Host,
    ManualClock,
    ModelRequest,
    ModelResponse,
    Runtime,
    Session,
    ToolPolicy,
    YieldOnAnyProgress,
    YieldOnTimeout,
    YieldWhenAllDone,
)
from agentos.testing import Puppet, blocks_of, text
from tests._loop_thread import LoopThread, close_streams
from tests._transcripts import transcript_problem

T = TypeVar("T")

POLICY = ToolPolicy(rules={"careful": Disposition.RUN_SYNC, "approve": Disposition.DEFER})
CONFIGS = {
    "all": AgentConfig(async_yield_strategy=YieldWhenAllDone(), policy=POLICY),
    "any": AgentConfig(async_yield_strategy=YieldOnAnyProgress(), policy=POLICY),
    "timeout": AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=1000), policy=POLICY),
    "sync": AgentConfig(execution_mode=ExecutionMode.SYNCHRONOUS, policy=POLICY),
}
STEP_SECONDS = 10.0
_OUTCOME = re.compile(r"\[tool call (\S+) \(\w+\) finished: \w+\]")
_COMMAND = re.compile(r"tools a=(\d) s=(\d) d=(\d)")


class CommandModel:
    """A zero-latency model that does what the last text of the request says."""

    name = "commands"

    def __init__(self) -> None:
        self._ids = itertools.count()
        self.problems: list[str] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        await anyio.lowlevel.checkpoint()  # as a real one would: calls may end meanwhile
        problem = transcript_problem(request.messages, may_end_unanswered=False)
        if problem is not None:
            self.problems.append(f"{request.session_id}: {problem}")
        blocks = blocks_of(request.messages[-1])
        command = blocks[-1].get("text", "") if blocks[-1].get("type") == "text" else ""
        if match := _COMMAND.fullmatch(command):
            counts = zip(("puppet", "careful", "approve"), match.groups(), strict=True)
            return self._calls([(name, {}) for name, count in counts for _ in range(int(count))])
        if command == "status":
            return self._calls([("list_running_tool_calls", {})])
        if command == "cancel":
            started = [
                b["id"]
                for message in request.messages
                if message["role"] == "assistant"
                for b in blocks_of(message)
                if b.get("type") == "tool_use" and b["name"] == "puppet"
            ]
            if started:
                return self._calls([("cancel_tool_call", {"tool_call_id": started[-1]})])
        return text("ok")

    def _calls(self, calls: Sequence[tuple[str, dict[str, Any]]]) -> ModelResponse:
        content = [
            {"type": "tool_use", "id": f"toolu_m{next(self._ids)}", "name": name, "input": args}
            for name, args in calls
        ]
        return ModelResponse(content, "tool_use")


class SessionMachine(RuleBasedStateMachine):
    """Drives one ``Host`` per example and checks its sessions after each step."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = ManualClock()
        self.puppet = Puppet()
        self.careful = Puppet(name="careful")
        self.approve = Puppet(name="approve")
        self.model = CommandModel()
        self.sessions: dict[str, Session] = {}
        self.loop = LoopThread(self._host_sessions)

    @asynccontextmanager
    async def _host_sessions(self) -> AsyncIterator[None]:
        tools = [self.puppet.tool, self.careful.tool, self.approve.tool]
        async with (
            Runtime(tools, clock=self.clock) as runtime,
            Host(runtime, self.model) as host,
        ):
            self.runtime = runtime
            for name, config in CONFIGS.items():
                self.sessions[name] = await host.create_session(config, session_id=name)
            yield

    def _run(self, action: Callable[[], Awaitable[T]]) -> T:
        return self.loop.run(action, self.runtime, STEP_SECONDS)

    def teardown(self) -> None:
        try:
            self.loop.close()
        finally:
            close_streams(self.puppet, self.careful, self.approve)

    def _running(self) -> list[tuple[Puppet, str]]:
        def running() -> list[tuple[Puppet, str]]:
            return [
                (puppet, call_id)
                for puppet in (self.puppet, self.careful)
                for call_id, call in puppet.calls.items()
                if call.started and not self.runtime.status(call_id).is_final
            ]

        return self.loop.call(running)

    # ------------------------------------------------------------------ rules

    @rule(
        name=st.sampled_from(sorted(CONFIGS)),
        message=st.one_of(
            st.builds(
                "tools a={} s={} d={}".format,
                st.integers(0, 2),
                st.integers(0, 1),
                st.integers(0, 1),
            ),
            st.sampled_from(["status", "cancel", "how is it going?"]),
        ),
    )
    def post(self, name: str, message: str) -> None:
        session = self.sessions[name]
        if session.status == "stopped":
            return

        async def act() -> None:
            session.post(message)

        self._run(act)

    @precondition(lambda self: bool(self._running()))
    @rule(data=st.data(), ending=st.sampled_from(["complete", "fail", "cancel"]))
    def end_a_call(self, data: st.DataObject, ending: str) -> None:
        puppet, call_id = data.draw(st.sampled_from(self._running()))

        async def act() -> None:
            if ending == "complete":
                puppet.complete(call_id, f"result of {call_id}")
            elif ending == "fail":
                puppet.fail(call_id, "it broke")
            else:
                self.runtime.cancel(call_id, "the user changed their mind")

        self._run(act)

    @precondition(lambda self: len(self._running()) > 1)
    @rule()
    def end_every_running_call_at_once(self) -> None:
        """The first to end may start a step; the others end while it runs."""
        running = self._running()

        async def act() -> None:
            for puppet, call_id in running:
                puppet.complete(call_id, f"result of {call_id}")

        self._run(act)

    def _deferred(self) -> list[str]:
        def pending() -> list[str]:
            return [
                call.call_id
                for session in self.sessions
                for call in self.runtime.list_calls(session)
                if call.deferred and not call.is_final
            ]

        return self.loop.call(pending)

    @precondition(lambda self: bool(self._deferred()))
    @rule(data=st.data(), approved=st.booleans())
    def complete_a_deferred_call(self, data: st.DataObject, approved: bool) -> None:
        call_id = data.draw(st.sampled_from(self._deferred()))

        async def act() -> None:
            if approved:
                self.runtime.complete(call_id, {"approved": True})
            else:
                self.runtime.complete(call_id, error="the reviewer said no")

        self._run(act)

    @rule(seconds=st.sampled_from([0.5, 1.5]))
    def time_passes(self, seconds: float) -> None:
        async def act() -> None:
            self.clock.advance(seconds)

        self._run(act)

    @rule(name=st.sampled_from(sorted(CONFIGS)))
    def stop(self, name: str) -> None:
        session = self.sessions[name]

        async def act() -> None:
            session.stop()

        self._run(act)

    # ------------------------------------------------------------ invariants

    @invariant()
    def requests_were_valid(self) -> None:
        assert self.model.problems == []

    @invariant()
    def histories_are_valid_and_tell_each_outcome_once(self) -> None:
        for session in self.sessions.values():
            waiting = session.status in ("waiting", "waiting_external")
            problem = transcript_problem(session.history, may_end_unanswered=waiting)
            assert problem is None, f"{session.session_id}: {problem}"
            placeholders = set()
            told: Counter[str] = Counter()
            for message in session.history:
                for block in blocks_of(message):
                    if block.get("type") == "tool_result" and PLACEHOLDER_KEY in str(
                        block.get("content")
                    ):
                        placeholders.add(block["tool_use_id"])
                    told.update(_OUTCOME.findall(block.get("text", "")))
            assert all(count == 1 for count in told.values()), told
            assert set(told) <= placeholders, (told, placeholders)

    @invariant()
    def nothing_is_stuck(self) -> None:
        self.loop.call(self._check_nothing_is_stuck)

    def _check_nothing_is_stuck(self) -> None:
        for session in self.sessions.values():
            assert session.errors == []
            assert session.status in ("idle", "waiting", "waiting_external", "stopped"), (
                session.status
            )
            calls = self.runtime.list_calls(session.session_id)
            if session.status in ("waiting", "waiting_external"):
                assert any(not call.is_final for call in calls), session.session_id
            if session.status == "idle" and all(call.is_final for call in calls):
                assert session.idle
                assert session.outstanding() == [], session.session_id


SessionMachine.TestCase.settings = settings(
    max_examples=60,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestSessions = SessionMachine.TestCase
