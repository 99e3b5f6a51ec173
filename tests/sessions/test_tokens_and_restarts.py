"""Seed 000's sessions as written (issue 24, points 12-16): a status that tells the truth,
restarts that keep their promises, an idempotent resume, waiting helpers that return when
only the outside world can move a session, and tokens that expire at once."""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentos import (
    AgentConfig,
    Completion,
    Disposition,
    Host,
    ManualClock,
    ModelRequest,
    ModelResponse,
    Provider,
    ProviderError,
    Runtime,
    ScriptedProvider,
    Session,
    SessionStatus,
    SqliteStore,
    Tool,
    ToolPolicy,
)
from agentos.stores import TokenRecord
from agentos.testing import (
    HeldProvider,
    Puppet,
    blocks_of,
    board_turn,
    last_tool_results,
    last_user_text,
    settle,
    text,
    tool_calls,
)
from agentos.turns import Caller
from tests.support.scripting import until

pytestmark = pytest.mark.anyio

ScriptRule = tuple[Callable[[ModelRequest], bool], Callable[[ModelRequest], ModelResponse]]

BOARD = AgentConfig(context_view="board")
DEFER = ToolPolicy(rules={"approve": Disposition.DEFER})


def said(request: ModelRequest) -> str:
    """What the user said that this turn answers ('' for a turn about calls)."""
    turn = board_turn(request)
    if turn is not None:
        return turn.text if turn.author == "user" else ""
    return "" if last_tool_results(request) else last_user_text(request)


def calls_on(phrase: str, *calls: str) -> ScriptRule:
    """A rule: a turn answering a user message with ``phrase`` in it makes ``calls``."""
    return (
        lambda request: phrase in said(request),
        lambda request: tool_calls(*((name, {}) for name in calls)),
    )


OTHERWISE: ScriptRule = (lambda request: True, lambda request: text("noted"))


def ask_for(*calls: str) -> ScriptedProvider:
    """A model that makes ``calls`` when asked to ``go``, and says ``noted`` otherwise."""
    return ScriptedProvider(calls_on("go", *calls), OTHERWISE)


class FailsOnce:
    """A model whose requests mentioning ``phrase`` fail, as one past the SDK's retries does,
    until ``recover``; every other request gets ``ok``."""

    name = "fails-once"

    def __init__(self, phrase: str) -> None:
        self.phrase = phrase
        self.down = True
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        if self.down and self.phrase in said(request):
            raise ProviderError("overloaded", "the API is overloaded")
        return text("ok")


@asynccontextmanager
async def process(
    path: Path, clock: ManualClock, provider: Provider, *tools: Tool[Any], **host: Any
) -> AsyncIterator[tuple[Runtime, Host]]:
    """One process's runtime and host on the store at ``path`` (a restart: the next one)."""
    async with (
        await SqliteStore.open(path) as store,
        Runtime(list(tools), clock=clock) as runtime,
        Host(runtime, provider, store=store, **host) as hosting,
    ):
        yield runtime, hosting


async def stored_waiting_for_approval(
    path: Path, clock: ManualClock, approve: Puppet, **host: Any
) -> TokenRecord:
    """A process whose session's turn waits for a deferred ``approve`` call when it ends."""
    async with process(path, clock, ask_for("approve"), approve.tool, **host) as (_, hosting):
        session = await hosting.create_session(AgentConfig(policy=DEFER), session_id="s")
        session.post("go and get it approved")
        with anyio.fail_after(5):
            await session.wait_idle()
        (record,) = hosting.tokens.pending("s")
        return record


def status_of(session: Session) -> SessionStatus:
    """The status now (mypy would keep what an earlier assert narrowed it to)."""
    return session.status


# ---------------------------------------------------------------------- 12: status


@pytest.mark.parametrize("config", [AgentConfig(), BOARD], ids=["transcript", "board"])
async def test_a_session_waits_while_calls_it_yielded_on_run(
    clock: ManualClock, config: AgentConfig
) -> None:
    """The user's message cuts the wait: the model answers, and while the call it yielded
    on runs the session reads ``waiting`` (it will speak again by itself), then ``idle``."""
    puppet = Puppet()
    provider = ScriptedProvider(calls_on("start", "puppet"), OTHERWISE)
    async with Runtime([puppet.tool], clock=clock) as runtime, Host(runtime, provider) as host:
        session = await host.create_session(config, session_id="s")
        session.post("start the work")
        await until(lambda: any(puppet.started(c) for c in puppet.calls), runtime)
        session.post("how is it going?")
        await until(lambda: session.idle, runtime)
        assert session.status is SessionStatus.WAITING
        (call_id,) = puppet.calls
        puppet.complete(call_id, "done")
        await until(lambda: session.idle and session.status is SessionStatus.IDLE, runtime)
        assert "done" in str(provider.requests[-1].messages)


@pytest.mark.parametrize(
    "config",
    [AgentConfig(policy=DEFER), AgentConfig(context_view="board", policy=DEFER)],
    ids=["transcript", "board"],
)
async def test_a_session_with_only_deferred_calls_left_waits_for_the_outside(
    clock: ManualClock, config: AgentConfig
) -> None:
    approve = Puppet(name="approve")
    provider = ScriptedProvider(calls_on("approve", "approve"), OTHERWISE)
    async with Runtime([approve.tool], clock=clock) as runtime, Host(runtime, provider) as host:
        session = await host.create_session(config, session_id="s")
        session.post("approve the trip")
        with anyio.fail_after(5):
            await session.wait_idle()
        assert session.status is SessionStatus.WAITING_EXTERNAL
        (record,) = host.tokens.pending("s")
        assert await host.complete(record.token, {"approved": True}) is Completion.APPLIED
        await until(lambda: session.status is SessionStatus.IDLE and session.idle, runtime)


@pytest.mark.parametrize("config", [AgentConfig(), BOARD], ids=["transcript", "board"])
async def test_a_failed_model_request_reads_failed_until_the_next_post_tries_again(
    clock: ManualClock, config: AgentConfig
) -> None:
    model = FailsOnce("hello")
    async with Runtime([], clock=clock) as runtime, Host(runtime, model) as host:
        session = await host.create_session(config, session_id="s")
        session.post("hello")
        with anyio.fail_after(5):
            await session.wait_idle()
        assert session.status is SessionStatus.FAILED
        assert [error.kind for error in session.errors] == ["overloaded"]
        assert not session.ended and host.list()[0].status == "failed"
        model.down = False
        session.post("hello again")
        with anyio.fail_after(5):
            await session.wait_idle()
        assert status_of(session) is SessionStatus.IDLE and len(model.requests) == 2
        assert len(session.errors) == 1, "the record of the failure stays"


# ---------------------------------------------------------------------- 14: resume


async def test_resuming_a_session_live_here_returns_it_and_sends_nothing(
    tmp_path: Path, clock: ManualClock
) -> None:
    puppet = Puppet()
    provider = ScriptedProvider(calls_on("start", "puppet"), OTHERWISE)
    async with process(tmp_path / "agentos.db", clock, provider, puppet.tool) as (runtime, host):
        session = await host.create_session(session_id="s")
        session.post("start the work")
        await until(lambda: bool(puppet.calls) and session.status is SessionStatus.WAITING, runtime)
        asked, history = provider.answered, list(session.history)
        again = await host.resume("s")
        await settle(runtime)
        assert again is session and host.list()[0].session_id == "s"
        assert provider.answered == asked and session.history == history
        assert session.status is SessionStatus.WAITING, "its turn still waits for the call"
        (call_id,) = puppet.calls
        puppet.complete(call_id, "done")
        await until(lambda: session.idle and provider.answered == asked + 1, runtime)


# ---------------------------------------------------------------------- 15: waiting helpers


async def test_waiting_helpers_return_when_only_the_outside_can_move_the_session(
    clock: ManualClock,
) -> None:
    """A turn that waits for a deferred call alone (every call final, as the default yield
    strategy asks) cannot move until someone completes it: ``wait_idle`` and ``wait_settled``
    return; ``wait_settled(include_deferred=True)`` waits for the completion."""
    approve = Puppet(name="approve")
    provider = ScriptedProvider(calls_on("approve", "approve"), OTHERWISE)
    async with Runtime([approve.tool], clock=clock) as runtime, Host(runtime, provider) as host:
        session = await host.create_session(AgentConfig(policy=DEFER), session_id="s")
        session.post("approve the trip")
        with anyio.fail_after(5):
            await session.wait_idle()
            await session.wait_settled()
        assert session.external_only and session.status is SessionStatus.WAITING_EXTERNAL
        assert provider.answered == 1, "the turn still waits: the model heard nothing yet"
        (record,) = host.tokens.pending("s")
        async with anyio.create_task_group() as group:
            group.start_soon(functools.partial(session.wait_settled, include_deferred=True))
            await settle(runtime)
            assert await host.complete(record.token, {"approved": True}) is Completion.APPLIED
        assert status_of(session) is SessionStatus.IDLE and provider.answered == 2
        assert not session.external_only


# ---------------------------------------------------------------------- 16: expiry


@pytest.mark.parametrize("durable", [False, True], ids=["memory", "store"])
async def test_an_expired_token_leaves_pending_at_once(
    tmp_path: Path, clock: ManualClock, durable: bool
) -> None:
    """The moment its time is up (before any tick), the token is not pending and completing
    it answers ``expired``; the call then ends expired, and the model hears that."""
    approve = Puppet(name="approve")
    provider = ScriptedProvider(calls_on("approve", "approve"), OTHERWISE)
    store = await SqliteStore.open(tmp_path / "agentos.db") if durable else None
    async with (
        Runtime([approve.tool], clock=clock) as runtime,
        Host(runtime, provider, store=store, token_ttl=60) as host,
    ):
        session = await host.create_session(AgentConfig(policy=DEFER), session_id="s")
        session.post("approve the trip")
        with anyio.fail_after(5):
            await session.wait_idle()
        (record,) = host.tokens.pending("s")
        clock.advance(60)
        assert host.tokens.pending("s") == []
        assert await host.complete(record.token, {"approved": True}) is Completion.EXPIRED
        await until(lambda: session.status is SessionStatus.IDLE and session.idle, runtime)
        assert "expired" in str(last_tool_results(provider.requests[-1]))
        assert await host.complete(record.token, {"approved": True}) is Completion.EXPIRED
    if store is not None:
        await store.close()


# ---------------------------------------------------------------------- 13: restarts


async def test_a_turn_waiting_for_a_deferred_call_asks_nothing_until_its_token_completes(
    tmp_path: Path, clock: ManualClock
) -> None:
    path = tmp_path / "agentos.db"
    approve = Puppet(name="approve")  # the turn waits for every call: the deferred one too
    record = await stored_waiting_for_approval(path, clock, approve)
    provider = ask_for("approve")
    async with process(path, clock, provider, approve.tool) as (runtime, host):
        session = await host.resume("s")
        assert not await host.catch_up("s", "(resumed)")
        await settle(runtime)
        assert provider.answered == 0 and session.status is SessionStatus.WAITING_EXTERNAL
        assert await host.complete(record.token, {"approved": True}) is Completion.APPLIED
        await until(lambda: session.idle and session.status is SessionStatus.IDLE, runtime)
        (request,) = provider.requests
        assert '{"approved": true}' in str(request.messages[-1])


@pytest.mark.parametrize("config", [AgentConfig(), BOARD], ids=["transcript", "board"])
async def test_a_result_committed_before_the_crash_is_delivered_not_lost(
    tmp_path: Path, clock: ManualClock, config: AgentConfig
) -> None:
    """The call ended and its result was committed with the request that tells the model;
    the process ended before the model answered. The resumed session asks again, with the
    result, and the call reads ``completed``."""
    path = tmp_path / "agentos.db"
    puppet = Puppet()
    first = ask_for("puppet")
    held = HeldProvider(first, lambda request: first.answered > 0)
    async with process(path, clock, held, puppet.tool) as (runtime, host):
        session = await host.create_session(config, session_id="s")
        session.post("go and fetch it")
        await until(lambda: any(puppet.started(c) for c in puppet.calls), runtime)
        (call_id,) = puppet.calls
        puppet.complete(call_id, "the answer is 42")
        with anyio.fail_after(5):
            await held.asked.wait()
        await settle(runtime)
    provider = ask_for("puppet")
    async with process(path, clock, provider, puppet.tool) as (runtime, host):
        session = await host.resume("s")
        assert not await host.catch_up("s", "(resumed)"), "the turn asks by itself"
        await until(lambda: session.idle and provider.answered == 1, runtime)
        (request,) = provider.requests
        assert "the answer is 42" in str(request.messages) and "lost" not in str(request.messages)
        assert session.status is SessionStatus.IDLE and session.replies[-1] == "noted"


async def test_a_call_lost_before_its_placeholder_reads_orphaned(
    tmp_path: Path, clock: ManualClock
) -> None:
    """The turn waited for a call when the process ended: no placeholder was given, so the
    history holds only its use. Resumed, the call reads ``orphaned`` (not ``failed``) to the
    status capability, and the turn, its wait over, asks the model once."""
    path = tmp_path / "agentos.db"
    puppet = Puppet()
    async with process(path, clock, ask_for("puppet"), puppet.tool) as (runtime, host):
        session = await host.create_session(session_id="s")
        session.post("go and fetch it")
        await until(lambda: any(puppet.started(c) for c in puppet.calls), runtime)
        (use,) = [b for b in blocks_of(session.history[-1]) if b.get("type") == "tool_use"]
    provider = ask_for("puppet")
    async with process(path, clock, provider, puppet.tool) as (runtime, host):
        session = await host.resume("s")
        await until(lambda: session.idle and provider.answered == 1, runtime)
        status = await host.toolbox.get_tool_call_status(Caller("s"), use["id"])
        assert (status["status"], status["is_final"]) == ("orphaned", True)
        (result,) = last_tool_results(provider.requests[0])
        assert result["tool_use_id"] == use["id"] and result["is_error"] is True


@pytest.mark.parametrize("config", [AgentConfig(), BOARD], ids=["transcript", "board"])
async def test_a_resume_tries_a_failed_request_again(
    tmp_path: Path, clock: ManualClock, config: AgentConfig
) -> None:
    path = tmp_path / "agentos.db"
    async with process(path, clock, FailsOnce("hello")) as (_, host):
        session = await host.create_session(config, session_id="s")
        session.post("hello")
        with anyio.fail_after(5):
            await session.wait_idle()
        assert session.status is SessionStatus.FAILED
    model = FailsOnce("hello")
    model.down = False
    async with process(path, clock, model) as (_, host):
        session = await host.resume("s")
        with anyio.fail_after(5):
            await session.wait_idle()
        assert status_of(session) is SessionStatus.IDLE and len(model.requests) == 1
        assert said(model.requests[0]) == "hello"
        assert not await host.catch_up("s", "(resumed)")


@pytest.mark.parametrize("config", [AgentConfig(), BOARD], ids=["transcript", "board"])
@pytest.mark.parametrize("how", ["unload", "stop"])
async def test_an_unloaded_failed_session_tries_again_a_stopped_one_does_not(
    tmp_path: Path, clock: ManualClock, config: AgentConfig, how: str
) -> None:
    """Review finding: unloading a failed session wrote it ``stopped``, so its resume never
    tried again; a board stopped by hand still asked its failed turn again."""
    path = tmp_path / "agentos.db"
    model = FailsOnce("hello")
    async with process(path, clock, model) as (_, host):
        session = await host.create_session(config, session_id="s")
        session.post("hello")
        with anyio.fail_after(5):
            await session.wait_idle()
        if how == "unload":
            await host.unload("s")
        else:
            session.stop()
        model.down = False
        with anyio.fail_after(5):
            session = await host.resume("s")
            await session.wait_idle()
        assert len(model.requests) == (2 if how == "unload" else 1), how
        assert session.status is SessionStatus.IDLE, "back, and nothing owed any more"


async def test_a_token_bound_again_after_a_restart_still_expires(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Review finding: a deferred call brought back after a restart waited past its token's
    time for ever (the token answered ``expired``, the call stayed pending)."""
    path = tmp_path / "agentos.db"
    approve = Puppet(name="approve")
    record = await stored_waiting_for_approval(path, clock, approve, token_ttl=60)
    provider = ask_for("approve")
    async with process(path, clock, provider, approve.tool) as (runtime, host):
        session = await host.resume("s")
        await settle(runtime)
        assert [r.token for r in host.tokens.pending("s")] == [record.token]
        clock.advance(61)
        await until(lambda: session.status is SessionStatus.IDLE and session.idle, runtime)
        assert "expired" in str(provider.requests[-1].messages[-1])
        assert await host.complete(record.token, {"approved": True}) is Completion.EXPIRED


async def test_a_token_completed_again_after_its_time_is_already_completed(
    clock: ManualClock,
) -> None:
    """Review finding: a replay after the time was up answered ``expired``, though the call
    had been completed in time."""
    approve = Puppet(name="approve")
    provider = ScriptedProvider(calls_on("approve", "approve"), OTHERWISE)
    async with (
        Runtime([approve.tool], clock=clock) as runtime,
        Host(runtime, provider, token_ttl=60) as host,
    ):
        session = await host.create_session(AgentConfig(policy=DEFER), session_id="s")
        session.post("approve the trip")
        with anyio.fail_after(5):
            await session.wait_idle()
        (record,) = host.tokens.pending("s")
        assert await host.complete(record.token, {"approved": True}) is Completion.APPLIED
        await settle(runtime)
        clock.advance(61)
        again = await host.complete(record.token, {"approved": True})
        assert again is Completion.ALREADY_COMPLETED


async def test_a_resume_returns_before_the_retried_request_is_made(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Review finding: the CLI counts a resumed session's errors and replies when ``resume``
    returns; a retry made (and failed) before that went unreported, exit code 0."""
    path = tmp_path / "agentos.db"
    for resuming in (False, True):
        model = FailsOnce("hello")
        async with process(path, clock, model) as (_, host):
            if not resuming:
                session = await host.create_session(session_id="s")
                session.post("hello")
            else:
                session = await host.resume("s")
                assert (model.requests, session.errors) == ([], [])
            with anyio.fail_after(5):
                await session.wait_idle()
            assert session.status is SessionStatus.FAILED and len(session.errors) == 1


async def test_a_post_that_cuts_the_last_step_gets_a_turn_of_its_own(clock: ManualClock) -> None:
    """Review finding: with no step left, a post that cut the wait went into the closing
    results and was never answered, while the session read as if all was heard."""
    puppet = Puppet()
    provider = ScriptedProvider(calls_on("start", "puppet"), OTHERWISE)
    async with Runtime([puppet.tool], clock=clock) as runtime, Host(runtime, provider) as host:
        session = await host.create_session(AgentConfig(max_steps_per_turn=1), session_id="s")
        session.post("start the work")
        await until(lambda: any(puppet.started(c) for c in puppet.calls), runtime)
        session.post("how is it going?")
        with anyio.fail_after(5):
            await session.wait_idle()
        assert "how is it going?" in last_user_text(provider.requests[-1])
        assert session.replies[-1] == "noted" and session.status is SessionStatus.WAITING


@pytest.mark.parametrize(
    ("wakes", "says"),
    [
        (5, "not a stored board: wakes is int"),
        ([{"trigger": "nope", "node": 1, "note": None}], "not a stored wake"),
        ([{"trigger": "user", "node": 99, "note": None}], None),
    ],
    ids=["not-a-list", "bad-trigger", "unknown-node"],
)
async def test_a_corrupt_stored_wake_is_a_clear_error_or_dropped(
    tmp_path: Path, clock: ManualClock, wakes: object, says: str | None
) -> None:
    path = tmp_path / "agentos.db"
    async with process(path, clock, ScriptedProvider(OTHERWISE)) as (_, host):
        session = await host.create_session(BOARD, session_id="s")
        session.post("hello")
        with anyio.fail_after(5):
            await session.wait_idle()
    with sqlite3.connect(path) as db:
        (stored,) = db.execute("SELECT board FROM sessions").fetchone()
        board = json.loads(stored) | {"wakes": wakes}
        db.execute("UPDATE sessions SET board = ?, status = 'requesting'", (json.dumps(board),))
    model = ScriptedProvider(OTHERWISE)
    async with process(path, clock, model) as (_, host):
        if says is not None:
            with pytest.raises(ValueError, match=says):
                await host.resume("s")
            assert host.list() == []
        else:
            session = await host.resume("s")
            with anyio.fail_after(5):
                await session.wait_idle()
            assert model.answered == 0, "a wake for a node the board lacks is dropped"
        other = await host.create_session(session_id="t")
        assert other.status is SessionStatus.IDLE
