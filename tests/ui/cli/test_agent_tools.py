"""The command line with an agent's own tools: the docs' example agent (a module's tools
and an MCP server, ``model = "test"``) run end to end, and each way an agent file's tools
can fail named in one line, exit 2, nothing left running."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.cli import agentos
from tests.support.mcp_servers import SERVERS

EXAMPLE = ROOT / "examples" / "own_tools"
SILENT_SERVER = SERVERS / "silent_server.py"


def test_the_example_agent_runs_every_tool_and_its_calls_show_their_progress(
    env: dict[str, str],
) -> None:
    run = agentos(env, "run", "--agent", str(EXAMPLE / "agent.toml"), "go", "--wait-for-async")
    assert run.code == 0, run
    answer = run.json["answer"]
    assert 'summarize: {"result": "three notes on example"}' in answer
    assert "word_count: 1" in answer and "weather: {" in answer
    assert "model: test" in run.err
    calls = {row["tool_name"]: row for row in agentos(env, "calls", run.json["session_id"]).lines}
    assert set(calls) == {"summarize", "weather", "word_count"}
    summarize = calls["summarize"]
    assert summarize["status"] == "completed"
    assert summarize["progress"] == {
        "progress": 3.0,
        "total": 3.0,
        "percent": 100.0,
        "text": "reading part 3 of 3",
    }
    again = agentos(env, "resume", run.json["session_id"], "--message", "once more")
    assert again.code == 0, again  # the stored agent's module and server, found again
    assert 'summarize: {"result": "three notes on example"}' in again.json["answer"]


def test_the_docs_show_the_example_as_it_is() -> None:
    shown = (ROOT / "README.md").read_text() + (ROOT / "docs" / "mcp.md").read_text()
    for name in ("agent.toml", "my_tools.py", "notes_server.py"):
        assert (EXAMPLE / name).read_text() in shown, name


@pytest.mark.parametrize(
    ("agent", "says"),
    [
        ('tools = ["no_such_module.tools"]', "tools[0]: 'no_such_module.tools': cannot import"),
        ('tools = ["json"]', "tools[0]: 'json': the module json has no tools at its top level"),
        (
            'tools = ["tests.support.tools", "tests.support.tools_again"]',
            "tools[1]: 'tests.support.tools_again' gives",
        ),
        (
            '[mcp_servers.files]\ncommand = "python"\nargs = ["-c", "import sys; sys.exit(5)"]',
            "mcp_servers.files: exited (code 5) before answering initialize",
        ),
        ('[mcp_servers.files]\ncommand = "/no/such/server"', "mcp_servers.files.command: cannot"),
        ('[mcp_servers.x]\nurl = "ftp://x"', "mcp_servers.x.url: 'ftp://x' is not an http://"),
        ('[mcp_servers.x]\ncommand = "a"\nurl = "http://b"', "give exactly one of command"),
    ],
)
def test_an_agent_files_tools_that_fail_are_one_line_and_exit_2(
    env: dict[str, str], tmp_path: Path, agent: str, says: str
) -> None:
    path = tmp_path / "agent.toml"
    path.write_text(agent + "\n")
    agentos(env, "run", "--agent", str(path), "hi").one_line_error(2, says)


def test_a_server_that_never_answers_is_cut_at_its_bound_and_stopped(
    env: dict[str, str], tmp_path: Path
) -> None:
    pid_file = tmp_path / "pid"
    path = tmp_path / "agent.toml"
    path.write_text(
        "[mcp_servers.silent]\n"
        f"command = {sys.executable!r}\n"
        f"args = [{str(SILENT_SERVER)!r}, {str(pid_file)!r}]\n"
        "start_timeout = 0.5\n"
    )
    agentos(env, "run", "--agent", str(path), "hi").one_line_error(
        2, "mcp_servers.silent: did not answer initialize and tools/list within 0.5 s"
    )
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)
