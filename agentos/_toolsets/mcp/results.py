"""What an MCP tool's result becomes as an agentos call's outcome.

Structured content is the JSON result; else the text blocks, joined. ``isError`` fails
the call with the server's text. Images and resources (a ``text/*`` blob read as its text)
are kept as the typed blocks an Anthropic ``tool_result`` carries, under ``CONTENT_RESULT``
(``{"type": "tool_content", "content": [...]}``), with the text beside them.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from agentos._kernel.tools import ToolFailure
from agentos._model.messages import CONTENT_RESULT
from components import Json

IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
"""The image media types the Messages API takes."""


def outcome(result: Any, reader: str | None = None) -> Json | ToolFailure:
    """The call's result, or its failure, from a ``CallToolResult``; ``reader``: the tool
    that reads the server's resources, named beside a resource link (None: it has none)."""
    blocks = [block.model_dump(by_alias=True, mode="json") for block in result.content]
    text = "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    if result.is_error:
        return ToolFailure(text or "the MCP server reported an error and said nothing more")
    typed = [b for b in blocks if b.get("type") != "text"]
    if typed:
        return {"type": CONTENT_RESULT, "content": [content_of(b, reader) for b in blocks]}
    structured: Json = result.structured_content
    if structured is not None:
        return structured
    return text


def content_of(block: dict[str, Any], reader: str | None = None) -> dict[str, Any]:
    """One MCP content block as an Anthropic one: text, image, document, or a text saying
    what could not be carried (a resource link: what reads it, ``reader``, if any)."""
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": str(block.get("text", ""))}
    if kind == "image" and block.get("mimeType") in IMAGE_TYPES:
        source = {"type": "base64", "media_type": block["mimeType"], "data": block.get("data", "")}
        return {"type": "image", "source": source}
    if kind == "resource":
        return _resource(block.get("resource") or {})
    if kind == "resource_link":
        link = f"resource link: {block.get('name', '')} <{block.get('uri', '')}>"
        return _note(link if reader is None else f"{link}; {reader} reads it")
    return _note(f"{kind} content ({block.get('mimeType', 'unknown type')}) not shown")


def _resource(resource: dict[str, Any]) -> dict[str, Any]:
    uri, mime = str(resource.get("uri", "")), resource.get("mimeType")
    text = resource["text"] if "text" in resource else _text_blob(mime, resource.get("blob"))
    if text is not None:
        source = {"type": "text", "media_type": "text/plain", "data": str(text)}
        return {"type": "document", "source": source, "title": uri}
    if mime in IMAGE_TYPES and "blob" in resource:
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": mime, "data": resource["blob"]},
        }
    if mime == "application/pdf" and "blob" in resource:
        source = {"type": "base64", "media_type": mime, "data": resource["blob"]}
        return {"type": "document", "source": source, "title": uri}
    return _note(f"resource {uri} ({mime or 'unknown type'}) not shown")


def _text_blob(mime: object, blob: object) -> str | None:
    """A ``text/*`` blob's text (None: not one, or not base64 of UTF-8)."""
    if not (isinstance(mime, str) and mime.startswith("text/") and isinstance(blob, str)):
        return None
    try:
        return base64.b64decode(blob, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def _note(text: str) -> dict[str, Any]:
    return {"type": "text", "text": f"[{text}]"}
