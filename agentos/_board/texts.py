"""The words of a board session: what the machine says on the board, and how it reads
the model's calls and the runtime's outcomes (``machine`` uses them)."""

from __future__ import annotations

import json

from agentos._board.board import NEW_THREAD_TOOL, BoardCall, BoardNode, BoardRendering
from agentos._model.messages import Block, Message, content_value
from agentos._turns.agent_config import AgentConfig
from agentos._turns.call_ledger import failure_text
from agentos._turns.capabilities import CAPABILITIES
from components import CallSnapshot, CallStatus

NEW_THREAD_DEFINITION: dict[str, object] = {
    "name": NEW_THREAD_TOOL,
    "description": (
        "Open a new thread on the board with this text, shown to the user: to ask the user "
        "something, or to tell them what a finished thread could not."
    ),
    "input_schema": {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "What the user reads."}},
        "required": ["text"],
    },
}
"""The board's own capability, answered by the machine."""

NOTHING_MOVED = (
    "Nothing has moved since you last looked. You will be told when it does: there is no "
    "need to look again now."
)
LOST_ON_THE_BOARD = "lost in a restart: the call no longer runs; start it again if needed"
OUT_OF_RETRIES = (
    "Out of retries on this branch: do not cancel or start this work again. Open a new thread "
    "with new_thread(text) to tell the user what happened and ask how to proceed."
)


def board_messages(rendering: BoardRendering) -> list[Message]:
    """The board as one user message, a text block per node and one for the note; the
    blocks that end its stable and its settled prefix are marked for the prompt cache (with
    the system prompt's, three of the API's four breakpoints)."""
    text = rendering.text
    marks = {rendering.stable_chars, rendering.settled_chars} - {0}
    blocks: list[Block] = []
    start = 0
    for end in (*rendering.breaks, len(text)):
        if end > start:
            block: Block = {"type": "text", "text": text[start:end]}
            if end in marks:
                block["cache_control"] = {"type": "ephemeral"}
            blocks.append(block)
            start = end
    return [{"role": "user", "content": blocks or [{"type": "text", "text": text}]}]


def refusal(use: Block, config: AgentConfig) -> str | None:
    """Why a call the model asked for is not made (None: it is)."""
    name = str(use["name"])
    if not name:
        return "a tool call needs a tool name"
    if name == NEW_THREAD_TOOL:
        text = use["input"].get("text")
        return None if isinstance(text, str) and text.strip() else "new_thread needs a text"
    if name in CAPABILITIES:
        return None if name in config.capabilities else f"{name!r} is not available"
    if config.tools is not None and name not in config.tools:
        return f"tool {name!r} is not available to this agent"
    return None


def normal_use(use: Block, fallback_id: str) -> Block:
    """A tool_use as the machine reads it: a str id (made up if missing), a str name ("" if
    missing) and an input object (an input that is not one is kept under ``input``)."""
    tool_use_id, name, arguments = use.get("id"), use.get("name"), use.get("input")
    if not isinstance(arguments, dict):
        arguments = {} if arguments is None else {"input": str(arguments)}
    return {
        "type": "tool_use",
        "id": str(tool_use_id)
        if isinstance(tool_use_id, str | int) and tool_use_id != ""
        else fallback_id,
        "name": name if isinstance(name, str) else "",
        "input": dict(arguments),
    }


def said_text(content: object) -> str:
    value = content_value(content)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def outcome_text(snapshot: CallSnapshot) -> str:
    if snapshot.status is not CallStatus.COMPLETED:
        return failure_text(snapshot)
    result = snapshot.result
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def user_note(node: BoardNode) -> str:
    return f"the user wrote #{node.display_id}; answer it."


def overdue_note(call: BoardCall) -> str:
    """Only here, never in the system prompt or a tool's description: the suggestion to
    look and maybe stop (seed 004, "Knowing when to give up")."""
    return (
        f"call #{call.display_id} ({call.tool}) has run longer than expected. Inspect it with "
        "get_tool_call_status and decide: leave it running (you will be asked again) or "
        "stop it with cancel_tool_call."
    )


def ended_note(call: BoardCall) -> str:
    """An overdue turn whose call ended before the request went out."""
    return f"call #{call.display_id} ({call.tool}) has ended; its outcome is on the board."


def result_note(node: BoardNode) -> str:
    return f"every call of #{node.display_id} has finished; their outcomes are on the board."
