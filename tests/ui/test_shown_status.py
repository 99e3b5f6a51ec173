"""Issue 45: statuses agree and tell the truth. A session whose process is gone reads the
same in ``agentos sessions``, ``agentos show``, ``agentos calls`` and on the page: stopped,
saying what was under way, its call ``orphaned``; never ``waiting``, never a status outside
the vocabulary. Every session is titled by the first thing the person said."""

from __future__ import annotations

import json
import os
import signal
from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from agentos import AgentConfig
from agentos import ManualClock
from agentos import ScriptedProvider
from agentos import SessionStatus
from agentos.stores import ShownStatus
from agentos.stores import StoredToken
from agentos.stores import shown_call_status
from agentos.stores import shown_session_status
from agentos.testing import text
from tests.support.backends import hosted
from tests.support.cli import agentos
from tests.support.cli import side_by_side
from tests.support.cli import start
from tests.support.web import web

ASKED = "Check Jane's calendar (60s)"
"""The demo model calls fetch_calendar, which runs 60 s: longer than any test."""
VOCABULARY = {"pending", "running", "completed", "failed", "cancelled", "orphaned"}


def test_the_one_function_decides_from_the_vocabulary() -> None:
    assert shown_session_status("waiting", live=True) == ShownStatus("waiting")
    gone = shown_session_status("waiting", live=False, were_running=1)
    assert str(gone) == "stopped · 1 call was running"
    assert str(shown_session_status("waiting", live=False, were_running=2)).endswith("were running")
    assert shown_session_status("requesting", live=False).status == "stopped"
    assert shown_session_status("idle", live=False) == ShownStatus("idle")
    assert shown_session_status("weird", live=False).status == "stopped"
    assert shown_call_status(None, live=False).status == "orphaned"
    assert shown_call_status(None, live=True).status == "running"
    assert shown_call_status("completed", live=False) == ShownStatus("completed")


def test_a_session_whose_run_exited_mid_call_reads_stopped_everywhere(
    env: dict[str, str],
) -> None:
    ran = agentos(env, "run", "--session-id", "trip", ASKED)
    assert ran.code == 3, ran  # the call still ran when the process left
    listed, shown, body, calls = side_by_side(
        env,
        ("sessions", "--json"),
        ("show", "trip"),
        ("show", "trip", "--json"),
        ("calls", "trip", "--json"),
    )
    (row,) = listed.lines
    assert (row["status"], row["status_note"], row["holder"]) == (
        "stopped",
        "1 call was running",
        None,
    )
    assert row["title"] == ASKED, "a session 'agentos run' started is titled too"
    assert shown.out.splitlines()[0].count("status stopped · 1 call was running") == 1
    assert "-> orphaned (no process is running it)" in shown.out
    whole = body.json
    assert (whole["status"], whole["status_note"], whole["title"]) == (
        "stopped",
        "1 call was running",
        ASKED,
    )
    chat_calls = [call["status"] for entry in whole["chat"] for call in entry["calls"]]
    assert chat_calls == ["orphaned"]
    assert [call["status"] for call in whole["calls"]] == ["orphaned"]
    (call,) = calls.lines
    assert (call["tool_name"], call["status"]) == ("fetch_calendar", "orphaned")
    for result in (listed, shown, body, calls):
        assert "running_when_stored" not in result.out and "running when stored" not in result.out
        assert "waiting" not in result.out, result.args
    statuses = {call["status"] for call in [*whole["calls"], *calls.lines]}
    assert statuses <= VOCABULARY


def test_a_session_whose_process_was_killed_reads_stopped(env: dict[str, str]) -> None:
    """Killed as its call starts (its lease names a dead process): stopped, not the
    ``requesting`` it was stored as."""
    running = start(env, "run", "--wait-for-async", "--session-id", "killed", ASKED)
    assert running.stderr is not None
    for line in running.stderr:
        if line.startswith("{") and json.loads(line)["event"] == "started":
            break
    os.kill(running.pid, signal.SIGKILL)
    running.communicate(timeout=30)
    listed, shown = side_by_side(env, ("sessions", "--json"), ("show", "killed", "--json"))
    (row,) = listed.lines
    assert (row["status"], row["holder"], row["title"]) == ("stopped", None, ASKED)
    assert row["status_note"] and shown.json["status_note"] == row["status_note"]
    assert shown.json["status"] == "stopped"


@pytest.mark.anyio
async def test_the_page_lists_and_shows_it_as_the_command_line_does(
    tmp_path: Path, env: dict[str, str]
) -> None:
    assert env["AGENTOS_DB"] == str(tmp_path / "agentos.db"), "the page's database"
    ran = agentos(env, "run", "--session-id", "trip", ASKED)
    assert ran.code == 3, ran
    async with web(tmp_path) as w:
        (row,) = (await w.client.get("/api/sessions")).json()["sessions"]
        assert (row["status"], row["status_note"], row["live"]) == (
            "stopped",
            "1 call was running",
            False,
        )
        assert row["doing"] == "stopped · 1 call was running"
        assert row["title"] == ASKED
        state = (await w.client.get("/api/sessions/trip")).json()["state"]
        assert (state["status"], state["status_note"]) == ("stopped", "1 call was running")
        (widget,) = state["calls"].values()
        assert (widget["tool_name"], widget["status"]) == ("fetch_calendar", "orphaned")
        assert widget["final"] is True


@pytest.mark.anyio
@pytest.mark.parametrize("view", ["transcript", "board"])
async def test_a_session_the_host_started_is_listed_by_its_first_words(
    tmp_path: Path, clock: ManualClock, view: str
) -> None:
    """Whoever starts it (here the Host API), a session only the store holds is listed by the
    first thing the person said, a board session's too."""
    provider = ScriptedProvider((lambda r: True, lambda r: text("ok")))
    async with hosted(tmp_path / "agentos.db", provider, clock=clock) as (_, _, host):
        session = await host.create_session(AgentConfig(context_view=view), session_id="s")
        session.post("Plan a trip\nto Oslo")
        with anyio.fail_after(10):
            await session.wait_idle()
        await host.unload("s")
        (listed,) = await host.sessions()
        assert (listed.live, listed.title) == (False, "Plan a trip to Oslo")


def test_deferred_and_expired_calls_read_in_the_vocabulary(
    env: dict[str, str], quick_agent: str
) -> None:
    """A deferred call waiting for its token reads ``pending`` with the token, and one whose
    token nobody completed in time ``failed``, the expiry explained: in ``calls``, ``status``
    and ``show`` alike, never ``deferred`` or ``expired`` as a status."""
    asked = "Check Jane's calendar (30s) and approve the trip"
    waits = agentos(env, "run", "--agent", quick_agent, "--session-id", "waits", asked)
    assert waits.code == 3, waits
    (token,) = [
        c["continuation_token"] for c in waits.json["pending_calls"] if c["tool_name"] == "approve"
    ]
    ran_out = agentos(env, "run", "--agent", quick_agent, "--session-id", "ran-out",
                      "--token-ttl", "0.05", "--wait-for-async", "approve it")  # fmt: skip
    assert ran_out.code == 0, ran_out
    for session, status, note in (
        ("waits", "pending", "deferred"),
        ("ran-out", "failed", "expired"),
    ):
        listed = {row["tool_name"]: row for row in agentos(env, "calls", session, "--json").lines}
        approve = listed["approve"]
        one = agentos(env, "status", approve["call_id"], "--json").json
        shown = agentos(env, "show", session, "--json").json
        (in_show,) = [call for call in shown["calls"] if call["tool_name"] == "approve"]
        (in_chat,) = [c for e in shown["chat"] for c in e["calls"] if c["tool_name"] == "approve"]
        for call in (approve, one, in_show):
            assert call["status"] == status, call
            assert call["note"].startswith(f"{note}:"), call
            assert call["continuation_token"] and call["token_completed"] is False, call
        assert in_chat["status"] == status
        if session == "waits":
            assert approve["continuation_token"] == token and approve["deferred"] is True
            assert "continuation token" in approve["note"]
        else:
            assert "nobody completed it within 0.05 s" in one["note"]
        every = [*listed.values(), one, *shown["calls"]]
        every += [c for e in shown["chat"] for c in e["calls"]]
        assert {call["status"] for call in every} <= VOCABULARY, every
    text = agentos(env, "show", "waits").out
    assert f"-> pending (deferred: token {token}, not completed)" in text, text
    text = agentos(env, "show", "ran-out").out
    assert "-> failed: expired, token " in text and "was not completed in time" in text, text
    assert "-> deferred" not in text and "-> expired" not in text


@pytest.mark.anyio
async def test_the_page_and_the_listings_show_them_in_the_vocabulary(
    tmp_path: Path, env: dict[str, str], quick_agent: str
) -> None:
    """The page draws a deferred call ``pending`` and an expired one ``failed``, each noting
    why; ``agentos sessions`` and the page's list say only session statuses."""
    asked = "Check Jane's calendar (30s) and approve the trip"
    waits = agentos(env, "run", "--agent", quick_agent, "--session-id", "waits", asked)
    assert waits.code == 3, waits
    ran_out = agentos(env, "run", "--agent", quick_agent, "--session-id", "ran-out",
                      "--token-ttl", "0.05", "--wait-for-async", "approve it")  # fmt: skip
    assert ran_out.code == 0, ran_out
    sessions = {s.value for s in SessionStatus}
    listed = agentos(env, "sessions", "--json").lines
    assert {row["status"] for row in listed} <= sessions and len(listed) == 2, listed
    async with web(tmp_path) as w:
        rows = (await w.client.get("/api/sessions")).json()["sessions"]
        assert {row["status"] for row in rows} <= sessions and len(rows) == 2, rows
        for session, status, note in (
            ("waits", "pending", "deferred: "),
            ("ran-out", "failed", "expired: nobody completed it within 0.05 s"),
        ):
            state = (await w.client.get(f"/api/sessions/{session}")).json()["state"]
            assert state["status"] in sessions
            (approve,) = [c for c in state["calls"].values() if c["tool_name"] == "approve"]
            assert approve["status"] == status and note in approve["note"], approve
            assert approve["final"] is (status == "failed")
            assert {c["status"] for c in state["calls"].values()} <= VOCABULARY


def test_a_stored_calls_status_by_its_token() -> None:
    """``shown_call_status`` of a call only its continuation token tells of: pending while it
    waits, completed or failed once completed, failed once it expired (even undelivered)."""
    token = StoredToken("tok", "s", "c", "toolu_1", "approve", {}, created_at=0.0, expires_at=60.0)
    waits = shown_call_status(None, live=False, token=token)
    assert (
        waits.status == "pending" and waits.note is not None and waits.note.startswith("deferred:")
    )
    expired = shown_call_status(None, live=True, token=replace(token, expired=True))
    assert expired == ShownStatus("failed", "expired: nobody completed it within 60 s")
    done = shown_call_status(None, live=False, token=replace(token, completed_at=5.0, result=1))
    assert done.status == "completed"
    failed = replace(token, completed_at=5.0, error="no")
    assert shown_call_status(None, live=False, token=failed).status == "failed"
    recorded = shown_call_status(
        "failed", live=False, result="expired: nobody completed it within 9 s"
    )
    assert recorded == ShownStatus("failed", "expired: nobody completed it within 9 s")
    assert shown_call_status("failed", live=False, result="boom") == ShownStatus("failed")
