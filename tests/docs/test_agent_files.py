"""docs/agent-files.md says what the code does (issue 30): its reference is written from
the settings (``python docs/agent_file.py``) and names every one of them, below a part
written by hand that the script keeps (issue 47); the example agent files load and run
offline through the command line."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from agentos import AgentConfig
from tests.support import ROOT
from tests.support.cli import agentos

EXAMPLES = ("agent.toml", "board.toml")


def agent_file() -> ModuleType:
    """``docs/agent_file.py``, the script that writes the page's reference."""
    spec = importlib.util.spec_from_file_location("agent_file", ROOT / "docs" / "agent_file.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_page_is_the_one_the_settings_write() -> None:
    module = agent_file()
    written = (ROOT / "docs" / "agent-files.md").read_text()
    assert written == module.page(written), "stale: run 'python docs/agent_file.py'"
    reference = written.split(module.MARKER, 1)[1]
    for name in AgentConfig.model_fields:
        assert f"| `{name}` |" in reference, name


def test_the_script_keeps_the_hand_written_part_and_refuses_a_page_without_it() -> None:
    module = agent_file()
    rewritten = module.page(f"# Agents\n\nSaid by hand.\n\n{module.MARKER}\n\nold tables\n")
    assert rewritten.startswith(f"# Agents\n\nSaid by hand.\n\n{module.MARKER}\n\n## Settings")
    assert "old tables" not in rewritten
    with pytest.raises(ValueError, match="lacks the line that ends its hand-written part"):
        module.page("# Agents\n")


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
