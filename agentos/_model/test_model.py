"""``TestModel``: an offline model that smoke-tests an agent's tools (``model = "test"``).

Its first reply calls every tool the request offers once (but those it is told to
skip, such as the capabilities), with arguments made from each tool's schema; once
every call has an outcome it replies with a text quoting each one. Like Pydantic AI's
``TestModel``: a whole agent file runs without a key, and every tool is exercised.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from agentos._model.messages import Block
from agentos._model.messages import Message
from agentos._model.messages import blocks_of
from agentos._model.messages import content_text
from agentos._model.provider import ModelRequest
from agentos._model.provider import ModelResponse
from agentos._model.provider import text
from agentos._model.schema_examples import example_arguments
from agentos._model.transcript_marks import PLACEHOLDER_KEY

PREFIX = "toolu_test_"
"""The ids of this model's tool uses start so: ``toolu_test_<round>_<n>``."""

_NOTICE = "[tool call "  # how agentos starts a late outcome or an overdue notice it sends
_LATE = re.compile(r"^\[tool call (\S+) \((.*?)\) finished: (\w+)\] (.*)$", re.DOTALL)
# A board request (context_view = "board") draws the conversation as one text: its turn's
# node is the one a ``>> turn for #N`` line names, else the last; its calls are drawn below.
_NODE = re.compile(r"^ *(?:ok|\.\.) #(\d+)(?: \(re .*?\))? (user|agent)\b")
_POINTER = re.compile(r"^>> turn for #(\d+)")
_CALL = re.compile(r"^call #\d+ ([^(\s]+)\(.*?\) (completed|failed|cancelled|orphaned)(?:: (.*))?$")


class TestModel:
    """Calls every offered tool once (but ``skip``), then quotes every result."""

    __test__ = False  # not a pytest test class
    name = "test"

    def __init__(self, skip: Collection[str] = ()) -> None:
        self.skip = frozenset(skip)
        self.answered = 0

    async def aclose(self) -> None:
        """Nothing to give back: it answers from the request alone."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.answered += 1
        board = _board_turn(request)
        if board is not None:
            node, author, calls = board
            if author == "user":
                return self._call_everything(request, node)
            return _quote_board(calls)
        messages = list(request.messages)
        since = messages[_last_plain_text(messages) :]
        called = _called(since)
        if not called:
            return self._call_everything(request, _rounds(messages) + 1)
        outcomes = _outcomes(since)
        waiting = [name for use_id, name in called.items() if use_id not in outcomes]
        if waiting:
            return text(f"waiting for: {', '.join(waiting)}")
        return text("\n".join(f"{name}: {outcomes[use_id]}" for use_id, name in called.items()))

    def _call_everything(self, request: ModelRequest, round_: int) -> ModelResponse:
        tools = [t for t in request.tools if t.get("name") not in self.skip]
        if not tools:
            return text("this agent has no tools to call")
        content: list[Block] = [
            {
                "type": "tool_use",
                "id": f"{PREFIX}{round_}_{index}",
                "name": str(definition["name"]),
                "input": example_arguments(definition.get("input_schema") or {}),
            }
            for index, definition in enumerate(tools, start=1)
        ]
        return ModelResponse(content, "tool_use")


def _last_plain_text(messages: Sequence[Message]) -> int:
    """The index of the last user message with text a person wrote (not a notice), or 0."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "user" and any(
            block.get("type") == "text" and not str(block.get("text", "")).startswith(_NOTICE)
            for block in blocks_of(messages[index])
        ):
            return index
    return 0


def _own_uses(messages: Sequence[Message]) -> list[Block]:
    return [
        block
        for message in messages
        if message.get("role") == "assistant"
        for block in blocks_of(message)
        if block.get("type") == "tool_use" and str(block.get("id", "")).startswith(PREFIX)
    ]


def _called(messages: Sequence[Message]) -> dict[str, str]:
    """The tool uses this model made in ``messages``: id to tool name, in order."""
    return {str(block["id"]): str(block.get("name")) for block in _own_uses(messages)}


def _rounds(messages: Sequence[Message]) -> int:
    """How many replies of tool uses this model made in the whole conversation."""
    return sum(
        1 for message in messages if message.get("role") == "assistant" and _own_uses([message])
    )


def _outcomes(messages: Sequence[Message]) -> dict[str, str]:
    """Each call's outcome as it is quoted: a tool_result that is not a placeholder, or
    the message that told it late; an error's starts ``error: ``."""
    found: dict[str, str] = {}
    for message in messages:
        if message.get("role") != "user":
            continue
        for block in blocks_of(message):
            if block.get("type") == "tool_result":
                said = _said(block.get("content"))
                if not _placeholder(said):
                    use_id = str(block.get("tool_use_id"))
                    found[use_id] = f"error: {said}" if block.get("is_error") else said
            elif block.get("type") == "text":
                late = _LATE.match(str(block.get("text", "")))
                if late is not None:
                    found[late[1]] = late[4].removeprefix("result: ")
    return found


def _said(content: object) -> str:
    """A tool_result's content as text: text blocks as they are, others as ``[image]``."""
    if isinstance(content, list):
        return content_text(b for b in content if isinstance(b, Mapping))
    return "" if content is None else str(content)


def _placeholder(said: str) -> bool:
    try:
        value = json.loads(said)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get(PLACEHOLDER_KEY) is True


def _board_turn(request: ModelRequest) -> tuple[int, str, list[str]] | None:
    """A board request's turn: its node, who wrote it, the call lines below it (None: not
    a board request, which is one user message of text drawing nodes)."""
    if len(request.messages) != 1 or request.messages[0].get("role") != "user":
        return None
    blocks = blocks_of(request.messages[0])
    if any(block.get("type") != "text" for block in blocks):
        return None
    lines = "".join(str(block.get("text", "")) for block in blocks).rstrip("\n").split("\n")
    pointer = _POINTER.match(lines[-1])
    heads = [(at, head) for at, head in enumerate(map(_NODE.match, lines)) if head is not None]
    if pointer is not None:
        heads = [(at, head) for at, head in heads if head[1] == pointer[1]] or heads
    if not heads:
        return None
    at, head = heads[-1]
    calls = []
    for line in lines[at + 1 :]:
        if not line.lstrip().startswith("call #"):
            break
        calls.append(line.strip())
    return int(head[1]), head[2], calls


def _quote_board(calls: list[str]) -> ModelResponse:
    """The board's call lines quoted as ``name: result`` (``name: error: ...``)."""
    lines, waiting = [], []
    for line in calls:
        found = _CALL.match(line)
        if found is None:
            waiting.append(line.removeprefix("call #").split(" ", 1)[-1].split("(", 1)[0])
            continue
        name, status = found[1], found[2]
        outcome = status if found[3] is None else _unquote(found[3])
        lines.append(f"{name}: {outcome}" if status == "completed" else f"{name}: error: {outcome}")
    if waiting:
        return text(f"waiting for: {', '.join(waiting)}")
    return text("\n".join(lines) or "nothing to quote")


def _unquote(drawn: str) -> str:
    """A board's quoted outcome (``'EXAMPLE'``) as the text it quotes."""
    try:
        value: Any = ast.literal_eval(drawn)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return drawn
    return value if isinstance(value, str) else drawn
