"""The command line runs an agent's Python tools on Ray when its file says
``isolated_runner = "ray"`` (and ``run_isolated``): the calls run in Ray's worker
processes, which import the tools' module from beside the agent file as the command does;
without Ray installed, the file is refused in one line naming the setting."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests._cli import ROOT, agentos, env

__all__ = ["env"]  # fixtures

ON_RAY = """
name = "on-ray"
model = "test"
tools = ["tests._pid_tools"]
isolated_runner = "ray"

[policy]
default = "run_isolated"
"""


def test_an_agent_files_tools_run_in_rays_workers(env: dict[str, str], tmp_path: Path) -> None:
    agent = tmp_path / "agent.toml"  # its module beside it: the workers find it there too
    agent.write_text(ON_RAY.replace("tests._pid_tools", "my_pid_tools"))
    (tmp_path / "my_pid_tools.py").write_text((ROOT / "tests" / "_pid_tools.py").read_text())
    done = agentos(env, "run", "--agent", str(agent), "go", "--wait-for-async")
    assert done.code == 0, done
    answer = done.json["answer"]
    assert answer.startswith("whoami: "), answer
    ran_in = json.loads(answer.removeprefix("whoami: "))
    assert ran_in["parent"] != os.getpid()  # not the command's process, which this test started
    calls = agentos(env, "calls", done.json["session_id"]).lines
    assert [(c["tool_name"], c["status"]) for c in calls] == [("whoami", "completed")]


def test_without_ray_the_agent_file_is_refused_naming_the_setting(
    env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "__init__.py").write_text('raise ImportError("no Ray here")\n')
    agent = tmp_path / "agent.toml"
    agent.write_text(ON_RAY)
    refused = agentos({**env, "PYTHONPATH": str(tmp_path)}, "run", "--agent", str(agent), "go")
    refused.one_line_error(2, "isolated_runner = 'ray' needs Ray", "agentos[ray]")
