"""The Messages API's wire shapes: messages and content blocks as plain JSON dicts.

Both the model backends and the session read and write these shapes, so they
live below both: a transcript can be sent, stored and compared as it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any
from typing import Literal
from typing import NotRequired
from typing import TypedDict

from components import Json

Block = dict[str, Any]
"""A content block, as the Messages API shapes it (``text``, ``tool_use``, ``tool_result``...)."""


class Message(TypedDict):
    role: Literal["user", "assistant"]
    content: Any


"""One message of a conversation, as the Messages API takes it. ``content`` is the text or
a list of ``Block``s; it stays ``Any`` because histories arrive as JSON (a store, a user's
file) and both forms are valid. (Written as a call so its hints resolve at run time.)"""


class TextBlock(TypedDict):
    type: Literal["text"]
    text: str


class ToolResultBlock(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str
    content: str | list[dict[str, Any]]
    is_error: NotRequired[bool]


UserBlock = TextBlock | ToolResultBlock
"""A block agentos writes into a user turn."""


def text_block(text: str) -> TextBlock:
    return {"type": "text", "text": text}


CONTENT_RESULT = "tool_content"
"""The ``type`` of a call's result that carries content blocks (images, documents) for the
model: ``{"type": "tool_content", "content": [blocks]}``."""


def content_blocks(value: object) -> list[dict[str, Any]] | None:
    """The blocks of a result that carries them (``CONTENT_RESULT``), else None."""
    if type(value) is dict and value.get("type") == CONTENT_RESULT:  # a JSON result: a dict
        blocks = value.get("content")
        if isinstance(blocks, list) and all(isinstance(b, dict) for b in blocks):
            return blocks
    return None


def content_text(blocks: Iterable[Mapping[str, Any]]) -> str:
    """Content blocks as text, for what reads results as text (the board, a person):
    text blocks as they are, others by their type (``[image]``)."""
    return "\n".join(
        str(b.get("text", "")) if b.get("type") == "text" else f"[{b.get('type')}]" for b in blocks
    )


def tool_result(
    tool_use_id: str, content: str | list[dict[str, Any]], *, error: bool = False
) -> ToolResultBlock:
    block: ToolResultBlock = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if error:
        block["is_error"] = True
    return block


def blocks_of(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A message's content blocks (a plain string is one text block)."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or () if isinstance(b, dict)]


def text_of(blocks: Iterable[object]) -> str:
    """The text blocks among ``blocks``, joined."""
    return "".join(
        str(block.get("text", ""))
        for block in blocks
        if isinstance(block, Mapping) and block.get("type") == "text"
    )


def content_value(content: object) -> Json:
    """A tool_result's content as JSON: text blocks joined, parsed when the text is JSON."""
    if isinstance(content, list):
        content = text_of(content)
    if not isinstance(content, str):
        return None
    try:
        parsed: Json = json.loads(content)
    except ValueError:
        return content
    return parsed
