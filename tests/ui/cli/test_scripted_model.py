"""An agent file's model may be a Python function named by import path (issue 47):
``model = "scripted_replies:reply"``. It runs offline, without ``ANTHROPIC_API_KEY``, in
``agentos run``, ``say``, ``chat`` and ``serve``; its module is found in the agent file's
folder (and the folders its ``import_path`` names), then in the current one, and a session
continued from anywhere finds it again. A path that names no such function is one line
naming the setting (exit 2); a function that raises or returns no reply fails the turn,
naming the function (exit 1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import Result
from tests.support.cli import agentos
from tests.support.cli import chat_in_a_terminal
from tests.ui.cli.conftest import asked_on_the_page

REPLIES = '''
"""A scripted model: it looks up the weather when asked, and says what it found."""

from agentos.testing import FunctionRequest, ToolCall, ToolResult


def reply(request: FunctionRequest) -> object:
    for entry in request.new:
        if isinstance(entry, ToolResult) and entry.tool == "weather":
            assert isinstance(entry.value, dict)
            return f"In {entry.value['city']} the sky is {entry.value['sky']}."
    said = request.user_text
    if said == "boom":
        raise RuntimeError("the script broke")
    if said == "a number":
        return 42
    if "weather" in said:
        return ["Let me look.", ToolCall("weather", {"city": said.split()[-1].rstrip("?")})]
    return f"You said: {said}"


NOT_A_FUNCTION = "hello"


def two(request: FunctionRequest, extra: object) -> str:
    return "never"
'''

AGENT = 'name = "scripted"\nmodel = "scripted_replies:reply"\ntools = ["weather"]\n'


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    """An agent file with its model's module beside it, in a folder of its own."""
    folder = tmp_path / "agent"
    folder.mkdir()
    (folder / "scripted_replies.py").write_text(REPLIES)
    (folder / "agent.toml").write_text(AGENT)
    return folder / "agent.toml"


def run_in(folder: Path, env: dict[str, str], *args: str) -> Result:
    """``agentos ARGS`` run from ``folder``, its current directory."""
    done = subprocess.run(
        [sys.executable, "-m", "agentos.cli", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return Result(tuple(args), done.returncode, done.stdout, done.stderr)


def test_run_and_say_ask_the_function_the_agent_file_names(
    env: dict[str, str], agent: Path, tmp_path: Path
) -> None:
    """No key is needed; the module is found beside the agent file, and again by ``say``
    from another folder (the stored agent keeps that folder)."""
    done = agentos(env, "run", "--agent", str(agent), "weather in Oslo?")
    assert done.code == 0, done
    assert done.err.splitlines()[0] == (
        "model: scripted_replies:reply (offline: a function you script)"
    )
    assert done.json["messages"] == ["Let me look.", "In Oslo the sky is clear."]
    assert [event["event"] for event in done.events] == ["queued", "started", "completed"]
    session = done.json["session_id"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    said = run_in(elsewhere, env, "say", session, "thanks")
    assert said.code == 0, said
    assert said.json["messages"] == ["You said: thanks"]


def test_the_module_is_found_in_the_current_folder_too(env: dict[str, str], tmp_path: Path) -> None:
    here = tmp_path / "here"
    here.mkdir()
    (here / "scripted_replies.py").write_text(REPLIES)
    elsewhere = tmp_path / "agents"
    elsewhere.mkdir()
    (elsewhere / "agent.toml").write_text(AGENT)
    done = run_in(here, env, "run", "--agent", str(elsewhere / "agent.toml"), "hello")
    assert done.code == 0, done
    assert done.json["messages"] == ["You said: hello"]


@pytest.mark.parametrize(
    ("model", "words"),
    [
        ("nowhere_at_all:reply", ["no module named 'nowhere_at_all'", "looked in"]),
        ("scripted_replies:rply", ["has no attribute 'rply'", "did you mean 'reply'?"]),
        ("scripted_replies:NOT_A_FUNCTION", ["is a str, not a function"]),
        ("scripted_replies:two", ["takes (request, extra)", "takes one argument, the request"]),
    ],
)
def test_a_model_path_that_names_no_function_is_one_line(
    env: dict[str, str], agent: Path, model: str, words: list[str]
) -> None:
    agent.write_text(AGENT.replace("scripted_replies:reply", model))
    refused = agentos(env, "run", "--agent", str(agent), "hello")
    refused.one_line_error(2, "'--agent'", "agent.toml: model: ", f"'{model}'", *words)
    assert not Path(env["AGENTOS_DB"]).exists(), "nothing ran"


def test_a_sub_agents_model_path_is_checked_too(env: dict[str, str], agent: Path) -> None:
    helper = agent.parent / "helper.toml"
    helper.write_text('name = "helper"\nmodel = "scripted_replies:rply"\n')
    agent.write_text(AGENT + '\n[agents.helper]\nagent = "helper.toml"\n')
    refused = agentos(env, "run", "--agent", str(agent), "hello")
    refused.one_line_error(
        2, "agent.toml: agents.helper.agent: model: 'scripted_replies:rply'", "'reply'?"
    )


@pytest.mark.parametrize(
    ("said", "words"),
    [
        ("boom", "'scripted_replies:reply' raised RuntimeError: the script broke"),
        ("a number", "'scripted_replies:reply' returned 42, an int: a reply is text (a str)"),
    ],
)
def test_a_function_that_raises_or_returns_no_reply_fails_the_turn_naming_it(
    env: dict[str, str], agent: Path, said: str, words: str
) -> None:
    failed = agentos(env, "run", "--agent", str(agent), said)
    assert failed.code == 1, failed
    assert "Traceback" not in failed.err, failed.err
    model, error = failed.err.splitlines()
    assert model.startswith("model: scripted_replies:reply"), failed.err
    assert error.startswith("error: the turn ended on an error: model_function: "), error
    assert words in error, error


def test_chat_talks_to_the_function_in_a_terminal(env: dict[str, str], agent: Path) -> None:
    with chat_in_a_terminal(env, "--agent", str(agent), columns=100) as chat:
        assert chat.until(rb"Write a message"), chat.tail
        chat.write(b"weather in Bergen?\r")
        assert chat.until(rb"In Bergen the sky is"), chat.tail
        chat.write(b"\x03")  # ctrl+c
        assert chat.exit_code() == 0, chat.tail
    (listed,) = agentos(env, "sessions", "--json").lines
    shown_session = agentos(env, "show", listed["session_id"], "--json").json
    said = [entry["text"] for entry in shown_session["chat"] if entry["role"] == "agent"]
    assert said[-1].startswith("In Bergen the sky is"), said


def test_serve_answers_the_page_with_the_function(env: dict[str, str], agent: Path) -> None:
    state, said = asked_on_the_page(
        env, str(agent), "weather in Oslo?", "In Oslo the sky is clear."
    )
    assert said[0] == "model: scripted_replies:reply (offline: a function you script)\n"
    assert [(entry["role"], entry["text"]) for entry in state["chat"]] == [
        ("user", "weather in Oslo?"),
        ("agent", "Let me look."),
        ("agent", "In Oslo the sky is clear."),
    ]
    assert state["errors"] == []
