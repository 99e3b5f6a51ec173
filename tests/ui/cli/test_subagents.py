"""The docs' sub-agent example run through the command line: a lead agent whose one tool
is a researcher agent, both on the offline ``test`` model; ``agentos calls`` draws the tree."""

from __future__ import annotations

from tests.support import ROOT
from tests.support.cli import agentos

EXAMPLE = ROOT / "examples" / "subagents"


def test_the_lead_answers_from_its_researcher_and_calls_shows_the_tree(
    env: dict[str, str],
) -> None:
    run = agentos(
        env, "run", "--agent", str(EXAMPLE / "lead.toml"), "plan a trip", "--wait-for-async"
    )
    assert run.code == 0, run
    answer = run.json["answer"]
    assert answer.startswith("researcher: weather: {")  # the lead quotes its child's answer
    said = [e["progress"] for e in run.events if e["event"] == "progressed"]
    assert {"tool_name": "weather", "status": "completed"}.items() <= said[1].items()
    assert said[-1] == {"said": answer.removeprefix("researcher: ")}  # the child's own words
    tree = agentos(env, "calls", run.json["session_id"]).lines
    assert [(c["depth"], c["tool_name"], c["status"]) for c in tree] == [
        (0, "researcher", "completed"),
        (1, "weather", "completed"),
    ]
    child = tree[1]["session_id"]
    assert child == f"researcher-{tree[0]['call_id']}"
    sessions = {s["session_id"]: s for s in agentos(env, "sessions").lines}
    assert sessions[child]["parent_session_id"] == run.json["session_id"]


def test_the_docs_show_the_example_as_it_is() -> None:
    page = (ROOT / "docs" / "subagents.md").read_text()
    for name in ("lead.toml", "researcher.toml"):
        assert (EXAMPLE / name).read_text() in page, name
