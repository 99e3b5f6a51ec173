"""Issue 11: the command line as a new user meets it, run as a real program.

The whole answer is printed, pending calls say what becomes of them, agent
files are checked when loaded, tokens tell replays and expiry, a missing
database is named, SIGTERM is one line, and the SDK is never imported to
look at sessions.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.cli import agentos
from tests.support.cli import on_a_terminal
from tests.support.cli import side_by_side
from tests.support.cli import start

JANE_AND_JACK = "When can Jane and Jack meet? calendar 0.2s"


def test_run_prints_every_message_of_the_run(env: dict[str, str], quick_agent: str) -> None:
    args = ("run", "--agent", quick_agent, "--wait-for-async", JANE_AND_JACK)
    code, err, screen = on_a_terminal(env, *args, stream="stdout")
    assert code == 0, err
    for said in ("On it: fetch_calendar(Jane", "Jane is free", "Jack is free"):
        assert said in screen, (said, screen)
    assert screen.index("On it") < screen.index("Jane is free")
    piped = agentos(env, *args)
    messages = piped.json["messages"]
    assert messages[0].startswith("On it:") and piped.json["answer"] == messages[-1]
    assert any("Jane is free" in m for m in messages) and any("Jack is free" in m for m in messages)


def test_pending_calls_say_what_becomes_of_them(env: dict[str, str], quick_agent: str) -> None:
    (run,) = side_by_side(
        env, ("run", "--agent", quick_agent, "Check Jane's calendar (30s) and approve the trip")
    )
    assert run.code == 3, run
    steps = run.json["next_steps"]
    session = run.json["session_id"]
    running, deferred = steps
    assert "1 call still running (fetch_calendar) ends with this process" in running
    assert "tells the model it was lost" in running
    assert f"'agentos resume {session}'" in running and "--wait-for-async" in running
    token = run.json["pending_calls"][1]["continuation_token"]
    assert f"'agentos complete {token} --result JSON'" in deferred


def test_calls_of_one_tool_still_running_are_counted_not_repeated(
    env: dict[str, str], quick_agent: str
) -> None:
    """Three calendars still running: the model's words and the next steps name the tool
    once, with how many of its calls run."""
    (run,) = side_by_side(
        env, ("run", "--agent", quick_agent, "When can Ann, Ben and Cid meet? calendar 30s")
    )
    assert run.code == 3, run
    assert run.json["answer"] == "3 calls of fetch_calendar are still running.", run.json
    (running,) = run.json["next_steps"]
    assert "3 calls still running (fetch_calendar x3) end with this process" in running


def test_every_command_names_a_call_as_the_library_does(
    env: dict[str, str], quick_agent: str
) -> None:
    """One vocabulary (issue 30): ``run``, ``calls`` and ``status`` say ``call_id``,
    ``provider_call_id``, ``tool_name`` and ``tool_input``, as ``CallSnapshot`` does."""
    (run,) = side_by_side(
        env, ("run", "--agent", quick_agent, "Check Jane's calendar (30s) and approve the trip")
    )
    assert run.code == 3, run
    pending = run.json["pending_calls"]
    listed = agentos(env, "calls", run.json["session_id"], "--json").lines
    status = agentos(env, "status", pending[1]["provider_call_id"], "--json").json
    assert [call["tool_name"] for call in pending] == ["fetch_calendar", "approve"]
    assert [call["tool_name"] for call in listed] == ["fetch_calendar", "approve"]
    assert status["tool_input"] == listed[1]["tool_input"] and status["call_id"]
    assert {call["call_id"] for call in pending} == {call["call_id"] for call in listed}
    for shown in (*pending, *listed, status):
        assert not {"id", "tool", "input", "args", "tool_call_id"} & shown.keys(), shown


@pytest.mark.parametrize(
    ("name", "text", "says"),
    [
        ("tool.toml", 'tools = ["fetch_calendar", "fetch_calender"]', "tools[1]: 'fetch_calender'"),
        ("rule.toml", "[policy.rules]\nwether = 'defer'", "policy.rules.wether: 'wether' is not"),
        ("cap.json", '{"capabilities": ["get_status"]}', "capabilities: not a capability: 'get_"),
        (
            "typo.toml",
            "[policy.rules]\nfetch_calendar = 'run_isolatd'",
            "policy.rules.fetch_calendar: 'run_isolatd' is not one of run_sync, run_async",
        ),
        (
            "isolated.toml",
            "[policy.rules]\nfetch_calendar = 'run_isolated'",
            "run_isolated needs the isolated runner 'local', which is not registered",
        ),
        ("agent.yaml", "name: x", ".yaml is not a format agentos reads: agent files are JSON"),
        ("extra.json", '{"nme": "x"}', "nme: not a setting agentos knows; did you mean 'name'?"),
        ("tool.toml", 'tool = ["m"]', "tool: not a setting agentos knows; did you mean 'tools'?"),
        (
            "server.toml",
            "[mcp_servers.files]\ncomand = 'python'",
            "mcp_servers.files.comand: not a setting agentos knows; did you mean 'command'?",
        ),
        ("far.toml", "zzz = 1", "zzz: not a setting agentos knows ("),
    ],
)
def test_agent_files_are_checked_when_loaded(
    env: dict[str, str], tmp_path: Path, name: str, text: str, says: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    result = agentos(env, "run", "--agent", str(path), "hello")
    result.one_line_error(2, "'--agent'", says)
    assert "Input should" not in result.err and "pydantic" not in result.err
    assert not (tmp_path / "agentos.db").exists(), "nothing ran"


def test_a_replayed_token_says_its_payload_was_ignored(
    env: dict[str, str], quick_agent: str
) -> None:
    run = agentos(env, "run", "--agent", quick_agent, "please approve the trip")
    token = run.json["pending_calls"][0]["continuation_token"]
    first = agentos(env, "complete", token, "--result", '{"approved": true}')
    same, other = side_by_side(
        env,
        ("complete", token, "--result", '{"approved": true}'),
        ("complete", token, "--error", "refused"),
    )
    outs = (first.out, same.out, other.out)
    assert outs == ("applied\n", "already_completed\n", "already_completed\n")
    assert same.err == "", "the same payload again is no news"
    assert other.err.strip() == (
        'note: the token was completed earlier with --result {"approved": true}; '
        "what you gave now was ignored"
    )


def test_an_expired_token_is_expired_for_the_model_and_complete(
    env: dict[str, str], quick_agent: str
) -> None:
    """(Told after a restart: tests/sessions/test_restart.py, through the library.)"""
    run = agentos(
        env, "run", "--agent", quick_agent, "--token-ttl", "0.05", "--wait-for-async", "approve it"
    )
    assert run.code == 0, run
    assert "expired: nobody completed it within 0.05 s" in run.json["answer"]
    (approve,) = agentos(env, "calls", run.json["session_id"]).lines
    assert (approve["status"], approve["note"]) == (
        "failed",
        "expired: nobody completed it within 0.05 s",
    ), approve
    late = agentos(env, "complete", approve["continuation_token"], "--result", "true")
    assert (late.code, late.out) == (4, "expired\n"), late
    refused = agentos(env, "run", "--token-ttl", "0", "hello")
    refused.one_line_error(2, "--token-ttl")


def test_show_json_and_a_missing_database(env: dict[str, str], tmp_path: Path) -> None:
    missing = tmp_path / "agentos.db"
    show, calls, complete, resume, sessions = side_by_side(
        env,
        ("show", "s"),
        ("calls", "s"),
        ("complete", "ct_x", "--result", "1"),
        ("resume", "s"),
        ("sessions",),
    )
    for result in (show, calls, complete, resume):
        result.one_line_error(1, f"no database at {missing}", "'agentos run' creates it")
    assert (sessions.code, sessions.out) == (0, ""), sessions
    assert f"no database at {missing} yet" in sessions.err
    assert not missing.exists()
    run = agentos(env, "run", "--session-id", "s", "hello there")
    shown, ghost = side_by_side(env, ("show", "s", "--json"), ("show", "ghost"))
    ghost.one_line_error(1, "no session with id 'ghost'")
    report = shown.json
    assert (report["session_id"], report["agent"], report["status"]) == ("s", "demo", "idle")
    assert report["history"][0]["content"] == [{"type": "text", "text": "hello there"}]
    assert report["history"][-1]["content"][0]["text"] == run.json["answer"]
    assert report["calls"] == []


@pytest.mark.parametrize(
    ("signum", "code", "how"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated (SIGTERM)")],
    ids=["ctrl-c", "sigterm"],
)
def test_an_interruption_is_one_line_naming_the_saved_session(
    env: dict[str, str], quick_agent: str, signum: int, code: int, how: str
) -> None:
    """Issue 30: Ctrl-C is not an error: it says the session is saved and how to go on."""
    process = start(
        env,
        *("run", "--agent", quick_agent, "--wait-for-async", "--session-id", "slow"),
        "Check Jane's calendar (30s)",
    )
    assert process.stderr is not None
    for line in process.stderr:
        if '"event": "started"' in line:
            break
    process.send_signal(signum)
    out, err = process.communicate(timeout=30)
    assert process.returncode == code, (out, err)
    assert "Traceback" not in err
    assert err.splitlines()[-1] == f"{how}; session slow saved ('agentos resume slow' goes on)"
    shown = agentos(env, "show", "slow", "--json")
    assert shown.json["history"][0]["content"][0]["text"] == "Check Jane's calendar (30s)"


def test_a_timeout_reads_as_one(env: dict[str, str], tmp_path: Path) -> None:
    agent = tmp_path / "strict.toml"
    agent.write_text("call_timeout = 0.5\n")
    run = agentos(env, "run", "--agent", str(agent), "--wait-for-async", "Check Jane's calendar")
    assert run.code == 0, run
    assert "timed out after 0.5 s" in run.json["answer"]
    assert "(timed_out)" not in run.out


def test_looking_never_imports_the_sdk(env: dict[str, str]) -> None:
    agentos(env, "run", "--session-id", "s", "hello")
    probe = """
import sys
from agentos import AnthropicProvider
from agentos.cli import run_cli
codes = [run_cli(args) for args in (["--help"], ["sessions"], ["show", "s"], ["calls", "s"])]
AnthropicProvider()
print(json.dumps({"codes": codes, "imported": "anthropic" in sys.modules}))
"""
    done = subprocess.run(
        [sys.executable, "-c", "import json\n" + probe],
        env={**env, "ANTHROPIC_API_KEY": "sk-test"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    report = json.loads(done.stdout.splitlines()[-1])
    assert report == {"codes": [0, 0, 0, 0], "imported": False}, done.stderr


def test_a_board_agent_at_the_command_line(env: dict[str, str], tmp_path: Path) -> None:
    """Issue 12: `run --agent` with context_view = "board" prints what a person sees of the
    board (the scripted model reads the board too); `show` draws the stored board, and
    `resume` carries on with it."""
    agent = tmp_path / "board.toml"
    agent.write_text('name = "board"\ncontext_view = "board"\n')
    run = agentos(env, "run", "--agent", str(agent), "--wait-for-async", JANE_AND_JACK)
    assert run.code == 0, run
    first, last = run.json["messages"]
    assert first.startswith("On it:")
    assert "Jane is free" in last and "Jack is free" in last
    shown = agentos(env, "show", run.json["session_id"], "--history")
    assert "board (what the model reads):" in shown.out
    assert "#1 user 'When can Jane and Jack meet? calendar 0.2s'" in shown.out
    resumed = agentos(  # waits for the weather call: on a loaded machine it may outlast the turn
        env,
        "resume",
        run.json["session_id"],
        "--message",
        "what is the weather in Oslo?",
        "--wait-for-async",
    )
    assert resumed.code == 0, resumed
    assert resumed.json["messages"] == ["On it: weather(Oslo).", "Oslo: clear, 20 °C."]


def test_a_board_sessions_deferred_call_at_the_command_line(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A board session's deferred call is listed by `calls` with its token (its board is
    its history), completed while no process runs, and delivered by `resume`."""
    agent = tmp_path / "board.toml"
    agent.write_text('name = "board"\ncontext_view = "board"\n[policy.rules]\napprove = "defer"\n')
    run = agentos(env, "run", "--agent", str(agent), "please approve the trip")
    assert run.code == 3, run
    session = run.json["session_id"]
    (pending,) = run.json["pending_calls"]
    token = pending["continuation_token"]
    (listed,) = agentos(env, "calls", session, "--json").lines
    assert (listed["tool_name"], listed["status"], listed["deferred"]) == (
        "approve",
        "pending",
        True,
    )
    assert listed["note"] == "deferred: waits for its continuation token"
    assert (listed["continuation_token"], listed["token_completed"]) == (token, False)
    assert listed["provider_call_id"] == pending["provider_call_id"]
    assert agentos(env, "complete", token, "--result", '{"approved": true}').out == "applied\n"
    (listed,) = agentos(env, "calls", session, "--json").lines
    assert (listed["status"], listed["token_completed"]) == ("completed", True)
    resumed = agentos(env, "resume", session)
    assert resumed.code == 0, resumed
    assert resumed.json["messages"], "the model heard the outcome and answered"
    (listed,) = agentos(env, "calls", session, "--json").lines
    assert (listed["status"], listed["note"]) == ("completed", None)


def test_show_gives_a_board_stored_with_the_old_names_in_the_new_ones(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A board stored before issue 30 named a call's tool ``tool`` and its input
    ``arguments``: ``show --json`` gives it as this agentos writes one."""
    agent = tmp_path / "board.toml"
    agent.write_text('name = "board"\ncontext_view = "board"\n')
    run = agentos(
        env, "run", "--agent", str(agent), "what is the weather in Oslo?", "--wait-for-async"
    )
    assert run.code == 0, run
    with sqlite3.connect(env["AGENTOS_DB"]) as db:
        (stored,) = db.execute("SELECT board FROM sessions").fetchone()
        board = json.loads(stored)
        calls = [call for node in board["nodes"] for call in node["calls"]]
        assert calls, "the model called a tool"
        for call in calls:
            call["tool"], call["arguments"] = call.pop("tool_name"), call.pop("tool_input")
        db.execute("UPDATE sessions SET board = ?", (json.dumps(board),))
    shown = agentos(env, "show", run.json["session_id"], "--json").json
    calls = [call for node in shown["board"]["nodes"] for call in node["calls"]]
    assert [call["tool_name"] for call in calls] == ["weather"]
    assert not {"tool", "arguments"} & calls[0].keys()


def test_a_database_in_a_folder_that_does_not_exist_is_refused(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Issue 30: a mistyped --db (or AGENTOS_DB) is an error, not a new empty database in
    folders made for it; the default path still makes its own folder."""
    typo = tmp_path / "no-such-folder" / "agentos.db"
    refused = agentos(env, "--db", str(typo), "run", "hello")
    refused.one_line_error(1, f"--db {typo}: the folder", "does not exist")
    refused = agentos({**env, "AGENTOS_DB": str(typo)}, "run", "hello")
    refused.one_line_error(1, f"AGENTOS_DB {typo}: the folder")
    assert not typo.parent.exists()
    home = {k: v for k, v in env.items() if k != "AGENTOS_DB"}
    home["XDG_DATA_HOME"] = str(tmp_path / "data")
    made = agentos(home, "run", "hello")
    assert made.code == 0, made
    assert list((tmp_path / "data").rglob("agentos.db")), "the default folder was made"


def test_say_is_the_next_message_of_a_conversation(env: dict[str, str]) -> None:
    """Issue 30: a follow-up is one obvious command, ``agentos say SESSION TEXT``."""
    first = agentos(env, "run", "--session-id", "s", "What's the weather in Oslo?")
    assert first.code == 0, first
    then = agentos(env, "say", "s", "And in Bergen?")
    assert then.code == 0, then
    assert then.json["session_id"] == "s"
    shown = agentos(env, "show", "s", "--json")
    said = [
        block["text"]
        for message in shown.json["history"]
        if message["role"] == "user"
        for block in message["content"]
        if block.get("type") == "text"
    ]
    assert said == ["What's the weather in Oslo?", "And in Bergen?"]
    unknown = agentos(env, "say", "nobody", "hello")
    unknown.one_line_error(1, "nobody")
