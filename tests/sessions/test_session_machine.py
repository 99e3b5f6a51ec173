"""A property-based test of sessions: a hypothesis state machine over a real ``Host``.

Four transcript sessions (yield when all done, on any progress, on a 1 s
timeout, and synchronous mode) and two board sessions (seed 004: one with the
defaults, one with a retry budget and an autonomous-turn budget of one and
calls that go overdue after 0.5 s) talk to a model that obeys its user:
``tools a=N s=M d=K`` calls N background tools (``puppet``, ``run_async``), M
blocking ones (``careful``, ``run_sync``) and K deferred ones (``approve``,
``defer``), ``status`` lists the running calls, ``cancel`` cancels the last
background call it started (on a board: the last ``puppet`` call the board
shows running, by the id it shows), ``fail`` makes the request fail; anything
else, and every turn that only
carries results, gets a text (on a board the command is the text of the user
node the turn is for, ``read_turn``; a turn for an agent node gets a text); it
yields once per request, as a real one would. The machine posts such
messages (also while calls run, and as one of the session's calls ends; on a
board, new threads and replies under any node), ends calls (results,
failures, cancels from outside, deferred ones completed from outside, several
at once so that some end while a step runs), moves the ``ManualClock`` and
stops sessions. After every step, with everything settled, it checks:

- every request a transcript session's model got was valid Messages:
  alternating roles, and every ``tool_use`` answered by exactly one
  ``tool_result``, first and in order, in the next message;
- each transcript session's history is valid too (an unanswered ``tool_use``
  may end it only while the session waits for calls), and every late outcome
  was told once, only for a call that got a placeholder;
- every request a board session's model got is the board: one message in the
  user role, text blocks only (no ``tool_use``/``tool_result``), the board's
  notation in the system prompt; a board session's history is at most its one
  stored board message;
- each outcome is rendered on the board: the calls a request shows final are
  exactly those final on ``Session.board`` when the request is made (the
  board is drawn again when the request goes out, so a call that ended after
  the turn was decided, as when the user writes just as it ends, is shown
  ended). Once a
  board session is idle and its runtime calls have all ended, the board has
  each with the runtime's status and, while no thread can have run out of
  autonomous turns, the last request showed every outcome;
- the status tells the truth (seed 000): at rest, a session that has not
  stopped is ``failed`` while its last model request failed (``fail``: the
  model raises, as one past the SDK's retries does) and no request has been
  tried since, else ``waiting`` while one of the calls it waits for runs
  (a turn's own, else those whose outcome it will hear later),
  ``waiting_external`` while only deferred ones do, else ``idle``, for
  transcript and board sessions alike; nothing is stuck: a session idle with all
  its calls ended has nothing ``outstanding`` (on a board: every outcome was on
  a board the model read, or its turn was dropped over the autonomous budget
  and it waits on the board for the next one);
- no session recorded an error but the failures the model was told to make.

Like ``test_lifecycle_machine``, each example runs one event loop in a
background thread (``tests/support/loop_thread.py``) and every rule acts, then
settles, on that loop.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from collections import Counter
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import asynccontextmanager
from typing import Any
from typing import TypeVar

import anyio
import anyio.lowlevel
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine
from hypothesis.stateful import invariant
from hypothesis.stateful import precondition
from hypothesis.stateful import rule

from agentos import AgentConfig
from agentos import CallStatus
from agentos import Disposition
from agentos import ExecutionMode
from agentos import ManualClock
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import ProviderError
from agentos import Session
from agentos import ToolPolicy
from agentos import YieldOnAnyProgress
from agentos import YieldOnTimeout
from agentos import YieldWhenAllDone
from agentos.board import NOTATION
from agentos.board import Board
from agentos.board import read_turn
from agentos.testing import Puppet
from agentos.testing import blocks_of
from agentos.testing import text
from agentos.turns import PLACEHOLDER_KEY
from tests.support.backends import running
from tests.support.loop_thread import LoopThread
from tests.support.loop_thread import close_streams
from tests.support.machines import machine_test
from tests.support.transcripts import transcript_problem

T = TypeVar("T")

POLICY = ToolPolicy(rules={"careful": Disposition.RUN_SYNC, "approve": Disposition.DEFER})
CONFIGS = {
    "all": AgentConfig(async_yield_strategy=YieldWhenAllDone(), policy=POLICY),
    "any": AgentConfig(async_yield_strategy=YieldOnAnyProgress(), policy=POLICY),
    "timeout": AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=1000), policy=POLICY),
    "sync": AgentConfig(execution_mode=ExecutionMode.SYNCHRONOUS, policy=POLICY),
    "board": AgentConfig(context_view="board", policy=POLICY),
    "board_tight": AgentConfig(
        context_view="board",
        policy=POLICY,
        retry_budget=1,
        autonomous_turns=1,
        call_overdue_after=0.5,
    ),
}
BOARDS = frozenset(name for name, config in CONFIGS.items() if config.context_view == "board")
STEP_SECONDS = 10.0
_OUTCOME = re.compile(r"\[tool call (\S+) \(\w+\) finished: \w+\]")
_COMMAND = re.compile(r"tools a=(\d) s=(\d) d=(\d)")
MESSAGES = st.one_of(
    st.builds(
        "tools a={} s={} d={}".format,
        st.integers(0, 2),
        st.integers(0, 1),
        st.integers(0, 1),
    ),
    st.sampled_from(["status", "cancel", "fail", "how is it going?"]),
)
_QUOTED = r"('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
_USER_NODE = re.compile(rf"^ *(?:\.\.|ok) #(\d+)(?: \(re .*?\))? user {_QUOTED}", re.MULTILINE)
_CALL_LINE = re.compile(r"^ *call #(\d+) \w+\(.*?\) (\w+)", re.MULTILINE)
_RUNNING_PUPPET = re.compile(
    r"^ *call #(\d+) puppet\(.*?\) (?:RUNNING|PENDING) as id (\"(?:[^\"\\]|\\.)*\")",
    re.MULTILINE,
)
_FINAL_WORDS = frozenset(status.value for status in CallStatus if status.is_final)


def board_text(request: ModelRequest) -> str:
    return "".join(
        str(block.get("text", "")) for message in request.messages for block in blocks_of(message)
    )


def board_request_problem(request: ModelRequest) -> str | None:
    """What makes ``request`` not the board: one user message of text blocks, the notation
    in the system prompt."""
    if len(request.messages) != 1:
        return f"{len(request.messages)} messages"
    (message,) = request.messages
    if message["role"] != "user":
        return f"a message in the {message['role']} role"
    kinds = {block.get("type") for block in blocks_of(message)}
    if kinds != {"text"}:
        return f"blocks of kinds {kinds}"
    if NOTATION not in request.system:
        return "no notation in the system prompt"
    return None


def final_on(board: Board) -> dict[int, CallStatus]:
    """The board's final calls: display id -> status."""
    return {
        call.display_id: call.status
        for node in board.nodes.values()
        for call in node.calls
        if call.status.is_final
    }


class CommandModel:
    """A zero-latency model that does what the last text of the request says (on a board:
    the text of the user node the turn is for)."""

    name = "commands"

    def __init__(self) -> None:
        self._ids = itertools.count()
        self.problems: list[str] = []
        self.sessions: Mapping[str, Session] = {}
        self.shown_at_last: dict[str, dict[int, CallStatus]] = {}
        """Per board session: the calls its last request showed final."""
        self.failed: dict[str, bool] = {}
        """Per session: its last request failed (``fail``)."""
        self.failures: Counter[str] = Counter()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        response = await self._respond(request)
        self.failed[request.session_id] = response is None
        if response is None:
            self.failures[request.session_id] += 1
            raise ProviderError("overloaded", "the model is down, as the user asked")
        return response

    async def _respond(self, request: ModelRequest) -> ModelResponse | None:
        session = self.sessions.get(request.session_id)
        board = None if session is None else session.board
        if board is not None:
            self._read_board(request, board)  # before any await: the board as it is now
        await anyio.lowlevel.checkpoint()  # as a real one would: calls may end meanwhile
        if board is not None:
            return self._board_command(request.session_id, board_text(request))
        problem = transcript_problem(request.messages, may_end_unanswered=False)
        if problem is not None:
            self.problems.append(f"{request.session_id}: {problem}")
        blocks = blocks_of(request.messages[-1])
        command = blocks[-1].get("text", "") if blocks[-1].get("type") == "text" else ""
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
        return self._command(command)

    def _command(self, command: str) -> ModelResponse | None:
        if command == "fail":
            return None
        if match := _COMMAND.fullmatch(command):
            counts = zip(("puppet", "careful", "approve"), match.groups(), strict=True)
            return self._calls([(name, {}) for name, count in counts for _ in range(int(count))])
        if command == "status":
            return self._calls([("list_running_tool_calls", {})])
        return text("ok")

    def _read_board(self, request: ModelRequest, board: Board) -> None:
        """Check the request is the board, and that its outcomes agree with ``board``."""
        session_id = request.session_id
        problem = board_request_problem(request)
        if problem is not None:
            self.problems.append(f"{session_id}: {problem}")
            return
        shown = {
            int(match[1]): CallStatus(match[2])
            for match in _CALL_LINE.finditer(board_text(request))
            if match[2] in _FINAL_WORDS
        }
        final = final_on(board)
        if shown != final:
            self.problems.append(f"{session_id}: shown final {shown}, on the board {final}")
        self.shown_at_last[session_id] = shown

    def _board_command(self, session_id: str, board: str) -> ModelResponse | None:
        """The command of the user node the turn is for; a text for any other turn."""
        turn = read_turn(board)
        if turn is None or turn.author != "user":
            return text("ok")
        nodes = {int(m[1]): ast.literal_eval(m[2]) for m in _USER_NODE.finditer(board)}
        command = nodes.get(turn.node)
        if command != turn.text:
            self.problems.append(f"{session_id}: the turn is for #{turn.node}, not a user node")
            return text("ok")
        if command == "cancel":
            running = {int(m[1]): json.loads(m[2]) for m in _RUNNING_PUPPET.finditer(board)}
            if running:
                return self._calls([("cancel_tool_call", {"tool_call_id": running[max(running)]})])
            return text("ok")
        return self._command(command)

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
        self.model.sessions = self.sessions
        self.posts: Counter[str] = Counter()
        self.loop = LoopThread(self._host_sessions)

    @asynccontextmanager
    async def _host_sessions(self) -> AsyncIterator[None]:
        tools = [self.puppet.tool, self.careful.tool, self.approve.tool]
        async with running(self.model, *tools, clock=self.clock) as (runtime, host):
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

    def _reply_to(self, session: Session, data: st.DataObject) -> int | None:
        """On a board, a new thread or a reply under any node."""
        board = session.board
        if board is None:
            return None
        nodes = self.loop.call(lambda: sorted(board.nodes))
        return data.draw(st.none() | st.sampled_from(nodes)) if nodes else None

    @rule(name=st.sampled_from(sorted(CONFIGS)), message=MESSAGES, data=st.data())
    def post(self, name: str, message: str, data: st.DataObject) -> None:
        session = self.sessions[name]
        if session.status == "stopped":
            return
        reply_to = self._reply_to(session, data)

        async def act() -> None:
            session.post(message, reply_to=reply_to)

        self.posts[name] += 1
        self._run(act)

    @precondition(lambda self: bool(self._running()))
    @rule(data=st.data(), message=MESSAGES)
    def post_as_a_call_ends(self, data: st.DataObject, message: str) -> None:
        """The user writes as one of the session's calls ends: the turn the message grants
        is decided before the call's end is known, and asked after."""
        puppet, call_id = data.draw(st.sampled_from(self._running()))
        session = self.sessions[self.loop.call(lambda: self.runtime.status(call_id).session_id)]
        if session.status == "stopped":
            return
        reply_to = self._reply_to(session, data)

        async def act() -> None:
            puppet.complete(call_id, f"result of {call_id}")
            session.post(message, reply_to=reply_to)

        self.posts[session.session_id] += 1
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
        for name, session in self.sessions.items():
            if name in BOARDS:  # the board is its own record, not messages
                assert session.history == [], name
                continue
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
        for name, session in self.sessions.items():
            assert [e.kind for e in session.errors] == ["overloaded"] * self.model.failures[name]
            calls = self.runtime.list_calls(session.session_id)
            if session.status != "stopped":  # it tells the truth about what can still happen
                running = [call for call in calls if not call.is_final]
                heard_later = {call.call_id for call in session.outstanding()}
                # a turn waits for its own calls; between turns, for those heard of later
                running = [c for c in running if c.call_id not in heard_later] or running
                truth = "idle" if not running else "waiting"
                if running and all(call.deferred for call in running):
                    truth = "waiting_external"
                if self.model.failed.get(name, False):
                    truth = "failed"
                assert session.status == truth, (name, session.status, running)
            if session.status == "idle" and all(call.is_final for call in calls):
                assert session.idle
                assert session.outstanding() == [], session.session_id
                if session.board is not None:
                    self._check_every_outcome_on_the_board(name, session.board)

    def _check_every_outcome_on_the_board(self, name: str, board: Board) -> None:
        """An idle board session whose calls have all ended: the board has every outcome
        the runtime has and, unless a thread ran out of autonomous turns, the last board
        the model read showed them all (each user message makes at most one node with
        calls, so without overdue turns a thread takes no more turns without the user than
        the session got messages)."""
        config = CONFIGS[name]
        every_wake_taken = (
            config.call_overdue_after is None and self.posts[name] <= config.autonomous_turns
        )
        shown = self.model.shown_at_last.get(name, {})
        for call in self.runtime.list_calls(name):
            on_board = board.call(call.call_id)
            assert on_board.status is call.status, (name, call.call_id, on_board, call.status)
            if every_wake_taken:
                assert shown.get(on_board.display_id) is call.status, (name, on_board, shown)


TestSessions = machine_test(SessionMachine, examples=60, steps=30)
