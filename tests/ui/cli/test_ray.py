"""The command line runs an agent's Python tools on Ray when its file says
``isolated_runner = "ray"`` (and ``run_isolated``): the calls run in Ray's worker
processes, which import the tools' module from beside the agent file as the command does;
nothing of Ray's own (its log lines, what a worker prints) reaches the command's output;
without Ray installed, the file is refused in one line naming the setting."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.cli import Result
from tests.support.cli import agentos
from tests.support.ray_tools import RAY_TESTS

pytestmark = RAY_TESTS

ON_RAY = """
name = "on-ray"
model = "test"
tools = ["tests.support.pid_tools"]
isolated_runner = "ray"

[policy]
default = "run_isolated"
"""


@pytest.fixture(scope="module")
def ran_on_ray(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, dict[str, str]]:
    """``agentos run`` of an agent whose tools run on Ray (one that says which process ran
    it, one that talks on every channel a worker has), once for the module (Ray takes
    seconds to start); its result and environment."""
    folder = tmp_path_factory.mktemp("on_ray")
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in {"ANTHROPIC_API_KEY", "AGENTOS_DEBUG", "AGENTOS_DB"}
    }
    environment["AGENTOS_DB"] = str(folder / "agentos.db")
    agent = folder / "agent.toml"  # its modules beside it: the workers find them there too
    agent.write_text(
        ON_RAY.replace('"tests.support.pid_tools"', '"my_pid_tools", "my_chatty_tools"')
    )
    for module in ("pid_tools", "chatty_tools"):
        (folder / f"my_{module}.py").write_text(
            (ROOT / "tests" / "support" / f"{module}.py").read_text()
        )
    return agentos(environment, "run", "--agent", str(agent), "go", "--wait-for-async"), environment


def test_an_agent_files_tools_run_in_rays_workers(
    ran_on_ray: tuple[Result, dict[str, str]],
) -> None:
    done, environment = ran_on_ray
    assert done.code == 0, done
    said = dict(line.split(": ", 1) for line in done.json["answer"].splitlines())
    assert said["chatter"] == "said", said
    ran_in = json.loads(said["whoami"])
    assert ran_in["parent"] != os.getpid()  # not the command's process, which this test started
    calls = agentos(environment, "calls", done.json["session_id"]).lines
    assert sorted((c["tool_name"], c["status"]) for c in calls) == [
        ("chatter", "completed"),
        ("whoami", "completed"),
    ]


def test_rays_own_output_never_lands_among_the_json_lines(
    ran_on_ray: tuple[Result, dict[str, str]],
) -> None:
    """Stdout is the run's one JSON object, stderr agentos's 'model:' line and then JSON
    lines only: none of Ray's log lines as it starts (its warnings, 'Started a local Ray
    instance'), and none of what a tool in a worker prints, warns or logs."""
    done, _ = ran_on_ray
    assert done.code == 0, done
    assert len(done.out.splitlines()) == 1 and isinstance(done.json, dict), done.out
    model, *events = done.err.splitlines()
    assert model.startswith("model: test"), done.err
    not_json = [line for line in events if not _a_json_object(line)]
    assert not not_json, done.err
    assert "chatter on" not in done.err + done.out and "chatter warns" not in done.err


def _a_json_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def test_without_ray_the_agent_file_is_refused_naming_the_setting(
    env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "__init__.py").write_text('raise ImportError("no Ray here")\n')
    agent = tmp_path / "agent.toml"
    agent.write_text(ON_RAY)
    refused = agentos({**env, "PYTHONPATH": str(tmp_path)}, "run", "--agent", str(agent), "go")
    refused.one_line_error(2, "isolated_runner = 'ray' needs Ray", "agentos[ray]")
