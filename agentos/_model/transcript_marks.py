"""The marks agentos writes into a conversation's texts, kept where every layer that reads
them can import them: ``agentos/_turns/transcript.py`` writes them, and the function
model's ``FunctionRequest`` (and the test model) below it read them back, so none of them
keeps a copy that could drift."""

from __future__ import annotations

import re

PLACEHOLDER_KEY = "agentos_placeholder"
"""A ``tool_result`` whose JSON content has this key true stands in for a call still running."""

LOST_RESULT = "lost in a restart: the call no longer exists"
"""The error result of a call the history holds but a restart lost."""

OUTCOME = re.compile(
    r"^\[tool call (?P<id>\S+) \((?P<tool>[^)]*)\) finished: "
    r"(?P<status>completed|failed|cancelled|orphaned)\] (?P<kind>result|error): (?P<rest>.*)$",
    re.DOTALL,
)
"""A late outcome: ``[tool call ID (tool) finished: STATUS] result: ...`` or ``error: ...``."""

OVERDUE = re.compile(r"^\[tool call (?P<id>\S+) is overdue: (?:it has run (?P<ran>\d+) s)?")
"""The runtime's nudge about a call running past its interval."""
