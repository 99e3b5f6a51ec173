"""A restart tells the model what the store knows (issue 45, "the seeds' last four"): a call
that ended before the process did, its end mirrored to the store, is told with its outcome,
not as lost; a deferred call keeps its placeholder until its token completes it; only a call
that has no stored end (it ran in the process that died) is lost."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from agentos import AgentConfig
from agentos import CallStatus
from agentos import Completion
from agentos import Host
from agentos import ManualClock
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import Session
from agentos import SqliteStore
from agentos import StoreError
from agentos.stores import TurnCommit
from agentos.testing import Puppet
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.turns import Caller
from tests.support.backends import running
from tests.support.scripting import BOARD
from tests.support.scripting import DEFER

pytestmark = pytest.mark.anyio

TRANSCRIPT = AgentConfig(policy=DEFER)
"""Waits for all of a turn's calls: an ended call's news waits for the others' too."""


class Unwritable(SqliteStore):
    """A store whose turn commits fail once ``frozen``: a process that dies before the
    session's write lands (the call mirror's writes go on)."""

    frozen = False

    async def commit_turn(self, turn: TurnCommit) -> None:
        if self.frozen:
            raise StoreError("the process died before this write")
        await super().commit_turn(turn)


@asynccontextmanager
async def process(
    path: Path,
    clock: ManualClock,
    provider: ScriptedProvider,
    *puppets: Puppet,
    store: type[SqliteStore] = SqliteStore,
) -> AsyncIterator[tuple[Runtime, Host, SqliteStore]]:
    """One process: a runtime and a host on the store at ``path``, mirroring calls."""
    async with (
        await store.open(path, clock=clock.wall) as opened,
        running(
            provider, *(p.tool for p in puppets), clock=clock, store=opened, call_mirror_period=0.5
        ) as (runtime, host),
    ):
        yield runtime, host, opened


def labelled(runtime: Runtime, puppet: Puppet, label: str) -> str:
    """The runtime id of the puppet's call made with ``label``."""
    (call_id,) = [c for c in puppet.calls if runtime.status(c).tool_input.get("label") == label]
    return call_id


async def mirrored(
    runtime: Runtime, store: SqliteStore, clock: ManualClock, call_id: str, status: str
) -> None:
    """Let the mirror's periods pass until the store has ``call_id`` at ``status``."""
    with anyio.fail_after(10):
        while True:
            rows = await store.mirrored_calls(call_id=call_id)
            if any(row.status == status for row in rows):
                return
            clock.advance(0.5)
            await settle(runtime)


async def until(session: Session, runtime: Runtime, provider: ScriptedProvider, n: int) -> None:
    with anyio.fail_after(10):
        while not (session.idle and len(provider.requests) >= n):
            await settle(runtime)


async def test_a_call_that_ended_before_the_crash_is_told_with_its_result(
    path: Path, clock: ManualClock
) -> None:
    puppet, approve = Puppet(), Puppet(name="approve")
    provider = ScriptedProvider(
        (
            lambda r: "kickoff" in last_user_text(r) and not last_tool_results(r),
            lambda r: tool_calls(
                ("puppet", {"label": "a"}), ("puppet", {"label": "b"}), ("approve", {})
            ),
        ),
        (lambda r: True, lambda r: text("noted")),
    )
    async with process(path, clock, provider, puppet, approve) as (runtime, host, store):
        session = await host.create_session(TRANSCRIPT, session_id="s")
        session.post("kickoff")
        with anyio.fail_after(10):
            while len(puppet.calls) < 2:
                await settle(runtime)
        session.post("meanwhile, hello")  # the turn stops waiting: placeholders for all three
        await until(session, runtime, provider, 2)
        uses = {
            str(b["input"].get("label", b["name"])): str(b["id"])
            for b in session.history[1]["content"]
            if b["type"] == "tool_use"
        }
        a = labelled(runtime, puppet, "a")
        puppet.complete(a, "sunny in Austin")
        await mirrored(runtime, store, clock, a, "completed")
        await settle(runtime)
        assert len(provider.requests) == 2, "a's news waits for b: the model was not told"
        assert "sunny" not in str(session.history)
        (token,) = await store.tokens_of("s")
        # The process dies here, b still running, a's end in the store only.
    provider = ScriptedProvider((lambda r: True, lambda r: text("thanks")))
    puppet, approve = Puppet(), Puppet(name="approve")
    async with process(path, clock, provider, puppet, approve) as (runtime, host, store):
        session = await host.resume("s")
        await host.catch_up("s", "(resumed)")
        await until(session, runtime, provider, 1)
        told = last_user_text(provider.requests[0])
        assert f"[tool call {uses['a']} (puppet) finished: completed] result: sunny" in told
        assert f"{uses['a']} (puppet) finished: orphaned" not in told
        assert f"[tool call {uses['b']} (puppet) finished: orphaned] error: lost" in told
        assert uses["approve"] not in told, "the deferred call still waits for its token"
        caller = Caller("s", conversation_id="s")
        seen = await host.toolbox.get_tool_call_status(caller, uses["a"])
        assert (seen["status"], seen["result"]) == ("completed", "sunny in Austin")
        deferred = await host.toolbox.get_tool_call_status(caller, uses["approve"])
        assert deferred["status"] == "pending"
        assert await host.complete(token.token, "approved") is Completion.APPLIED
        await until(session, runtime, provider, 2)
        told = last_user_text(provider.requests[1])
        assert f"[tool call {uses['approve']} (approve) finished: completed]" in told
        assert "approved" in told


async def test_a_failed_call_is_told_failed_with_its_error(path: Path, clock: ManualClock) -> None:
    puppet = Puppet()
    provider = ScriptedProvider(
        (
            lambda r: "kickoff" in last_user_text(r) and not last_tool_results(r),
            lambda r: tool_calls(("puppet", {"label": "a"}), ("puppet", {"label": "b"})),
        ),
        (lambda r: True, lambda r: text("noted")),
    )
    async with process(path, clock, provider, puppet) as (runtime, host, store):
        session = await host.create_session(AgentConfig(), session_id="s")
        session.post("kickoff")
        with anyio.fail_after(10):
            while len(puppet.calls) < 2:
                await settle(runtime)
        session.post("meanwhile")
        await until(session, runtime, provider, 2)
        a = labelled(runtime, puppet, "a")
        puppet.fail(a, "the service said no")
        await mirrored(runtime, store, clock, a, "failed")
        use = str(runtime.status(a).provider_call_id)
    provider = ScriptedProvider((lambda r: True, lambda r: text("thanks")))
    async with process(path, clock, provider, Puppet()) as (runtime, host, store):
        session = await host.resume("s")
        await host.catch_up("s", "(resumed)")
        await until(session, runtime, provider, 1)
        told = last_user_text(provider.requests[0])
        assert f"[tool call {use} (puppet) finished: failed] error:" in told
        assert "the service said no" in told


async def test_a_board_call_that_ended_before_the_crash_settles_with_its_outcome(
    path: Path, clock: ManualClock
) -> None:
    """The board is stored whole at each change, so a call's end is usually on it; here the
    process dies before the board with the call's end was written, after the mirror wrote it."""
    puppet = Puppet()
    provider = ScriptedProvider(
        (
            lambda r: "kickoff" in last_user_text(r),
            lambda r: tool_calls(
                ("puppet", {"label": "a", "expected_seconds": 60}),
                ("puppet", {"label": "b", "expected_seconds": 60}),
                say="Started.",
            ),
        ),
        (lambda r: True, lambda r: text("Noted.")),
    )
    async with process(path, clock, provider, puppet, store=Unwritable) as (runtime, host, store):
        session = await host.create_session(BOARD, session_id="b")
        session.post("kickoff")
        await until(session, runtime, provider, 1)
        a = labelled(runtime, puppet, "a")
        assert isinstance(store, Unwritable)
        store.frozen = True  # from now on the board's writes fail, the mirror's do not
        puppet.complete(a, "sunny in Austin")
        await mirrored(runtime, store, clock, a, "completed")
        assert len(provider.requests) == 1, "the node waits for b: no turn yet"
    provider = ScriptedProvider((lambda r: True, lambda r: text("Thanks.")))
    async with process(path, clock, provider, Puppet()) as (runtime, host, store):
        stored = await store.load_session("b")
        assert stored is not None and "sunny" not in str(stored.board), "the store lost it"
        session = await host.resume("b")
        board = session.board
        assert board is not None
        calls = {str(c.tool_input["label"]): c for n in board.nodes.values() for c in n.calls}
        assert calls["a"].status is CallStatus.COMPLETED
        assert calls["a"].outcome is not None and "sunny in Austin" in calls["a"].outcome
        assert calls["b"].status is CallStatus.ORPHANED
        await host.catch_up("b", "(resumed)")
        await until(session, runtime, provider, 1)
        drawn = last_user_text(provider.requests[0])
        assert "completed: 'sunny in Austin'" in drawn, "the result turn reads a's outcome"
