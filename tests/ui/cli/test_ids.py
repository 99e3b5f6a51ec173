"""Issue 45: every id a screen shows can be typed back. The commands take the start of a
session's or a call's id (6 characters or more), git-style; a start several ids share is
refused with the candidates listed, and one shorter than that names only an id so short.
'agentos cancel' of a call that already ended says so and exits 1.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

import anyio

from agentos.stores import MirroredCall
from agentos.stores import StoredSession
from tests.support.backends import Backend
from tests.support.cli import PATIENT
from tests.support.cli import agentos
from tests.support.cli import chat_in_a_terminal
from tests.support.cli import on_a_terminal
from tests.support.cli import side_by_side
from tests.support.cli import start

ESCAPES = re.compile(rb"\x1b\[[0-9;?]*[a-zA-Z]")
TRIP = "Check Jane's calendar (30s) and ask for approval of the trip"


def test_the_start_of_a_session_id_names_it_in_every_command(
    any_env: dict[str, str],
    quick_agent: str,
) -> None:
    env = any_env
    ran, other = side_by_side(
        env,
        ("run", "--agent", quick_agent, TRIP),
        ("run", "--session-id", "session-other", "hello"),
    )
    assert ran.code == 3 and other.code == 0, (ran, other)
    session = ran.json["session_id"]
    typed = session[: len("session-") + 6]  # 'session-' and six characters of its UUID
    calls = {call["tool_name"]: call for call in ran.json["pending_calls"]}
    calendar, approval = calls["fetch_calendar"], calls["approve"]

    shown, listed, status, deferred = side_by_side(
        env,
        ("show", typed, "--json"),
        ("calls", typed),
        ("status", calendar["call_id"][:8]),
        ("cancel", approval["provider_call_id"][:12], "--session", typed),
    )
    assert shown.code == 0 and shown.json["session_id"] == session, shown
    assert listed.code == 0 and {row["session_id"] for row in listed.lines} == {session}, listed
    assert status.code == 0, status
    assert (status.json["call_id"], status.json["session_id"]) == (calendar["call_id"], session)
    deferred.one_line_error(1, f"call {approval['call_id']} is deferred")

    renamed = agentos(env, "rename", typed, "Trip", "--json")
    assert renamed.code == 0 and renamed.json["session_id"] == session, renamed
    said = agentos(env, "say", typed, "thanks", "--json")
    assert said.code == 3 and said.json["session_id"] == session, said
    resumed = agentos(env, "resume", typed, "--json")
    assert resumed.code == 3 and resumed.json["session_id"] == session, resumed
    sessions = {row["session_id"]: row["title"] for row in agentos(env, "sessions").lines}
    assert sessions == {session: "Trip", "session-other": "hello"}, "no session was made"


def fill(backend: Backend, sessions: dict[str, list[str]]) -> None:
    """Store these sessions, each with a mirrored call of each id (a finished one)."""

    async def write() -> None:
        store = await backend.open()
        try:
            for session_id, call_ids in sessions.items():
                await store.create_session(
                    StoredSession(session_id, {"name": "x"}, "idle", 1.0, 1.0, title=session_id)
                )
                done = [
                    MirroredCall(c, session_id, None, "crawl", {}, "completed", 1.0, 1.0, "gone")
                    for c in call_ids
                ]
                await store.mirror_calls(done)
        finally:
            await store.close()

    anyio.run(write)


def test_the_start_of_several_ids_is_refused_with_the_candidates(
    any_env: dict[str, str],
    backend: Backend,
) -> None:
    env = any_env
    fill(
        backend,
        {
            "session-abcdef1": ["0123456a-call"],
            "session-abcdef2": ["0123456b-call"],
            "session-whole": ["9876543-x"],
            "session-whole2": ["9876543-x2"],
        },
    )
    results = side_by_side(
        env,
        ("show", "session-abcdef"),
        ("calls", "session-abcde"),
        ("rename", "session-abc", "A name"),
        ("resume", "session-ab"),
        ("say", "session-a", "hello"),
        ("status", "0123456"),
        ("cancel", "012345"),
        ("status", "0123456a-call", "--session", "session-abcdef"),
    )
    for sessions in results[:5]:
        sessions.one_line_error(2, "is the start of several sessions' ids", "type more of the id")
        assert "session-abcdef1 (session-abcdef1)" in sessions.err, sessions
        assert "session-abcdef2 (session-abcdef2)" in sessions.err, sessions
    for calls in results[5:7]:
        calls.one_line_error(2, "is the start of several calls' ids", "type more of the id")
        assert "0123456a (crawl, completed, session session-abcdef1)" in calls.err, calls
        assert "0123456b (crawl, completed, session session-abcdef2)" in calls.err, calls
    results[7].one_line_error(2, "'session-abcdef' is the start of several sessions' ids")

    whole_session, whole_call, shown_call = side_by_side(
        env,
        ("show", "session-whole", "--json"),
        ("status", "9876543-x"),
        ("status", "9876543-x2"),
    )
    assert whole_session.json["session_id"] == "session-whole", "a whole id means itself"
    assert whole_call.json["call_id"] == "9876543-x", whole_call
    assert shown_call.json["call_id"] == "9876543-x2", shown_call


def test_a_start_shorter_than_six_characters_names_nothing(env: dict[str, str]) -> None:
    fill(Backend("sqlite", env["AGENTOS_DB"]), {"session-abcdef": ["0123456a-call"]})
    short_session, short_call, six, whole_short = side_by_side(
        env,
        ("show", "sessi"),
        ("status", "01234"),
        ("status", "012345"),
        ("status", "0123456a-call", "--session", "sessi"),
    )
    short_session.one_line_error(1, "no session with id 'sessi'")
    short_call.one_line_error(1, "no tool call with id '01234'")
    assert six.code == 0 and six.json["call_id"] == "0123456a-call", six
    whole_short.one_line_error(1, "no tool call with id '0123456a-call' in session 'sessi'")


@contextmanager
def running(env: dict[str, str], *args: str) -> Iterator[subprocess.Popen[str]]:
    with start(env, *args) as process:
        try:
            yield process
        finally:
            process.kill()
            process.wait()


def until_progress(process: subprocess.Popen[str]) -> str:
    """Read the process's call events until a call reports progress; that call's id."""
    assert process.stderr is not None
    while line := process.stderr.readline():
        if line.startswith("{") and json.loads(line)["event"] == "progressed":
            return str(json.loads(line)["call_id"])
    raise AssertionError("the process ended before a call made progress")


def calls_on_a_terminal(env: dict[str, str], session: str) -> str:
    """The table 'agentos calls' shows a person, once the holder has mirrored the call."""
    for _ in range(100):  # the holder mirrors twice a second: ask again until it did
        code, _, shown = on_a_terminal(env, "calls", session, stream="stdout")
        assert code == 0, shown
        if "running" in shown:
            return shown
    raise AssertionError(f"never running: {shown}")


def test_the_id_agentos_calls_shows_is_typed_back_to_status_and_cancel(
    env: dict[str, str],
    quick_agent: str,
) -> None:
    prompt = "When can Jane meet? Check her calendar (10s)"
    with running(env, "run", "--agent", quick_agent, "--session-id", "S", "--wait-for-async",
                 prompt) as holder:  # fmt: skip
        call_id = until_progress(holder)
        table = calls_on_a_terminal(env, "S")
        (row,) = [line.split() for line in table.splitlines() if "fetch_calendar" in line]
        shown = row[0]
        assert shown == call_id[:8], "the call's id as the table shows it: its first 8"
        status = agentos(env, "status", shown)
        assert status.code == 0 and status.json["call_id"] == call_id, status
        cancelled = agentos(env, "cancel", shown, "--reason", "stalled", *PATIENT)
        assert (cancelled.code, cancelled.out) == (0, "cancelled (was running)\n"), cancelled
        holder.communicate(timeout=30)
    again, as_json = side_by_side(env, ("cancel", shown), ("cancel", shown, "--json"))
    assert again.code == 1, again
    assert again.out == f"not cancelled: call {shown} had already ended, cancelled\n", again
    assert as_json.code == 1 and as_json.json["outcome"] == "already_final", as_json


def test_screens_show_the_short_ids(env: dict[str, str]) -> None:
    """'sessions' and 'show' on a terminal show a session's and its calls' ids short."""
    ran = agentos(env, "run", TRIP)
    session = ran.json["session_id"]
    short = session[: len("session-") + 8]
    calls = {call["tool_name"]: call for call in ran.json["pending_calls"]}
    code, _, listed = on_a_terminal(env, "sessions", stream="stdout")
    assert code == 0 and short in listed and session not in listed, listed
    shown = agentos(env, "show", short)
    assert shown.out.startswith(f"session {short}  agent demo"), shown
    for call in calls.values():
        assert f"[{call['call_id'][:8]}]" in shown.out and call["call_id"] not in shown.out


def test_chat_takes_the_start_of_a_session_id(env: dict[str, str]) -> None:
    """'agentos chat SESSION' in a real terminal continues the session a start names."""
    ran = agentos(env, "run", "--session-id", "session-chatty-one", "hello from before")
    assert ran.code == 0, ran
    with chat_in_a_terminal(env, "session-chatty") as chat:
        assert chat.until(rb"hello from before"), chat.tail
        chat.write(b"\x03")  # ctrl+c
        assert chat.exit_code() == 0, chat.tail
        assert chat.until(rb"session session-chatty-one"), chat.tail
    listed = agentos(env, "sessions", "--json").lines
    assert [row["session_id"] for row in listed] == ["session-chatty-one"], "no session was made"
