"""Issue 11: 'agentos status', 'cancel', 'calls' and 'sessions' on calls a live process runs.

A 'run --wait-for-async' in the background holds its session; the test waits
for what it needs by reading the JSON call events on that process's stderr,
or by asking again until the holder has mirrored it, never by sleeping. The
calls it looks at are held on a gate the test opens (tests/support/gate_tools.py), never
on a duration a loaded machine could outrun.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agentos import SqliteStore
from agentos.stores import MirroredCall
from agentos.stores import StoredSession
from tests.support.cli import PATIENT
from tests.support.cli import agentos
from tests.support.gate_tools import PORT
from tests.ui.cli.conftest import running
from tests.ui.cli.conftest import until
from tests.ui.cli.conftest import until_event

GATED_AGENT = """
name = "gated"
model = "test"
tools = ["tests.support.gate_tools"]
async_yield_strategy = { kind = "yield_on_timeout", milliseconds = 50 }
"""
"""The offline model calls each tool once: 'held' waits on the test's gate."""
DEFERRED_APPROVAL = """
[policy.rules]
approve = "defer"
"""


@pytest.fixture
def gate() -> Iterator[socket.socket]:
    """The socket 'held' waits on: it ends when the test sends a byte (or it is cancelled)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(30)
        yield server


def gated_agent(env: dict[str, str], gate: socket.socket, tmp_path: Path, *, approve: bool) -> str:
    """An agent file with 'held' (and 'approve', deferred, if ``approve``); ``env`` is given
    the gate's port."""
    agent = tmp_path / "gated.toml"
    if approve:
        written = GATED_AGENT.replace(
            '"tests.support.gate_tools"', '"tests.support.gate_tools", "approve"'
        )
        agent.write_text(written + DEFERRED_APPROVAL)
    else:
        agent.write_text(GATED_AGENT)
    env[PORT] = str(gate.getsockname()[1])
    return str(agent)


def held(gate: socket.socket, holder: subprocess.Popen[str]) -> socket.socket:
    """The gate's end of the connection 'held' makes once it runs."""
    try:
        return gate.accept()[0]
    except TimeoutError:
        holder.kill()
        raise AssertionError(f"the call never reached the gate: {holder.communicate()}") from None


def test_a_live_call_is_seen_and_cancelled_from_another_process(
    any_env: dict[str, str],
    gate: socket.socket,
    tmp_path: Path,
) -> None:
    """The call waits on a gate the test never opens: only the cancel ends it."""
    env = any_env
    agent = gated_agent(env, gate, tmp_path, approve=False)
    args = ("run", "--agent", agent, "--session-id", "S", "--wait-for-async", "go")
    with running(env, *args) as holder, held(gate, holder):  # only a cancel will end it
        call_id = until_event(holder, "progressed")["call_id"]
        status = until(
            lambda: agentos(env, "status", call_id),
            lambda result: result.code == 0 and result.json["progress"] is not None,
        )
        seen = status.json
        assert (seen["status"], seen["tool_name"], seen["live"]) == ("running", "held", True)
        assert seen["progress"] == {"person": "Jane", "percent": 50}
        assert seen["holder"] == f"pid {holder.pid} on {seen['holder'].split(' on ')[1]}"
        by_provider = agentos(env, "status", seen["provider_call_id"], "--session", "S")
        assert by_provider.json["call_id"] == call_id
        listed, sessions = agentos(env, "calls", "S"), agentos(env, "sessions")
        (row,) = listed.lines
        assert (row["status"], row["progress"], row["live"]) == ("running", seen["progress"], True)
        assert row["tool_input"] == seen["tool_input"]
        (session,) = sessions.lines
        assert (session["holder"], session["calls_running"]) == (seen["holder"], 1)

        cancelled = agentos(env, "cancel", call_id, "--reason", "stalled", *PATIENT)
        assert (cancelled.code, cancelled.out) == (0, "cancelled (was running)\n"), cancelled
        out, err = holder.communicate(timeout=30)  # the gate is still shut: the cancel ended it
    assert holder.returncode == 0, (out, err)
    answer = json.loads(out)
    assert answer["status"] == "done", answer
    assert answer["answer"] == "held: error: cancelled: stalled", "the model was told"

    again, shown, listed, sessions = (
        agentos(env, "cancel", call_id, "--json"),
        agentos(env, "show", "S"),
        agentos(env, "calls", "S"),
        agentos(env, "sessions"),
    )
    assert again.code == 1 and again.json["outcome"] == "already_final", again
    assert "-> cancelled: stalled" in shown.out, shown.out
    (row,) = listed.lines
    assert (row["status"], row["cancel_reason"], row["live"]) == ("cancelled", "stalled", False)
    (session,) = sessions.lines
    assert (session["holder"], session["calls_running"]) == (None, 0)


def test_a_call_no_process_runs_and_a_deferred_call_are_not_cancelled(
    env: dict[str, str],
    gate: socket.socket,
    tmp_path: Path,
) -> None:
    """'held' is left running when its process exits (its gate never opens)."""
    agent = gated_agent(env, gate, tmp_path, approve=True)
    left = agentos(env, "run", "--agent", agent, "--session-id", "L", "go")
    assert left.code == 3, left
    calls = {call["tool_name"]: call for call in left.json["pending_calls"]}
    lookup, approval = calls["held"], calls["approve"]
    token = approval["continuation_token"]

    nowhere, deferred, unknown, status = (
        agentos(env, "cancel", lookup["call_id"]),
        agentos(env, "cancel", approval["provider_call_id"]),
        agentos(env, "cancel", "toolu_nobody"),
        agentos(env, "status", lookup["provider_call_id"]),
    )
    nowhere.one_line_error(1, "not running anywhere", "no process is running it", "resume L")
    deferred.one_line_error(1, "deferred", f"'agentos complete {token} --error TEXT'")
    unknown.one_line_error(1, "no tool call with id 'toolu_nobody'")
    assert status.code == 0 and status.json["status"] == "orphaned", status
    assert (status.json["note"], status.json["holder"]) == ("no process is running it", None)

    applied = agentos(env, "complete", token, "--result", '{"approved": true}')
    assert applied.code == 0, applied
    listed = {row["tool_name"]: row for row in agentos(env, "calls", "L").lines}
    assert listed["held"]["status"] == "orphaned"
    waiting = listed["approve"]
    assert (waiting["status"], waiting["note"]) == (
        "completed",
        "token completed, waiting for delivery",
    )
    assert waiting["result"] == {"approved": True}
    done = agentos(env, "cancel", approval["call_id"])
    assert done.code == 1, done
    said = f"not cancelled: call {approval['call_id'][:8]} had already ended, completed"
    assert done.out.startswith(said), done


def test_ambiguous_ids_and_an_unanswered_request(env: dict[str, str]) -> None:
    """A provider id in two sessions needs --session; a holder that does not answer in time
    leaves the request queued (exit 3)."""
    holder = f"the test, pid {os.getpid()}"

    async def fill() -> None:
        async with await SqliteStore.open(env["AGENTOS_DB"]) as store:
            for name in ("a", "b"):
                await store.create_session(StoredSession(name, {"name": "x"}, "idle", 1.0, 1.0))
                await store.acquire_lease(name, holder, ttl=600)  # this live process holds it
            await store.mirror_calls(
                [
                    MirroredCall(
                        f"call-{name}", name, "toolu_same", "slow", {}, "running", 1.0, 1.0, holder
                    )
                    for name in ("a", "b")
                ]
            )

    anyio.run(fill)
    ambiguous, chosen, queued = (
        agentos(env, "status", "toolu_same"),
        agentos(env, "status", "toolu_same", "--session", "b"),
        agentos(env, "cancel", "call-a", "--wait", "0.2"),
    )
    ambiguous.one_line_error(1, "'toolu_same' names calls in several sessions (a, b)", "--session")
    assert chosen.code == 0 and chosen.json["call_id"] == "call-b", chosen
    assert (chosen.json["status"], chosen.json["live"]) == ("running", True)
    assert queued.code == 3, queued
    assert queued.out.startswith(f"queued: {holder} holds session a but did not answer in time")


def test_a_token_completed_from_another_process_reaches_the_live_holder(
    any_env: dict[str, str],
    gate: socket.socket,
    tmp_path: Path,
) -> None:
    """Issue 27: 'agentos complete' while the session's process runs: that process completes
    the call at once (PostgreSQL's NOTIFY) or within its mirror period (SQLite's poll), and
    its model hears the answer in this very run, not only after a resume. The run cannot
    end first: its other call waits on the gate, opened once the holder has the answer."""
    agent = gated_agent(any_env, gate, tmp_path, approve=True)
    args = ("run", "--agent", agent, "--session-id", "S", "--wait-for-async", "go")
    with running(any_env, *args) as holder, held(gate, holder) as opened:
        until_event(holder, "progressed")
        listed = until(
            lambda: agentos(any_env, "calls", "S"),
            lambda result: any(row.get("continuation_token") for row in result.lines),
        )
        (token,) = [row["continuation_token"] for row in listed.lines if row["continuation_token"]]
        applied = agentos(any_env, "complete", token, "--result", '{"approved": true}')
        assert (applied.code, applied.out) == (0, "applied\n"), applied
        assert until_event(holder, "completed")["tool_name"] == "approve", "the holder has it"
        opened.sendall(b"open")
        out, err = holder.communicate(timeout=30)
    assert holder.returncode == 0, (out, err)
    answer = json.loads(out)
    assert answer["status"] == "done" and "pending_calls" not in answer, answer
    told = answer["messages"][-1]
    assert told == 'approve: {"approved": true}\nheld: Jane is free', "this process heard it"
