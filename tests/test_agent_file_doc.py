"""docs/agent-file.md says what the code does (issue 30): it is written from the settings
(``python docs/agent_file.py``) and names every one of them; the example agent files load
and run offline through the command line."""

from __future__ import annotations

import importlib.util

import pytest

from agentos import AgentConfig
from tests._cli import ROOT, agentos, env

__all__ = ["env"]  # a fixture

EXAMPLES = ("agent.toml", "board.toml")


def test_the_page_is_the_one_the_settings_write() -> None:
    spec = importlib.util.spec_from_file_location("agent_file", ROOT / "docs" / "agent_file.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    written = (ROOT / "docs" / "agent-file.md").read_text()
    assert written == module.page(), "stale: run 'python docs/agent_file.py'"
    for name in AgentConfig.model_fields:
        assert f"| `{name}` |" in written, name


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_example_agent_files_load_and_run_offline(env: dict[str, str], name: str) -> None:
    path = ROOT / "examples" / name
    config = AgentConfig.from_file(path)
    assert config.name in {"planner", "board"}
    asked = "When can Jane and Jack meet? And the weather in Oslo?"
    done = agentos(env, "run", "--agent", str(path), "--wait-for-async", asked)
    assert done.code == 0, done
    said = " ".join(done.json["messages"])
    assert "Jane is free" in said and "Oslo" in said
