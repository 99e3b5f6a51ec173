"""What a session's status and waits promise (issue 24, points 12, 15 and 16): a status that
tells the truth, waiting helpers that return when only the outside world can move a session,
and tokens that expire at once. Its restarts and resumes (points 13 and 14) are in
test_resume.py."""

from __future__ import annotations

import functools
from pathlib import Path

import anyio
import pytest

from agentos import AgentConfig
from agentos import Completion
from agentos import ManualClock
from agentos import ScriptedProvider
from agentos import SessionStatus
from agentos import SqliteStore
from agentos.testing import Puppet
from agentos.testing import last_tool_results
from agentos.testing import settle
from tests.sessions.conftest import OTHERWISE
from tests.sessions.conftest import FailsOnce
from tests.sessions.conftest import calls_on
from tests.sessions.conftest import status_of
from tests.sessions.conftest import waiting_for_approval
from tests.support.backends import running
from tests.support.scripting import APPROVE_DEFERRED
from tests.support.scripting import BOARD
from tests.support.scripting import DEFER
from tests.support.scripting import until

pytestmark = pytest.mark.anyio


# ---------------------------------------------------------------------- 12: status


@pytest.mark.parametrize("config", [AgentConfig(), BOARD], ids=["transcript", "board"])
async def test_a_session_waits_while_calls_it_yielded_on_run(
    clock: ManualClock, config: AgentConfig
) -> None:
    """The user's message cuts the wait: the model answers, and while the call it yielded
    on runs the session reads ``waiting`` (it will speak again by itself), then ``idle``."""
    puppet = Puppet()
    provider = ScriptedProvider(calls_on("start", "puppet"), OTHERWISE)
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
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
    [APPROVE_DEFERRED, AgentConfig(context_view="board", policy=DEFER)],
    ids=["transcript", "board"],
)
async def test_a_session_with_only_deferred_calls_left_waits_for_the_outside(
    clock: ManualClock, config: AgentConfig
) -> None:
    async with waiting_for_approval(clock, config) as (_, runtime, host, session):
        assert session.status is SessionStatus.WAITING_EXTERNAL
        (record,) = host.tokens.pending("s")
        assert await host.complete(record.token, {"approved": True}) is Completion.APPLIED
        await until(lambda: session.status is SessionStatus.IDLE and session.idle, runtime)


@pytest.mark.parametrize("config", [AgentConfig(), BOARD], ids=["transcript", "board"])
async def test_a_failed_model_request_reads_failed_until_the_next_post_tries_again(
    clock: ManualClock, config: AgentConfig
) -> None:
    model = FailsOnce("hello")
    async with running(model, clock=clock) as (_, host):
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


# ---------------------------------------------------------------------- 15: waiting helpers


async def test_waiting_helpers_return_when_only_the_outside_can_move_the_session(
    clock: ManualClock,
) -> None:
    """A turn that waits for a deferred call alone (every call final, as the default yield
    strategy asks) cannot move until someone completes it: ``wait_idle`` and ``wait_settled``
    return; ``wait_settled(include_deferred=True)`` waits for the completion."""
    async with waiting_for_approval(clock) as (provider, runtime, host, session):
        with anyio.fail_after(5):
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
    store = await SqliteStore.open(tmp_path / "agentos.db") if durable else None
    async with waiting_for_approval(clock, store=store, token_ttl=60) as (
        provider,
        runtime,
        host,
        session,
    ):
        (record,) = host.tokens.pending("s")
        clock.advance(60)
        assert host.tokens.pending("s") == []
        assert await host.complete(record.token, {"approved": True}) is Completion.EXPIRED
        await until(lambda: session.status is SessionStatus.IDLE and session.idle, runtime)
        assert "expired" in str(last_tool_results(provider.requests[-1]))
        assert await host.complete(record.token, {"approved": True}) is Completion.EXPIRED
    if store is not None:
        await store.close()
