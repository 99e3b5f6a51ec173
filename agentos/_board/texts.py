"""The words of a board session: what the machine says on the board, and how it reads
the model's calls and the runtime's outcomes (``machine`` uses them)."""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Collection

from agentos._board.board import CANCEL_TOOL
from agentos._board.board import NEW_THREAD_TOOL
from agentos._board.board import STATUS_TOOL
from agentos._board.board import BoardCall
from agentos._board.board import BoardRendering
from agentos._model.messages import Block
from agentos._model.messages import Message
from agentos._model.messages import content_blocks
from agentos._model.messages import content_text
from agentos._model.messages import content_value
from agentos._turns.agent_config import AgentConfig
from agentos._turns.call_ledger import failure_text
from agentos._turns.capabilities import CAPABILITIES
from agentos._turns.transcript import overdue_evidence
from components import CallSnapshot
from components import CallStatus
from components import OverdueNews

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


def out_of_retries(tool: str, attempts: int) -> str:
    """A cancel's answer once the branch's budget for ``tool`` is spent: nothing left to try
    here, so ask the person (and no pointer line contradicts it)."""
    tried = "1 attempt" if attempts == 1 else f"{attempts} attempts"
    return (
        f"Out of retries: {tried} at {tool} on this branch were stopped. Do not start it "
        f"again here: open a new thread with {NEW_THREAD_TOOL}(text) to tell the user what "
        "happened and ask how to proceed."
    )


def not_started(tool: str, capabilities: list[str]) -> str:
    """A background call asked in the same step as a synchronous capability: the answers
    come first, and the model may ask for the call again with them in hand."""
    return (
        f"not started: {tool} was asked in the same turn as {', '.join(capabilities)}, whose "
        "answer is on the board now; ask for it again if it is still wanted"
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


def refusal(use: Block, config: AgentConfig, may_call: Callable[[str], bool]) -> str | None:
    """Why a call the model asked for is not made (None: it is)."""
    name = str(use["name"])
    if not name:
        return "a tool call needs a tool name"
    if name == NEW_THREAD_TOOL:
        text = use["input"].get("text")
        return None if isinstance(text, str) and text.strip() else "new_thread needs a text"
    if name in CAPABILITIES:
        return None if name in config.capabilities else f"{name!r} is not available"
    if not may_call(name):
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
    blocks = content_blocks(result)
    if blocks is not None:
        return content_text(blocks)
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def overdue_note(
    call: BoardCall,
    seconds: float | None,
    estimated: bool,
    capabilities: Collection[str],
    news: OverdueNews | None = None,
) -> str:
    """Only here, never in the system prompt or a tool's description: the call, the
    interval it ran past, how long it ran and its progress, and the suggestion to look and
    maybe stop (knowing when to give up)."""
    if seconds is None:
        interval = "longer than expected"
    elif estimated:
        interval = f"past the {seconds:g} s you expected it to take"
    else:
        interval = f"past {seconds:g} s (the default, as you gave no expected_seconds)"
    look = f"Inspect it with {STATUS_TOOL} and decide" if STATUS_TOOL in capabilities else "Decide"
    stop = f" or stop it with {CANCEL_TOOL}" if CANCEL_TOOL in capabilities else ""
    again = "you will be asked again after as long again"
    if news is not None and news.next_seconds is not None:
        again = f"you will be asked again in {news.next_seconds:.0f} s"
    evidence = "" if news is None else f" Now {overdue_evidence(news, again=False)}"
    return (
        f"call #{call.display_id} ({call.tool_name}) has run {interval}.{evidence} {look}: "
        f"leave it running ({again}){stop}."
    )


def ended_note(call: BoardCall) -> str:
    """An overdue turn whose call ended before the request went out."""
    return f"call #{call.display_id} ({call.tool_name}) has ended; its outcome is on the board."
