"""The half of ``AnthropicProvider`` that needs the ``anthropic`` SDK, imported on first request.

``import anthropic`` takes seconds; keeping every use of it here lets the
command line and programs that never ask the model start without it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, cast

import anthropic
import pydantic
from anthropic.types import Message, MessageParam

from agentos._errors import ProviderError
from agentos._model.messages import Block
from agentos._model.provider import USAGE_FIELDS, ModelRequest, ModelResponse

_MAX_DETAIL = 300


def make_client(
    key: str, *, base_url: str | None, max_retries: int, timeout: float
) -> anthropic.AsyncAnthropic:
    """The SDK client the provider asks through."""
    return anthropic.AsyncAnthropic(
        api_key=key,
        base_url=base_url,
        max_retries=max_retries,
        timeout=timeout,
        default_headers=_api_key_headers(key),
    )


async def ask(client: anthropic.AsyncAnthropic, request: ModelRequest) -> ModelResponse:
    """Ask the model once (the SDK does the retrying); raise only ``ProviderError``."""
    optional: dict[str, Any] = {}
    if request.system and request.cache_system:
        optional["system"] = [
            {"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}
        ]
    elif request.system:
        optional["system"] = request.system
    if request.tools:
        optional["tools"] = [dict(t) for t in request.tools]
    try:
        reply: object = await client.messages.create(
            model=request.model,
            messages=cast(Iterable[MessageParam], list(request.messages)),
            max_tokens=request.max_tokens,
            **optional,
        )
    except anthropic.APIStatusError as err:
        raise _status_error(err) from err
    except anthropic.APIConnectionError as err:
        raise _connection_error(err, str(client.base_url)) from err
    except anthropic.APIResponseValidationError as err:
        raise ProviderError(
            "malformed_response",
            f"the Anthropic API's reply did not fit the Messages schema: {_one_line(err)}",
            status=err.status_code,
        ) from err
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        # The SDK lets a body that is not JSON escape as the decoder's own error.
        raise ProviderError(
            "malformed_response",
            f"the Anthropic API's reply is not valid JSON: {_one_line(err)}",
        ) from err
    except anthropic.AnthropicError as err:
        raise ProviderError("sdk_error", f"the Anthropic SDK failed: {_one_line(err)}") from err
    except ValueError as err:
        # The SDK checks arguments (e.g. a max_tokens too large without streaming).
        raise ProviderError("bad_request", f"the request was not sent: {_one_line(err)}") from err
    return _to_response(reply)


def _api_key_headers(key: str) -> Mapping[str, str]:
    """Send the key as ``x-api-key``, as the Messages API documents, and no bearer header.

    This SDK build (2.14, on httpx2) sends ``api_key`` as ``Authorization:
    Bearer`` where upstream SDKs send ``X-Api-Key``; ``omit`` drops the bearer
    header (the SDK's own typing fudges ``Omit`` into ``str`` mappings alike).
    """
    return cast(Mapping[str, str], {"x-api-key": key, "Authorization": anthropic.omit})


def _status_error(err: anthropic.APIStatusError) -> ProviderError:
    """Name an HTTP error status the SDK gave up on (after its retries, if it retries it)."""
    status = err.status_code
    detail = _api_detail(err)
    if status == 401:
        said = f": {detail}" if detail else ""
        return ProviderError(
            "rejected_key",
            f"the API key was rejected (HTTP 401{said}); check ANTHROPIC_API_KEY",
            status=status,
        )
    if status == 429:
        kind, headline = "rate_limited", "rate limited by the Anthropic API"
    elif status == 529 or err.type == "overloaded_error":
        kind, headline = "overloaded", "the Anthropic API is overloaded"
    elif status >= 500:
        kind, headline = "server_error", "the Anthropic API failed"
    else:
        kind, headline = "bad_request", "the Anthropic API refused the request"
    message = f"{headline} (HTTP {status}{_attempts(err)})"
    return ProviderError(kind, f"{message}: {detail}" if detail else message, status=status)


def _connection_error(err: anthropic.APIConnectionError, base_url: str) -> ProviderError:
    """Name a failure to reach the API, or to hear back in time."""
    what = "timed out" if isinstance(err, anthropic.APITimeoutError) else "failed"
    cause = _one_line(err.__cause__) if err.__cause__ is not None else _one_line(err)
    return ProviderError("connection", f"the connection to {base_url} {what}: {cause}")


def _attempts(err: anthropic.APIStatusError) -> str:
    """', N attempts' from the retry count the SDK put on its last request, if any."""
    taken = err.response.request.headers.get("x-stainless-retry-count", "")
    return f", {int(taken) + 1} attempts" if taken.isdigit() and int(taken) > 0 else ""


def _api_detail(err: anthropic.APIStatusError) -> str:
    """The API's own explanation: ``error.message`` of the body, else the body's text."""
    if err.api_message:
        return _one_line(err.api_message)
    if isinstance(err.body, str):
        return _one_line(err.body)
    return ""


def _one_line(value: object) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 3] + "..."


def _malformed(what: str) -> ProviderError:
    return ProviderError(
        "malformed_response", f"the Anthropic API's reply is not a Messages reply: {what}"
    )


def _to_response(reply: object) -> ModelResponse:
    """Check the SDK's ``Message`` and turn it into plain dicts.

    The SDK builds models without validating them, so a wrong body arrives as
    a ``str``, a ``list``, ``None`` or a ``Message`` with missing fields. Usage
    keeps the token counts the API gave as ints (prompt-cache reads and writes
    too); one it left out or sent as null is not there.
    """
    if not isinstance(reply, Message):
        raise _malformed(f"got {type(reply).__name__} instead of a message")
    if not isinstance(reply.content, list):
        raise _malformed("'content' is not a list of blocks")
    if not isinstance(reply.stop_reason, str):
        raise _malformed("'stop_reason' is missing")
    content = [_to_block(block) for block in reply.content]
    usage: dict[str, int] = {}
    for field in USAGE_FIELDS:
        count = getattr(reply.usage, field, None)
        if isinstance(count, int):
            usage[field] = count
    return ModelResponse(content=content, stop_reason=reply.stop_reason, usage=usage)


def _to_block(block: object) -> Block:
    """One content block as the dict the Messages API accepts back in a request."""
    if not isinstance(block, pydantic.BaseModel):
        raise _malformed(f"a content block is a {type(block).__name__}")
    # warnings=False: blocks the SDK did not validate (or of types it does not
    # know) serialise fine but make pydantic warn.
    dumped: dict[str, Any] = block.model_dump(mode="json", exclude_none=True, warnings=False)
    kind = dumped.get("type")
    if kind == "text":
        if not isinstance(dumped.get("text"), str):
            raise _malformed("a text block has no text")
        return {"type": "text", "text": dumped["text"]}
    if kind == "tool_use":
        tool_id, name, arguments = dumped.get("id"), dumped.get("name"), dumped.get("input")
        if not (isinstance(tool_id, str) and isinstance(name, str) and isinstance(arguments, dict)):
            raise _malformed("a tool_use block lacks an id, a name or an input object")
        return {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}
    if not isinstance(kind, str):
        raise _malformed("a content block has no type")
    return dumped
