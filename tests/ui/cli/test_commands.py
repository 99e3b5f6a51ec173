"""The ``agentos`` command line, run as a real program: commands, output and exit codes.

Every test runs ``python -m agentos.cli`` in subprocesses, offline (no
``ANTHROPIC_API_KEY``: the scripted model), on a database in ``tmp_path``.
Commands that do not depend on each other run side by side to keep it quick.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio

from agentos import AgentConfig
from agentos import SqliteStore
from agentos.board import Board
from agentos.stores import StoredSession
from tests.support.cli import agentos
from tests.support.cli import on_a_terminal
from tests.support.cli import side_by_side
from tests.support.postgres import Cluster


def test_help_on_every_command(env: dict[str, str]) -> None:
    commands = ["run", "resume", "complete", "sessions", "show", "calls", "status"]
    commands += ["rename", "cancel"]
    top, *each = side_by_side(env, ("--help",), *((name, "--help") for name in commands))
    assert top.code == 0 and "Usage: agentos [OPTIONS] COMMAND" in top.out
    for code in ("0  done", "1  error", "2  usage", "3  calls still pending", "4  ", "5  "):
        assert f"  {code}" in top.out, code
    assert "--db PATH" in top.out and "AGENTOS_DB" in top.out
    for name in commands:
        assert f"  {name} " in top.out
    for name, result in zip(commands, each, strict=True):
        assert result.code == 0, result
        assert f"Usage: agentos {name}" in result.out
    run, resume, complete = each[:3]
    for result in (run, resume):
        assert "3  calls still pending" in result.out and "--wait-for-async" in result.out
    assert "4  unknown" in complete.out and "--result JSON" in complete.out
    cancel = each[-1]
    assert "3  queued" in cancel.out and "--reason TEXT" in cancel.out


def test_db_goes_before_or_after_the_command(env: dict[str, str], tmp_path: Path) -> None:
    elsewhere = str(tmp_path / "elsewhere.db")
    ran = agentos(env, "run", "--db", elsewhere, "--session-id", "there", "hello")
    assert ran.code == 0, ran
    before, after, default = side_by_side(
        env,
        ("--db", elsewhere, "sessions", "--json"),
        ("sessions", "--json", "--db", elsewhere),
        ("sessions", "--json"),
    )
    assert [row["session_id"] for row in before.lines] == ["there"]
    assert after.lines == before.lines
    assert default.code == 0 and default.lines == [], "the default database is another file"


def test_control_characters_in_a_session_are_shown_escaped(env: dict[str, str]) -> None:
    """A message holding ``ESC [2J`` (clear the screen) reads as written in 'show' and in an
    error; the terminal is sent no escape sequence from it (click strips escapes only when
    the output is not a terminal)."""
    ran = agentos(env, "run", "--session-id", "s", "hello \x1b[2J there")
    assert ran.code == 0, ran
    show, missing = side_by_side(env, ("show", "s"), ("show", "\x1b]0;PWNED\x07"))
    assert show.code == 0 and "user: hello \\x1b[2J there" in show.out
    assert missing.code == 1 and "\\x1b]0;PWNED\\x07" in missing.err
    for shown in (show.out, show.err, missing.out, missing.err):
        assert "\x1b" not in shown


def test_run_complete_resume_and_look(any_env: dict[str, str], quick_agent: str) -> None:
    env = any_env
    left = "Check Jane's calendar (2s) and ask for approval of the trip"
    waited = "Check Jack's calendar (0.3s) and ask for approval of the budget"
    run, waiting, chat = side_by_side(
        env,
        ("run", "--agent", quick_agent, "--session-id", "trip", left),
        ("run", "--agent", quick_agent, "--wait-for-async", waited),
        ("run", "--session-id", "chat", "--json", "hello there"),
    )
    # Without --wait-for-async: the calendar is still running, the approval is deferred.
    assert run.code == 3, run
    assert run.err.splitlines()[0] == "model: scripted (offline; set ANTHROPIC_API_KEY for Claude)"
    report = run.json
    assert (report["session_id"], report["status"]) == ("trip", "pending")
    assert "still running" in report["answer"] and "waits for a human" in report["answer"]
    calls = {call["tool_name"]: call for call in report["pending_calls"]}
    assert (calls["fetch_calendar"]["status"], calls["approve"]["status"]) == ("running", "pending")
    assert calls["fetch_calendar"]["continuation_token"] is None
    token = calls["approve"]["continuation_token"]
    assert token and token in report["answer"]
    for call in calls.values():
        assert call["provider_call_id"].startswith("toolu_") and call["call_id"]
    # With it: the calendar finishes (progress on stderr), the approval still cannot.
    assert waiting.code == 3, waiting
    assert "Jack is free 10:00-11:00, 15:00-16:00." in waiting.json["answer"]
    (deferred,) = waiting.json["pending_calls"]
    assert deferred["tool_name"] == "approve" and deferred["continuation_token"]
    progress = [e for e in waiting.events if e["event"] == "progressed"]
    assert {"percent": 100, "person": "Jack"} in [e["progress"] for e in progress]
    assert {e["tool_name"] for e in progress} == {"fetch_calendar"}
    # Nothing to wait for: done.
    assert chat.code == 0, chat
    answer = chat.json["answer"]
    assert chat.json == {
        "session_id": "chat",
        "status": "done",
        "answer": answer,
        "messages": [answer],
    }
    assert "hello there" in chat.json["answer"]

    applied, taken = side_by_side(
        env,
        ("complete", token, "--result", '{"approved": true}'),
        ("run", "--session-id", "chat", "hello again"),
    )
    assert (applied.code, applied.out) == (0, "applied\n"), applied
    taken.one_line_error(1, "'chat' already exists", "agentos resume chat")
    again, bogus = side_by_side(
        env,
        ("complete", token, "--result", '{"approved": false}'),
        ("complete", "no-such-token", "--error", "nobody home"),
    )
    assert (again.code, again.out) == (0, "already_completed\n"), again
    assert (bogus.code, bogus.out) == (4, "unknown\n"), bogus

    resumed = agentos(env, "resume", "trip")
    assert resumed.code == 0, resumed
    told = (
        f"fetch_calendar ({calls['fetch_calendar']['provider_call_id']}) was lost "
        'in a restart. approve finished (completed): {"approved": true}'
    )
    assert resumed.json == {
        "session_id": "trip",
        "status": "done",
        "answer": told,
        "messages": [told],
    }

    show, stored, sessions = side_by_side(env, ("show", "trip"), ("calls", "trip"), ("sessions",))
    assert show.code == 0, show
    assert f"user: {left}" in show.out
    assert 'tool fetch_calendar {"person": "Jane", "seconds": 2.0}' in show.out
    assert "-> orphaned (lost in a restart)" in show.out
    assert f'-> completed: {{"approved": true}}  [deferred, token {token}]' in show.out
    assert "agent: fetch_calendar (toolu_" in show.out
    calendar, approval = stored.lines
    assert (calendar["tool_name"], calendar["status"]) == ("fetch_calendar", "orphaned")
    assert calendar["call_id"] == calls["fetch_calendar"]["call_id"]
    assert calendar["tool_input"] == {"person": "Jane", "seconds": 2.0}
    assert (approval["tool_name"], approval["status"]) == ("approve", "completed")
    assert approval["result"] == {"approved": True}
    assert (approval["continuation_token"], approval["token_completed"]) == (token, True)
    listed = {row["session_id"]: row for row in sessions.lines}
    assert set(listed) == {"trip", "chat", waiting.json["session_id"]}
    assert (listed["trip"]["agent"], listed["trip"]["status"]) == ("quick", "idle")
    assert listed["chat"]["agent"] == "demo"
    assert listed["trip"]["updated_at"] >= listed["trip"]["created_at"]


def test_errors_are_one_line_and_never_a_traceback(env: dict[str, str], tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"this is not an SQLite database, " * 64)
    bad_agent = tmp_path / "agent.json"
    bad_agent.write_text('{"policy": {"default": "sometimes"}}')
    results = side_by_side(
        env,
        ("show", "ghost"),
        ("resume", "ghost"),
        ("--db", str(corrupt), "run", "hello"),
        ("run", "--agent", str(bad_agent), "hello"),
        ("complete", "some-token"),
        ("complete", "some-token", "--result", "{approved"),
        ("complete", "some-token", "--result", "true", "--error", "no"),
    )
    show, resume, run, agent, no_result, malformed, both = results
    for result in (show, resume):
        result.one_line_error(1, "no database at", str(tmp_path / "agentos.db"))
    run.one_line_error(1, str(corrupt), "corrupt")
    assert "--db or AGENTOS_DB" not in run.err, "another file would not help: it is corrupt"
    assert corrupt.read_bytes() == b"this is not an SQLite database, " * 64
    agent.one_line_error(2, "--agent", "policy.default")
    no_result.one_line_error(2, "--result JSON")
    malformed.one_line_error(2, "--result", "not JSON")
    both.one_line_error(2, "--result JSON or --error TEXT, not both")
    assert not (tmp_path / "agentos.db").exists(), "looking and failing create no database"
    (tmp_path / "a-file").write_text("")
    unwritable = agentos(env, "--db", str(tmp_path / "a-file" / "agentos.db"), "run", "hi")
    unwritable.one_line_error(1, "choose a writable location (--db or AGENTOS_DB)")


def test_on_a_terminal_progress_is_a_live_display(env: dict[str, str], quick_agent: str) -> None:
    code, out, screen = on_a_terminal(
        env,
        *("run", "--agent", quick_agent, "--wait-for-async", "Check Jane's calendar (0.5s)"),
        stream="stderr",
    )
    assert code == 0, (out, screen)
    assert json.loads(out)["status"] == "done"
    assert "model: scripted" in screen
    assert "fetch_calendar" in screen and re.search(r"\b\d+%", screen), screen  # its percent
    assert '"event"' not in screen, "no JSON lines on a terminal"
    finished = re.search(r"✓ fetch_calendar\(Jane, 0\.5\) (\d+(?:\.\d)?) s\r?\n", screen)
    assert finished is not None, screen  # issue 30: one line that stays, per finished call
    assert float(finished[1]) >= 0.5


def test_show_draws_a_board_session_and_gives_its_board_as_json(
    env: dict[str, str],
) -> None:
    """A board session's board is its own record: ``show --history`` draws it (what the model
    reads), ``show --json`` gives it."""
    board = Board()
    board.post_user("what is on the board?", at=1.0)

    async def store_it() -> None:
        async with await SqliteStore.open(env["AGENTOS_DB"]) as store:
            config = AgentConfig(context_view="board").model_dump(mode="json")
            await store.create_session(
                StoredSession("b", config, "idle", 1.0, 1.0, board=board.to_json())
            )

    anyio.run(store_it)
    shown, as_json = side_by_side(env, ("show", "b", "--history"), ("show", "b", "--json"))
    assert shown.code == 0 and "board (what the model reads):" in shown.out, shown
    assert "what is on the board?" in shown.out
    assert as_json.json["board"] == board.to_json() and as_json.json["history"] == []


def test_a_server_that_cannot_be_used_is_one_line_without_its_password(
    env: dict[str, str], postgres_server: Cluster
) -> None:
    """Issue 27: an unreachable server (one host or several), a database that does not exist,
    an unknown pooler option and a bad driver option each end the command in one line; no
    message shows the password, given in the address or as its password= option."""
    base = postgres_server.dsn.rsplit("/", 1)[0]
    fresh = f"{base}/{postgres_server.new_database()}?password=s3cret"
    unreachable, missing, pooler, option, hosts, existing = side_by_side(
        env,
        ("--db", "postgresql://someone:s3cret@127.0.0.1:1/agentos", "sessions"),
        ("--db", base.replace("postgres@", "postgres:s3cret@") + "/no_such_db", "sessions"),
        ("--db", f"{base}/x?pooler=session", "sessions"),
        ("--db", f"{base}/x?sslmode=bogus&password=s3cret", "sessions"),
        ("--db", "postgresql://u:s3cret@127.0.0.1:1,127.0.0.1:2/agentos", "sessions"),
        ("--db", fresh, "run", "--session-id", "s", "hi"),
    )
    unreachable.one_line_error(1, "cannot reach the database postgresql://someone@127.0.0.1:1")
    missing.one_line_error(1, '"no_such_db" does not exist', "createdb")
    pooler.one_line_error(1, "only pooler=transaction is known")
    option.one_line_error(1, "cannot use the database", "sslmode")
    hosts.one_line_error(1, "cannot reach the database postgresql://u@127.0.0.1:1,127.0.0.1:2")
    assert existing.code == 0, existing
    again = agentos(env, "--db", fresh, "run", "--session-id", "s", "again")
    again.one_line_error(1, "already exists in postgresql://", "password=***")
    for result in (unreachable, missing, option, hosts, again):
        assert "s3cret" not in result.err


def test_show_says_what_the_session_used_and_cost(env: dict[str, str]) -> None:
    """Issue 28: the store keeps each session's requests and tokens; 'show' prints them with
    their cost at the model's prices (the offline model reports no tokens: $0)."""
    ran = agentos(env, "run", "--session-id", "u", "hello there")
    assert ran.code == 0, ran
    shown, as_json = side_by_side(env, ("show", "u"), ("show", "u", "--json"))
    assert shown.out.splitlines()[-1] == (
        "usage: 1 request, 0 tokens (0 in, 0 out, 0 cache read, 0 cache write), $0.0000"
    )
    assert as_json.json["usage"] == {
        "requests": 1,
        "tokens": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cost_usd": 0.0,
        "cache_hit_ratio": None,
    }


def test_rename_names_a_session_and_sessions_lists_the_name(env: dict[str, str]) -> None:
    """Issue 30: 'agentos rename SESSION TITLE' names a stored session (on one line, at most
    80 characters); 'sessions' and 'show --json' give the name; an empty one gives the
    first words back."""
    ran = agentos(env, "run", "--session-id", "trip", "Plan a trip to Oslo")
    assert ran.code == 0, ran
    renamed, too_long, missing = side_by_side(
        env,
        ("rename", "trip", "  Oslo\n in May "),
        ("rename", "trip", "x" * 81),
        ("rename", "ghost", "Named"),
    )
    assert (renamed.code, renamed.out) == (0, "Oslo in May\n"), renamed
    too_long.one_line_error(2, "TITLE", "at most 80 characters")
    missing.one_line_error(1, "no session with id 'ghost'")
    listed, shown = side_by_side(env, ("sessions", "--json"), ("show", "trip", "--json"))
    assert [row["title"] for row in listed.lines] == ["Oslo in May"]
    assert shown.json["title"] == "Oslo in May"
    undone = agentos(env, "rename", "trip", "", "--json")
    assert undone.json == {
        "session_id": "trip",
        "title": None,
        "shown_title": "Plan a trip to Oslo",
    }
    listed_again = agentos(env, "sessions").lines
    assert [row["title"] for row in listed_again] == ["Plan a trip to Oslo"], "its first words"
