"""The demo's board session (dana): its agent and the scripted model that reads a board.

The model's one user message is the rendered board; these rules key on the
turn's note (its last line) and the post above it, and when a node's calls have
all landed they read the calls' results off the board to answer.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from agentos import (
    AgentConfig,
    ModelRequest,
    ModelResponse,
    ScriptedProvider,
)
from agentos.demo.tools import answer_of, brief
from agentos.testing import last_user_text, text, tool_calls

BOARD_AGENT = AgentConfig(
    name="demo-board",
    system_prompt="You help people plan. Tools are slow; keep talking while they run.",
    context_view="board",
)


def _board_lines(request: ModelRequest) -> list[str]:
    """The board a board session's model reads (its one user message), line by line."""
    return last_user_text(request).rstrip().split("\n")


def _board_asked(phrase: str) -> Callable[[ModelRequest], bool]:
    """The turn is for a user post (the note's line) whose text (the line above) says ``phrase``."""

    def asked(request: ModelRequest) -> bool:
        lines = _board_lines(request)
        return len(lines) > 1 and "the user wrote" in lines[-1] and phrase in lines[-2].lower()

    return asked


FINISHED = re.compile(r"every call of (#\d+) has finished")
COMPLETED = re.compile(r"^\s*call #\d+ (\w+)\(.*?\) completed: (.*)$")


def _finished_calls(request: ModelRequest) -> list[tuple[str, Any]]:
    """``(tool, result)`` of each completed call of the node the turn is for (the note names it).

    A call's line sits under its node's line (``ok #2 agent ...``), its outcome quoted."""
    lines = _board_lines(request)
    focus = FINISHED.search(lines[-1])
    if focus is None:
        return []
    node = re.compile(rf"^\s*\S+ {focus.group(1)} agent\b")
    head = next((i for i, line in enumerate(lines) if node.match(line)), len(lines))
    found = []
    for line in lines[head + 1 :]:
        if not line.lstrip().startswith("call #"):
            break
        completed = COMPLETED.match(line)
        if completed:
            outcome = ast.literal_eval(completed.group(2))
            found.append((completed.group(1), answer_of({"content": outcome})))
    return found


def _landed(request: ModelRequest) -> ModelResponse:
    """The turn after a node's calls all ended: the weather, or when the calendars meet."""
    results = _finished_calls(request)
    calendars = [value for tool, value in results if tool == "fetch_calendar"]
    if not calendars:
        return text(" ".join(brief(value) for _, value in results) or "That did not work.")
    common = [slot for slot in calendars[0]["free"] if all(slot in c["free"] for c in calendars)]
    people = " and ".join(str(c["person"]) for c in calendars)
    if not common:
        return text(f"{people} have no free time in common today.")
    return text(f"{people} can meet at {common[0]}; they are both free then.")


def board_model() -> ScriptedProvider:
    """Dana's model offline: rules keyed on the board's last lines (the turn's note, the post)."""
    return ScriptedProvider(
        (
            _board_asked("ann and ben"),
            lambda r: tool_calls(
                ("fetch_calendar", {"person": "Ann", "seconds": 0.6}),
                ("fetch_calendar", {"person": "Ben", "seconds": 0.9}),
                say="Reading both calendars at once.",
            ),
        ),
        (_board_asked("weather"), lambda r: tool_calls(("weather", {"city": "Bergen"}))),
        (lambda r: bool(FINISHED.search(_board_lines(r)[-1])), _landed),
        (lambda r: True, lambda r: text("Noted.")),
        keep_requests=False,
    )
