"""Issue 11: 'agentos status', 'cancel', 'calls' and 'sessions' on calls a live process runs.

A 'run --wait-for-async' in the background holds its session; the test waits
for what it needs by reading the JSON call events on that process's stderr,
or by asking again until the holder has mirrored it, never by sleeping.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio

from agentos import SqliteStore
from agentos.stores import MirroredCall, StoredSession
from tests._cli import (  # noqa: F401  (fixtures)
    Result,
    agentos,
    any_env,
    env,
    quick_agent,
    start,
)


@contextmanager
def running(env: dict[str, str], *args: str) -> Iterator[subprocess.Popen[str]]:  # noqa: F811
    with start(env, *args) as process:  # closes its pipes, whatever the test says
        try:
            yield process
        finally:
            process.kill()
            process.wait()


def until_event(process: subprocess.Popen[str], kind: str) -> dict[str, Any]:
    """Read the process's stderr until a call event of ``kind``; that event."""
    assert process.stderr is not None
    while line := process.stderr.readline():
        if line.startswith("{") and json.loads(line)["event"] == kind:
            return dict(json.loads(line))
    raise AssertionError(f"the process ended before a {kind!r} event")


def until(ask: Callable[[], Result], ready: Callable[[Result], bool]) -> Result:
    """Ask again until the answer is ``ready`` (the holder mirrors twice a second)."""
    for _ in range(100):
        answer = ask()
        if ready(answer):
            return answer
    raise AssertionError(f"never ready: {answer}")


def test_a_live_call_is_seen_and_cancelled_from_another_process(
    any_env: dict[str, str],  # noqa: F811
    quick_agent: str,  # noqa: F811
) -> None:
    env = any_env  # noqa: F811  (this test on each backend)
    prompt = "When can Jane meet? Check her calendar (10s)"
    with running(env, "run", "--agent", quick_agent, "--session-id", "S", "--wait-for-async",
                 prompt) as holder:  # fmt: skip
        call_id = until_event(holder, "progressed")["call_id"]
        status = until(
            lambda: agentos(env, "status", call_id),
            lambda result: result.code == 0 and result.json["progress"] is not None,
        )
        seen = status.json
        assert (seen["status"], seen["tool_name"], seen["live"]) == (
            "running",
            "fetch_calendar",
            True,
        )
        # Progress moves every 2 s while we look (each look is a process): where it is, not when.
        assert seen["progress"]["person"] == "Jane" and seen["progress"]["percent"] in {20, 40, 60}
        assert seen["holder"] == f"pid {holder.pid} on {seen['holder'].split(' on ')[1]}"
        assert seen["tool_input"] == {"person": "Jane", "seconds": 10.0}
        by_provider = agentos(env, "status", seen["provider_call_id"], "--session", "S")
        assert by_provider.json["call_id"] == call_id
        listed, sessions = agentos(env, "calls", "S"), agentos(env, "sessions")
        (row,) = listed.lines
        assert (row["status"], row["progress"]["person"], row["live"]) == ("running", "Jane", True)
        assert row["progress"]["percent"] >= seen["progress"]["percent"]
        (session,) = sessions.lines
        assert (session["holder"], session["calls_running"]) == (seen["holder"], 1)

        cancelled = agentos(env, "cancel", call_id, "--reason", "stalled")
        assert (cancelled.code, cancelled.out) == (0, "cancelled (was running)\n"), cancelled
        out, err = holder.communicate(timeout=30)
    assert holder.returncode == 0, (out, err)
    answer = json.loads(out)
    assert answer["status"] == "done" and "cancelled" in answer["answer"], "the model was told"
    assert "stalled" in answer["answer"]

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
    env: dict[str, str],  # noqa: F811
    quick_agent: str,  # noqa: F811
) -> None:
    left = agentos(env, "run", "--agent", quick_agent, "--session-id", "L",
                   "Check Jane's calendar (30s) and ask for approval of the trip")  # fmt: skip
    assert left.code == 3, left
    calls = {call["tool_name"]: call for call in left.json["pending_calls"]}
    calendar, approval = calls["fetch_calendar"], calls["approve"]
    token = approval["continuation_token"]

    nowhere, deferred, unknown, status = (
        agentos(env, "cancel", calendar["call_id"]),
        agentos(env, "cancel", approval["provider_call_id"]),
        agentos(env, "cancel", "toolu_nobody"),
        agentos(env, "status", calendar["provider_call_id"]),
    )
    nowhere.one_line_error(1, "not running anywhere", "no process is running it", "resume L")
    deferred.one_line_error(1, "deferred", f"'agentos complete {token} --error TEXT'")
    unknown.one_line_error(1, "no tool call with id 'toolu_nobody'")
    assert status.code == 0 and status.json["status"] == "orphaned", status
    assert (status.json["note"], status.json["holder"]) == ("no process is running it", None)

    applied = agentos(env, "complete", token, "--result", '{"approved": true}')
    assert applied.code == 0, applied
    listed = {row["tool_name"]: row for row in agentos(env, "calls", "L").lines}
    assert listed["fetch_calendar"]["status"] == "orphaned"
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


def test_ambiguous_ids_and_an_unanswered_request(env: dict[str, str]) -> None:  # noqa: F811
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
    any_env: dict[str, str],  # noqa: F811
    quick_agent: str,  # noqa: F811
) -> None:
    """Issue 27: 'agentos complete' while the session's process runs: that process completes
    the call at once (PostgreSQL's NOTIFY) or within its mirror period (SQLite's poll), and
    its model hears the answer in this very run, not only after a resume."""
    prompt = "Check Jane's calendar (6s) and ask for approval of the trip"
    with running(any_env, "run", "--agent", quick_agent, "--session-id", "S",
                 "--wait-for-async", prompt) as holder:  # fmt: skip
        until_event(holder, "progressed")
        listed = until(
            lambda: agentos(any_env, "calls", "S"),
            lambda result: any(row.get("continuation_token") for row in result.lines),
        )
        (token,) = [row["continuation_token"] for row in listed.lines if row["continuation_token"]]
        applied = agentos(any_env, "complete", token, "--result", '{"approved": true}')
        assert (applied.code, applied.out) == (0, "applied\n"), applied
        out, err = holder.communicate(timeout=30)
    assert holder.returncode == 0, (out, err)
    answer = json.loads(out)
    assert answer["status"] == "done" and "pending_calls" not in answer, answer
    told = "\n".join(answer["messages"])
    assert 'approve finished (completed): {"approved": true}' in told, "this process heard it"
