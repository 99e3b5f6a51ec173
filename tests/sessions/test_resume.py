"""Sessions that outlive the process: resume from the store, orphaned calls, tokens; restarts
that keep their promises and an idempotent resume (issue 24, points 13 and 14)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentos import AgentConfig
from agentos import Completion
from agentos import ManualClock
from agentos import ScriptedProvider
from agentos import Session
from agentos import SessionStatus
from agentos import SqliteStore
from agentos import YieldOnTimeout
from agentos.stores import StoredSession
from agentos.stores import StoredToken
from agentos.stores import TurnCommit
from agentos.testing import HeldProvider
from agentos.testing import Puppet
from agentos.testing import blocks_of
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.turns import Caller
from agentos.turns import Message
from tests.sessions.conftest import OTHERWISE
from tests.sessions.conftest import FailsOnce
from tests.sessions.conftest import ask_for
from tests.sessions.conftest import calls_on
from tests.sessions.conftest import process
from tests.sessions.conftest import said
from tests.sessions.conftest import status_of
from tests.sessions.conftest import stored_waiting_for_approval
from tests.support.backends import hosted
from tests.support.backends import running
from tests.support.scripting import APPROVE_DEFERRED
from tests.support.scripting import BOARD
from tests.support.scripting import DEFER
from tests.support.scripting import until

pytestmark = pytest.mark.anyio

CONFIG = AgentConfig(
    policy=DEFER,
    async_yield_strategy=YieldOnTimeout(milliseconds=1),
)


def script() -> ScriptedProvider:
    return ScriptedProvider(
        (
            lambda r: "kickoff" in last_user_text(r) and not last_tool_results(r),
            lambda r: tool_calls(("puppet", {"label": "slow"}), ("approve", {"label": "ok?"})),
        ),
        (lambda r: bool(last_tool_results(r)), lambda r: text("both are under way")),
        (lambda r: True, lambda r: text(f"noted: {last_user_text(r)}")),
    )


async def test_a_restart_orphans_running_calls_and_keeps_deferred_ones(
    path: Path, clock: ManualClock
) -> None:
    puppet, approve = Puppet(), Puppet(name="approve")
    async with hosted(path, script(), puppet.tool, approve.tool, clock=clock) as (_, runtime, host):
        session = await host.create_session(CONFIG, session_id="s")
        session.post("kickoff both")
        with anyio.fail_after(5):
            while not (session.idle and len(session.history) == 4):
                clock.advance(0.001)  # the 1 ms yield deadline, on the runtime's clock
                await settle(runtime)
        uses = {b["name"]: b["id"] for b in session.history[1]["content"]}
        placeholder = json.loads(session.history[2]["content"][1]["content"])
        token = placeholder["continuation_token"]
    # The process is gone: a new runtime, a new host, the same file.
    puppet, approve = Puppet(), Puppet(name="approve")
    provider = script()
    async with hosted(path, provider, puppet.tool, approve.tool, clock=clock) as (_, runtime, host):
        session = await host.resume("s")
        caller = Caller("s", conversation_id="s")
        slow = await host.toolbox.get_tool_call_status(caller, uses["puppet"])
        deferred = await host.toolbox.get_tool_call_status(caller, uses["approve"])
        assert (slow["status"], slow["is_final"]) == ("orphaned", True)
        assert deferred["status"] == "pending"
        assert await host.complete(token, {"approved": True}) is Completion.APPLIED
        assert await host.complete(token, {"approved": True}) is Completion.ALREADY_COMPLETED
        with anyio.fail_after(5):
            while not (session.idle and len(provider.requests) == 1):
                await settle(runtime)
        told = last_user_text(provider.requests[0])
        assert f"[tool call {uses['puppet']} (puppet) finished: orphaned] error: lost" in told
        assert f"[tool call {uses['approve']} (approve) finished: completed]" in told
        assert '{"approved": true}' in told


async def test_a_token_completed_while_the_process_was_down(path: Path, clock: ManualClock) -> None:
    approve = Puppet(name="approve")
    config = APPROVE_DEFERRED
    provider = ScriptedProvider(
        (lambda r: not last_tool_results(r) and "ask" in last_user_text(r),
         lambda r: tool_calls(("approve", {}))),
        (lambda r: True, lambda r: text("ok")),
    )  # fmt: skip
    async with hosted(path, provider, approve.tool, clock=clock) as (store, runtime, host):
        session = await host.create_session(config, session_id="s")
        session.post("ask")
        with anyio.fail_after(5):
            while session.status is not SessionStatus.WAITING_EXTERNAL:
                await settle(runtime)
        (stored,) = await store.tokens_of("s")
    async with await SqliteStore.open(path) as store:
        assert await store.complete_token(stored.token, "yes") is Completion.APPLIED
    provider = ScriptedProvider((lambda r: True, lambda r: text("thanks")))
    async with hosted(path, provider, approve.tool, clock=clock) as (store, runtime, host):
        session = await host.resume("s")
        with anyio.fail_after(5):
            while not (session.idle and provider.requests):
                await settle(runtime)
        assert "finished: completed] result: yes" in last_user_text(provider.requests[0])


async def test_resume_errors(tmp_path: Path, clock: ManualClock) -> None:
    async with hosted(tmp_path / "a.db", ScriptedProvider(), clock=clock) as (_, _, host):
        with pytest.raises(LookupError, match="no session with id 'ghost'"):
            await host.resume("ghost")
        await host.create_session(session_id="here")
    async with running(ScriptedProvider(), clock=clock) as (_, host):
        with pytest.raises(RuntimeError, match="needs a Host with a store"):
            await host.resume("here")


async def test_an_unanswered_tool_use_is_repaired(tmp_path: Path, clock: ManualClock) -> None:
    history: list[Message] = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "a", "input": {}}],
        },
    ]
    async with hosted(tmp_path / "agentos.db", script(), clock=clock) as (store, _, host):
        await store.create_session(StoredSession("s", {}, "idle", 1.0, 1.0, history=(*history,)))
        session = await host.resume("s")
        repaired = session.history
        assert repaired[2]["content"][0]["tool_use_id"] == "t1"
        assert repaired[2]["content"][0]["is_error"] is True
        assert session.outstanding() == [], "nothing is left waiting"
        assert session.status is SessionStatus.IDLE
    assert len(history) == 2, "the input is not changed"


async def test_tokens_expired_a_week_ago_are_cleaned_up_when_a_host_starts(
    path: Path, clock: ManualClock
) -> None:
    week = 7 * 24 * 3600
    async with await SqliteStore.open(path, clock=lambda: 100.0 + week) as store:
        await store.create_session(StoredSession("s", {}, "idle", 1.0, 1.0))
        await store.add_token(StoredToken("old", "s", "c", "toolu_1", "approve", {}, 1.0, 50.0))
        await store.add_token(StoredToken("new", "s", "c", "toolu_2", "approve", {}, 1.0, 500.0))
        async with running(script(), clock=clock, store=store):
            pass
        assert [t.token for t in await store.tokens_of("s")] == ["new"]


async def test_a_token_that_expired_while_no_process_ran_is_told_as_expired(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Issue 11: the model hears the deferred call expired, not that it was lost."""
    history: list[Message] = [
        {"role": "user", "content": "please approve"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "approve", "input": {}}],
        },
    ]
    approve, provider = Puppet(name="approve"), script()
    async with (
        await SqliteStore.open(tmp_path / "agentos.db", clock=lambda: 1000.0) as store,
        running(provider, approve.tool, clock=clock, store=store) as (_, host),
    ):
        config = CONFIG.model_dump(mode="json")
        await store.create_session(
            StoredSession("s", config, "idle", 1.0, 1.0, history=(*history,))
        )
        await store.add_token(StoredToken("ct_x", "s", "c", "toolu_1", "approve", {}, 50.0, 500.0))
        session = await host.resume("s")
        with anyio.fail_after(5):
            await session.wait_settled()
        told = last_user_text(provider.requests[-1])
    assert "[tool call toolu_1 (approve) finished: failed]" in told
    assert "error: expired: nobody completed it within 450 s" in told
    assert "lost" not in told


async def test_a_failed_commit_is_recorded_and_retried(path: Path, clock: ManualClock) -> None:
    provider = ScriptedProvider((lambda r: True, lambda r: text(f"seen {last_user_text(r)}")))
    async with (
        await SqliteStore.open(path, busy_timeout=0.05) as store,
        running(provider, clock=clock, store=store) as (_, host),
    ):
        session = await host.create_session(session_id="s")
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
        session.post("one")
        with anyio.fail_after(5):
            await session.wait_idle()
        other.execute("ROLLBACK")
        other.close()
        assert session.errors
        assert "locked by another writer" in session.errors[0]
        assert session.replies == ["seen one"], "the conversation goes on in memory"
        session.post("two")
        with anyio.fail_after(5):
            await session.wait_idle()
        stored = await store.load_session("s")
    assert stored is not None
    assert list(stored.history) == session.history


class SlowWaitingCommits(SqliteStore):
    """A store whose commits of a ``waiting`` status hold until the test lets them through."""

    release: anyio.Event | None = None
    held = 0

    async def commit_turn(self, turn: TurnCommit) -> None:
        if turn.status == "waiting" and self.release is not None:
            self.held += 1
            await self.release.wait()
        await super().commit_turn(turn)


async def test_a_slow_status_write_does_not_hold_the_next_request(
    tmp_path: Path, clock: ManualClock
) -> None:
    """The write that records a turn waiting for its calls is done in the background: the
    call's end still reaches the model at once, and the store gets every message, in order,
    once the write goes through."""
    puppet = Puppet()
    provider = ScriptedProvider(
        (lambda r: "work" in last_user_text(r), lambda r: tool_calls(("puppet", {}))),
        (lambda r: bool(last_tool_results(r)), lambda r: text("done")),
    )
    async with (
        await SlowWaitingCommits.open(tmp_path / "agentos.db") as store,
        running(provider, puppet.tool, clock=clock, store=store) as (runtime, host),
    ):
        store.release = anyio.Event()
        session = await host.create_session(session_id="s")
        session.post("work")
        with anyio.fail_after(5):
            while not (puppet.calls and store.held):
                await settle(runtime)
        puppet.complete(next(iter(puppet.calls)), "ok")
        with anyio.fail_after(5):
            while len(provider.requests) < 2:
                await settle(runtime)
        assert store.held == 1, "the status write is still held"
        store.release.set()
        with anyio.fail_after(5):
            await session.wait_settled()
        stored = await store.load_session("s")
    assert stored is not None
    assert list(stored.history) == session.history
    assert session.replies[-1] == "done" and stored.status == "idle"


async def test_two_resumes_of_one_session_at_once_bring_it_back_once(tmp_path: Path) -> None:
    """Found by the web page (two tabs opening one stored session): both resumes awaited the
    store and both made a Session, two tasks for one id. The second now waits for the first
    and returns the same session, as a resume of a session already running here does."""
    async with hosted(tmp_path / "agentos.db", script()) as (_, _, host):
        session = await host.create_session(AgentConfig(), session_id="s")
        session.post("hi")
        with anyio.fail_after(5):
            await session.wait_idle()
        await host.unload("s")
        outcomes: list[Session] = []

        async def resume() -> None:
            outcomes.append(await host.resume("s"))

        async with anyio.create_task_group() as group:
            group.start_soon(resume)
            group.start_soon(resume)
        assert outcomes == [host.get("s"), host.get("s")]


async def test_open_finds_a_loaded_session_or_resumes_a_stored_one(
    tmp_path: Path, clock: ManualClock
) -> None:
    provider = ScriptedProvider((lambda r: True, lambda r: text("hi")))
    async with hosted(tmp_path / "agentos.db", provider, clock=clock) as (_, _, host):
        stored = await host.create_session(session_id="stored")
        stored.post("hello")
        with anyio.fail_after(5):
            await stored.wait_idle()
        await host.unload("stored")
        loaded = await host.create_session(session_id="loaded")
        assert await host.open("loaded") is loaded
        listed = {s.session_id: s for s in await host.sessions()}
        assert (listed["stored"].live, listed["stored"].status) == (False, SessionStatus.STOPPED)
        assert listed["stored"].updated_at is not None
        assert (listed["loaded"].live, listed["loaded"].running_calls) == (True, 0)
        assert [s.session_id for s in host.list()] == ["loaded"]
        with pytest.raises(LookupError, match="no session with id 'ghost'"):
            await host.open("ghost")
        both: list[Any] = []
        async with anyio.create_task_group() as group:  # two pages at once: one resume
            group.start_soon(lambda: _append(both, host.open("stored")))
            group.start_soon(lambda: _append(both, host.open("stored")))
        assert both[0] is both[1] is host.get("stored")
        assert both[0].replies == ["hi"]
        assert {s.session_id: s.live for s in await host.sessions()} == {
            "stored": True,
            "loaded": True,
        }


async def _append(into: list[Any], opening: Any) -> None:
    into.append(await opening)


async def test_open_without_a_store_knows_only_loaded_sessions(clock: ManualClock) -> None:
    async with running(ScriptedProvider(), clock=clock) as (_, host):
        with pytest.raises(LookupError, match="'gone'"):
            await host.open("gone")
        assert await host.sessions() == host.list() == []
        await host.create_session(session_id="here")
        (summary,) = await anyio.to_thread.run_sync(host.list)  # reads no runtime: any thread
        assert (summary.session_id, summary.live, summary.running_calls) == ("here", True, 0)


async def test_catch_up_nudges_only_when_the_model_has_news(
    tmp_path: Path, clock: ManualClock
) -> None:
    path, tools = tmp_path / "agentos.db", (Puppet().tool, Puppet(name="approve").tool)
    async with hosted(path, script(), *tools, clock=clock) as (_, runtime, host):
        quiet = await host.create_session(CONFIG, session_id="quiet")
        quiet.post("hello")
        busy = await host.create_session(CONFIG, session_id="busy")
        busy.post("kickoff")
        with anyio.fail_after(5):
            while not (quiet.idle and busy.idle and busy.outstanding()):
                clock.advance(0.001)
                await settle(runtime)
    provider = ScriptedProvider((lambda r: True, lambda r: text("caught up")))
    async with hosted(path, provider, Puppet().tool, Puppet(name="approve").tool, clock=clock) as (
        _,
        runtime,
        host,
    ):
        for session_id in ("quiet", "busy"):
            await host.resume(session_id)
        assert await host.catch_up("quiet", "(resumed)") is False
        assert await host.catch_up("busy", "(resumed)") is True
        with anyio.fail_after(5):
            await host.get("busy").wait_idle()
        assert last_user_text(provider.requests[0]).endswith("(resumed)")
        assert "finished: orphaned] error: lost" in last_user_text(provider.requests[0])
        assert await host.catch_up("busy", "(resumed)") is False, "the news was told"


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


async def test_a_turn_waiting_for_a_deferred_call_asks_nothing_until_its_token_completes(
    path: Path, clock: ManualClock
) -> None:
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
    path: Path, clock: ManualClock, config: AgentConfig
) -> None:
    """The call ended and its result was committed with the request that tells the model;
    the process ended before the model answered. The resumed session asks again, with the
    result, and the call reads ``completed``."""
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
    path: Path, clock: ManualClock
) -> None:
    """The turn waited for a call when the process ended: no placeholder was given, so the
    history holds only its use. Resumed, the call reads ``orphaned`` (not ``failed``) to the
    status capability, and the turn, its wait over, asks the model once."""
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
    path: Path, clock: ManualClock, config: AgentConfig
) -> None:
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
    path: Path, clock: ManualClock, config: AgentConfig, how: str
) -> None:
    """Review finding: unloading a failed session wrote it ``stopped``, so its resume never
    tried again; a board stopped by hand still asked its failed turn again."""
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
    path: Path, clock: ManualClock
) -> None:
    """Review finding: a deferred call brought back after a restart waited past its token's
    time for ever (the token answered ``expired``, the call stayed pending)."""
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
    async with running(provider, approve.tool, clock=clock, token_ttl=60) as (runtime, host):
        session = await host.create_session(APPROVE_DEFERRED, session_id="s")
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
    path: Path, clock: ManualClock
) -> None:
    """Review finding: the CLI counts a resumed session's errors and replies when ``resume``
    returns; a retry made (and failed) before that went unreported, exit code 0."""
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
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
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
    path: Path, clock: ManualClock, wakes: object, says: str | None
) -> None:
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
