"""The archivist's model: a function agentos asks every turn (``model = "replies:reply"``).

It gets the conversation so far as entries (``Said``, ``ToolCall``, ``ToolResult``) and
answers what is new since it last spoke: a result first (the placeholder of a call still
running, a capability's answer, a late outcome), else what the person said.
"""

from __future__ import annotations

from agentos import CallStatus
from agentos.testing import FunctionRequest
from agentos.testing import ToolCall
from agentos.testing import ToolResult


def reply(request: FunctionRequest) -> str | ToolCall | list[str | ToolCall]:
    for entry in request.new:
        if isinstance(entry, ToolResult):
            return about(entry)
    asked = request.user_text.lower()
    running = request.running("download")
    if "cancel" in asked:
        if not running:
            return "Nothing is downloading, so there is nothing to cancel."
        return ToolCall("cancel_tool_call", {"tool_call_id": running[0].call_id})
    if "download" in asked:
        year = next((int(word) for word in asked.split() if word.isdigit()), 2024)
        return [
            f"Starting the download of the {year} archive.",
            ToolCall("download", {"year": year}),
        ]
    if "leap year" in asked:
        return "366." + (" (The download is still running.)" if running else "")
    return "I fetch yearly archives: say which year, and I download it."


def about(result: ToolResult) -> str:
    """What the model says of a result it was just told."""
    if result.tool == "cancel_tool_call":
        assert isinstance(result.value, dict)
        if result.value["cancelled"]:
            return f"Cancelled the download (it was {result.value['previous_status']})."
        return "The download had already ended."
    if not result.is_final:
        return "It is downloading in the background; ask me anything meanwhile."
    if result.status is CallStatus.COMPLETED and isinstance(result.value, dict):
        return f"The {result.value['year']} archive is here: {result.value['mb']} MB."
    return f"The download ended {result.status}: {result.error}"
