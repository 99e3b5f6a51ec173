"""docs/cli.md's first block, a session from start to end, run line by line as a new user
would type it.

Placeholders are filled from what earlier lines printed: SESSION and TOKEN
from the run that left calls pending, CALL_ID from its calendar lookup.
"""

from __future__ import annotations

import shlex

from tests.support import ROOT
from tests.support.cli import Result
from tests.support.cli import agentos


def page_commands() -> list[list[str]]:
    """The page's first ``agentos`` command lines, split as a shell would, without comments."""
    text = (ROOT / "docs" / "cli.md").read_text()
    block = text.split("```sh\n", 1)[1].split("```\n", 1)[0]
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


def test_the_pages_commands_run_as_documented(env: dict[str, str]) -> None:
    commands = page_commands()
    assert [words[1] for words in commands] == [
        "run", "run", "complete", "resume", "say", "rename", "status", "cancel", "sessions",
        "show", "calls",
    ]  # fmt: skip
    names: dict[str, str] = {}
    results: list[Result] = []
    for words in commands:
        assert words[0] == "agentos"
        result = agentos(env, *(names.get(word, word) for word in words[1:]))
        assert "Traceback" not in result.err, result
        results.append(result)
        if words[1] == "run" and result.code == 3:
            left = {call["tool_name"]: call for call in result.json["pending_calls"]}
            names["SESSION"] = result.json["session_id"]
            names["TOKEN"] = left["approve"]["continuation_token"]
            names["CALL_ID"] = left["fetch_calendar"]["call_id"]
    meet, pending, complete, resume, say, rename, status, cancel, sessions, show, calls = results
    assert meet.code == 0, meet
    assert any("Jane is free" in m for m in meet.json["messages"])
    assert any("Jack is free" in m for m in meet.json["messages"])
    assert pending.code == 3 and len(pending.json["next_steps"]) == 2, pending
    assert (complete.code, complete.out) == (0, "applied\n"), complete
    assert resume.code == 0 and "approved" in resume.json["answer"], resume
    assert say.code == 0 and say.json["session_id"] == names["SESSION"], say
    assert status.code == 0 and status.json["status"] == "orphaned", status
    cancel.one_line_error(1, "not running anywhere")
    assert (rename.code, rename.out) == (0, "Trip approval\n"), rename
    assert sessions.code == 0 and len(sessions.lines) == 2, sessions
    titles = {row["session_id"]: row["title"] for row in sessions.lines}
    assert titles[names["SESSION"]] == "Trip approval"
    assert show.code == 0 and show.json["session_id"] == names["SESSION"], show
    assert calls.code == 0 and [c["tool_name"] for c in calls.lines] == [
        "fetch_calendar",
        "approve",
    ]
