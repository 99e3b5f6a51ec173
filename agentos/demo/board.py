"""The demo's board session (dana): its agent and the scripted model that reads a board.

The model's one user message is the rendered board; these rules read which node
the turn is for (``read_turn``): a user post's words, or, when an agent node's
calls have all landed, the calls' results, to answer.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from agentos import AgentConfig
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import ScriptedProvider
from agentos.board import BoardTurn
from agentos.board import read_turn
from agentos.demo.tools import answer_of
from agentos.demo.tools import brief
from agentos.testing import last_user_text
from agentos.testing import text
from agentos.testing import tool_calls

BOARD_AGENT = AgentConfig(
    name="demo-board",
    system_prompt="You help people plan. Tools are slow; keep talking while they run.",
    context_view="board",
)


def _turn(request: ModelRequest) -> BoardTurn | None:
    """The node a board request's turn is for, read off the board (its one user message)."""
    return read_turn(last_user_text(request))


def _board_asked(phrase: str) -> Callable[[ModelRequest], bool]:
    """The turn is for a user post whose text says ``phrase``."""

    def asked(request: ModelRequest) -> bool:
        turn = _turn(request)
        return turn is not None and turn.author == "user" and phrase in turn.text.lower()

    return asked


COMPLETED = re.compile(r"^call #\d+ (\w+)\(.*?\) completed: (.*)$")


def _finished_calls(request: ModelRequest) -> list[tuple[str, Any]]:
    """``(tool, result)`` of each completed call of the agent node the turn is for, once
    none of its calls runs (its result turn); [] otherwise."""
    turn = _turn(request)
    if turn is None or turn.author != "agent" or any(" as id " in c for c in turn.calls):
        return []
    found = []
    for line in turn.calls:
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
    """Dana's model offline: rules keyed on the node the turn is for."""
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
        (lambda r: bool(_finished_calls(r)), _landed),
        (lambda r: True, lambda r: text("Noted.")),
        keep_requests=False,
    )


if __name__ == "__main__":
    from agentos.demo import not_a_program

    raise not_a_program(__spec__.name, "the demo's board agent (dana's session)")
