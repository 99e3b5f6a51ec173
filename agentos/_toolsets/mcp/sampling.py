"""An MCP server's ``sampling/createMessage`` as a request to the session's own model: the
server's messages in the Messages API's words, and the model's answer in MCP's.

The request goes through the host's ``Sampler`` (``Session.sample``): the session's
provider and model, its budget, and its usage counted on it. Text and images pass;
audio, tool use and tool results in a sampling request are refused saying so.
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from agentos._errors import ProviderError
from agentos._model.messages import Message
from agentos._model.provider import ModelRequest
from agentos._model.provider import ModelResponse

Sampler = Callable[[str, ModelRequest], Awaitable[tuple[str, ModelResponse]]]
"""The host's way to ask a session's model (by session id) outside its turns: the model's
name and its answer."""

MAX_TOKENS_AT_MOST = 16_384
"""The most a server's request may ask the model to write."""

STOP_REASONS = {"end_turn": "endTurn", "max_tokens": "maxTokens", "stop_sequence": "stopSequence"}


class Unsupported(ValueError):
    """A sampling request agentos cannot pass to a model (its message says what)."""


def model_request(params: Any, session_id: str) -> ModelRequest:
    """The server's request as one to the session's model (``model`` is the session's)."""
    if params.tools:
        raise Unsupported("sampling with tools is not supported by agentos")
    messages: list[Message] = [
        {"role": message.role, "content": _blocks(message.content)} for message in params.messages
    ]
    if not messages:
        raise Unsupported("a sampling request needs at least one message")
    return ModelRequest(
        model="",
        system=params.system_prompt or "",
        messages=messages,
        max_tokens=max(1, min(int(params.max_tokens), MAX_TOKENS_AT_MOST)),
        session_id=session_id,
    )


def _blocks(content: Any) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else [content]:
        if part.type == "text":
            blocks.append({"type": "text", "text": part.text})
        elif part.type == "image":
            source = {"type": "base64", "media_type": part.mime_type, "data": part.data}
            blocks.append({"type": "image", "source": source})
        else:
            raise Unsupported(f"{part.type} content in a sampling request is not supported")
    return blocks


def create_message_result(response: ModelResponse, model: str) -> Any:
    """The model's answer as MCP's ``CreateMessageResult`` (its text, one block)."""
    from mcp_types import CreateMessageResult
    from mcp_types import TextContent

    text = "".join(
        str(block.get("text", "")) for block in response.content if block.get("type") == "text"
    )
    return CreateMessageResult(
        role="assistant",
        content=TextContent(type="text", text=text),
        model=model,
        stop_reason=STOP_REASONS.get(response.stop_reason, response.stop_reason),
    )


def refusal(error: Exception) -> Any:
    """The error a server gets for a request the model did not answer."""
    from mcp_types import INVALID_REQUEST
    from mcp_types import ErrorData

    if isinstance(error, ProviderError):
        return ErrorData(code=INVALID_REQUEST, message=f"the model failed: {error.message}")
    return ErrorData(code=INVALID_REQUEST, message=str(error))
