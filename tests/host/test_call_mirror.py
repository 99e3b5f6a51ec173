"""Issue 11: a host mirrors its sessions' calls into the store and applies cancel requests.

Everything runs on a ``ManualClock``: the mirror writes when the clock passes
its period, and the test waits for that write (the store tells it), not for time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from agentos import AgentConfig
from agentos import Answer
from agentos import AnswerAction
from agentos import Asked
from agentos import Host
from agentos import ManualClock
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import Session
from agentos import SqliteStore
from agentos import StoreError
from agentos import ToolContext
from agentos import YieldOnTimeout
from agentos import tool
from agentos.stores import ASKING
from agentos.stores import CancelRequest
from agentos.stores import MirroredCall
from agentos.stores import find_call
from agentos.stores import session_calls
from agentos.testing import Puppet
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from tests.support.backends import running

pytestmark = pytest.mark.anyio

PERIOD = 0.5


class Told(SqliteStore):
    """A store that tells the test when the host wrote its mirror, and can fail to."""

    failing = 0
    """How many writes to refuse with a ``StoreError``."""
    _written: anyio.Event | None = None

    async def mirror_calls(
        self, calls: Sequence[MirroredCall], answers: Sequence[CancelRequest] = ()
    ) -> None:
        try:
            if self.failing:
                self.failing -= 1
                raise StoreError("the disk is full")
            await super().mirror_calls(calls, answers)
        finally:
            if self._written is not None:
                self._written.set()

    async def period(self, clock: ManualClock, runtime: Runtime) -> None:
        """Let the mirror's period pass; return once it has written (or failed to)."""
        await settle(runtime)
        self._written = anyio.Event()
        clock.advance(PERIOD)
        with anyio.fail_after(10):
            await self._written.wait()
        await settle(runtime)


@asynccontextmanager
async def hosted(path: Path, puppet: Puppet) -> AsyncIterator[tuple[Host, Told, ManualClock]]:
    clock = ManualClock()
    provider = ScriptedProvider(
        (lambda r: "work" in last_user_text(r), lambda r: tool_calls(("puppet", {}))),
        (lambda r: True, lambda r: text("noted")),
    )
    async with (
        await Told.open(path, clock=clock.wall) as store,
        running(provider, puppet.tool, clock=clock, store=store, call_mirror_period=PERIOD) as (
            _,
            host,
        ),
    ):
        yield host, store, clock


async def working(host: Host, clock: ManualClock) -> tuple[Session, str]:
    """A session whose one puppet call has started; the call's id."""
    config = AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=1))
    session = await host.create_session(config, session_id="s")
    session.post("work")
    with anyio.fail_after(10):
        while not (session.outstanding() and session.idle):
            clock.advance(0.001)  # the 1 ms yield deadline, on the runtime's clock
            await settle(host.runtime)
    (call,) = session.outstanding()
    return session, call.call_id


async def test_the_mirror_shows_live_calls_and_applies_a_cancel(tmp_path: Path) -> None:
    puppet = Puppet()
    async with hosted(tmp_path / "a.db", puppet) as (host, store, clock):
        session, call_id = await working(host, clock)
        puppet.progress(call_id, {"percent": 40})
        await store.period(clock, host.runtime)
        (row,) = await store.mirrored_calls(session_id="s")
        assert (row.call_id, row.status, row.tool_name) == (call_id, "running", "puppet")
        assert (row.progress, row.holder, row.ended_at) == ({"percent": 40}, host.holder, None)
        assert row.provider_call_id is not None and row.provider_call_id.startswith("toolu_")

        asked = await store.request_cancel(row.provider_call_id, "s", "stalled")
        await store.period(clock, host.runtime)
        answered = await store.cancel_request(row.provider_call_id)
        assert answered is not None and answered.requested_at == asked.requested_at
        assert answered.answer == {
            "cancelled": True,
            "found": True,
            "previous_status": "running",
            "status": "cancelled",
        }
        assert puppet.calls[call_id].cancelled, "the cancel reached the work"
        (row,) = await store.mirrored_calls(call_id=call_id)
        assert (row.status, row.cancel_reason, row.error_kind) == (
            "cancelled",
            "stalled",
            "cancelled",
        )
        with anyio.fail_after(10):
            await session.wait_settled()
        told = session.history[-2]["content"]
        assert any("finished: cancelled" in b.get("text", "") for b in told), told
        assert any("stalled" in b.get("text", "") for b in told), "the model hears the reason"

        again = await store.request_cancel(call_id, "s", "twice")
        other = await store.request_cancel("no-such-call", "s", "who?")
        await store.period(clock, host.runtime)
        assert (await store.cancel_request(call_id) or again).answer == {
            "cancelled": False,
            "found": True,
            "previous_status": "cancelled",
            "status": "cancelled",
        }
        assert (await store.cancel_request("no-such-call") or other).answer == {
            "cancelled": False,
            "found": False,
        }


@tool
async def asker(ctx: ToolContext) -> str:
    """Asks which city; says what it was told."""
    answer = await ctx.ask("Which city?", source="the forecast")
    return answer.action.value


async def held(asked: Asked) -> None:
    """Leaves every question for a person (``Host.answer``)."""


async def test_another_process_sees_the_question_a_mirrored_call_waits_on(tmp_path: Path) -> None:
    """Host A's call asks and waits for a person: the mirror carries its question, so a
    second process on the same file shows it (``find_call``, ``session_calls``, the
    listing's ``asking``); once answered it shows no more."""
    clock = ManualClock()
    provider = ScriptedProvider(
        (lambda r: "ask" in last_user_text(r), lambda r: tool_calls(("asker", {}))),
        (lambda r: True, lambda r: text("noted")),
    )
    path = tmp_path / "a.db"
    async with (
        await Told.open(path, clock=clock.wall) as store,
        running(
            provider, asker, clock=clock, store=store, call_mirror_period=PERIOD, ask_person=held
        ) as (runtime, host),
        await SqliteStore.open(path, clock=clock.wall) as reader,
        Runtime([]) as elsewhere,
        Host(elsewhere, ScriptedProvider(), store=reader, call_mirror_period=None) as other,
    ):
        config = AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=1))
        session = await host.create_session(config, session_id="s")
        session.post("ask")
        with anyio.fail_after(10):
            while not any(c.question for c in runtime.list_calls("s")):
                clock.advance(0.001)
                await settle(runtime)
        (call,) = runtime.list_calls("s")
        await store.period(clock, runtime)

        seen = await find_call(reader, call.call_id)
        assert (seen.status, seen.live) == ("running", True)
        assert seen.question is not None and seen.question.message == "Which city?"
        assert seen.question.source == "the forecast"
        found = await session_calls(reader, "s")
        assert found is not None
        assert [c.question for c in found.calls] == [seen.question]
        assert (await reader.call_counts())["s"] == {"running": 1, ASKING: 1}
        (listed,) = [s for s in await other.sessions() if s.session_id == "s"]
        assert (listed.live, listed.asking) == (False, 1)
        (loaded,) = await host.sessions()
        assert (loaded.live, loaded.asking) == (True, 1)

        assert host.answer("s", call.call_id, Answer(AnswerAction.ACCEPT))
        with anyio.fail_after(10):
            while not runtime.status(call.call_id).is_final:
                await settle(runtime)
        await store.period(clock, runtime)
        after = await find_call(reader, call.call_id)
        assert (after.status, after.question) == ("completed", None)
        assert ASKING not in (await reader.call_counts())["s"]
        (listed,) = [s for s in await other.sessions() if s.session_id == "s"]
        assert listed.asking == 0


async def test_closing_the_host_writes_the_final_states(tmp_path: Path) -> None:
    puppet = Puppet()
    async with hosted(tmp_path / "a.db", puppet) as (host, _, clock):
        session, call_id = await working(host, clock)
        puppet.complete(call_id, {"done": True})
        with anyio.fail_after(10):
            await session.wait_settled()
    async with await SqliteStore.open(tmp_path / "a.db") as reader:
        (row,) = await reader.mirrored_calls(session_id="s")
    assert (row.status, row.result, row.progress) == ("completed", {"done": True}, None)
    assert row.ended_at is not None and row.started_at is not None


async def test_a_store_error_in_the_mirror_does_not_stop_the_host(tmp_path: Path) -> None:
    puppet = Puppet()
    async with hosted(tmp_path / "a.db", puppet) as (host, store, clock):
        session, call_id = await working(host, clock)
        store.failing = 1
        await store.period(clock, host.runtime)
        assert await store.mirrored_calls() == []
        await store.period(clock, host.runtime)  # the next period writes what was missed
        (row,) = await store.mirrored_calls()
        assert (row.call_id, row.status) == (call_id, "running")
        puppet.complete(call_id)
        with anyio.fail_after(10):
            await session.wait_settled()
        assert session.errors == []


async def test_the_period_is_checked(tmp_path: Path) -> None:
    async with await SqliteStore.open(tmp_path / "a.db") as store, Runtime([]) as runtime:
        for bad in (0, -1.0, float("inf"), float("nan"), True, "1"):
            with pytest.raises(ValueError, match="call_mirror_period"):
                Host(runtime, ScriptedProvider(), store=store, call_mirror_period=bad)  # type: ignore[arg-type]
        Host(runtime, ScriptedProvider(), store=store, call_mirror_period=None)
