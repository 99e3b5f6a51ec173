"""What the model reads next, as a developer reads it: the page's context pane and the
terminal UI's context view draw the same text."""

from __future__ import annotations

import json
from collections.abc import Mapping
from collections.abc import Sequence

from agentos.turns import Message
from agentos.turns import blocks_of


def context_text(messages: Sequence[Message]) -> str:
    """Messages as a developer reads them: each block on its own lines, by role."""
    lines: list[str] = []
    for message in messages:
        role = str(message.get("role", "?"))
        for block in blocks_of(message):
            kind = block.get("type")
            if kind == "text":
                lines.append(f"[{role}] {block.get('text', '')}")
            elif kind == "tool_use":
                lines.append(f"[{role}] tool_use {block.get('name')} {_dump(block.get('input'))}")
            elif kind == "tool_result":
                lines.append(f"[{role}] tool_result {_content_text(block.get('content'))}")
    return "\n".join(lines)


def _content_text(content: object) -> str:
    """A tool result's content as the model reads it: its text, not a JSON-quoted string."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(block.get("text", "")) if isinstance(block, Mapping) else _dump(block)
            for block in content
        )
    return _dump(content)


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
