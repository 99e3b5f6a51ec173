"""The half of ``AnthropicProvider`` that needs the ``anthropic`` SDK, imported on first request.

``import anthropic`` takes seconds; keeping every use of it here lets the
command line and programs that never ask the model start without it.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any
from typing import cast

import anthropic
import anyio
import pydantic
from anthropic.types import Message
from anthropic.types import MessageParam

from agentos._errors import ProviderError
from agentos._model.messages import Block
from agentos._model.provider import USAGE_FIELDS
from agentos._model.provider import ModelRequest
from agentos._model.provider import ModelResponse
from agentos._model.provider import PartialReply
from agentos._model.provider import ReplyListener

_MAX_DETAIL = 300
_FIRST_RETRY_DELAY, _MAX_RETRY_DELAY = 0.5, 8.0
"""The SDK's own backoff for a retried request, in seconds."""
_CLOSE_GRACE = 2.0


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


async def ask(
    client: anthropic.AsyncAnthropic, request: ModelRequest, listener: ReplyListener | None = None
) -> ModelResponse:
    """Ask the model once, streaming, and tell ``listener`` of the reply as it grows;
    raise only ``ProviderError``.

    The SDK retries a request that fails before its stream begins. A stream that breaks
    mid-reply (the connection drops, or an ``overloaded`` or ``api_error`` event) is one
    failed attempt too: it is asked again, with the backoff the SDK would use, and the
    listener hears an empty reply first. The attempts share the client's ``max_retries``:
    each is asked with the retries the earlier ones left.
    """
    params = _params(request)
    budget = max(client.max_retries, 0)
    error = ProviderError("connection", "the model was not asked")
    for attempt in range(budget + 1):
        asking = client
        if attempt:
            if listener is not None:
                listener(PartialReply())
            await anyio.sleep(min(_FIRST_RETRY_DELAY * 2 ** (attempt - 1), _MAX_RETRY_DELAY))
            asking = client.with_options(max_retries=budget - attempt)
        try:
            return await _stream_once(asking, params, listener)
        except _Broken as broken:
            error = broken.error
    raise error


class _Broken(Exception):
    """A stream that broke after it began: worth asking again."""

    def __init__(self, error: ProviderError) -> None:
        self.error = error


def _params(request: ModelRequest) -> dict[str, Any]:
    params: dict[str, Any] = {
        "model": request.model,
        "messages": cast(Iterable[MessageParam], list(request.messages)),
        "max_tokens": request.max_tokens,
    }
    if request.system and request.cache_system:
        params["system"] = [
            {"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}
        ]
    elif request.system:
        params["system"] = request.system
    if request.tools:
        params["tools"] = [dict(t) for t in request.tools]
    return params


async def _stream_once(
    client: anthropic.AsyncAnthropic, params: dict[str, Any], listener: ReplyListener | None
) -> ModelResponse:
    manager = client.messages.stream(**params)
    try:
        stream = await manager.__aenter__()
    except anthropic.APIStatusError as err:
        raise _status_error(err) from err
    except anthropic.APIConnectionError as err:
        raise _connection_error(err, str(client.base_url)) from err
    except anthropic.AnthropicError as err:
        raise ProviderError("sdk_error", f"the Anthropic SDK failed: {_one_line(err)}") from err
    except ValueError as err:  # the SDK checks arguments before sending
        raise ProviderError("bad_request", f"the request was not sent: {_one_line(err)}") from err
    try:
        return _to_response(await _read(stream, listener))
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_GRACE):
            await stream.close()  # a stop or cancel mid-stream closes it at once


async def _read(stream: Any, listener: ReplyListener | None) -> object:
    """The stream's final message, telling ``listener`` each time the reply grows (what the
    listener raises is its own: it is not taken for a broken stream)."""
    text: list[str] = []
    uses: list[Block] = []
    events = aiter(stream)
    while True:
        try:
            event = await anext(events)
            if event.type == "message_stop":
                return event.message
            if listener is None:
                continue
            if event.type == "text":
                text.append(event.text)
            elif event.type == "content_block_stop" and event.content_block.type == "tool_use":
                uses.append(_to_block(event.content_block))
            else:
                continue
        except StopAsyncIteration:
            break
        except anthropic.APIStatusError as err:  # an error event in the stream
            raise _stream_error(err) from err
        except anthropic.APIConnectionError as err:
            raise _Broken(ProviderError("connection", f"the stream broke: {_cause(err)}")) from err
        except ProviderError:
            raise
        except (
            anthropic.AnthropicError,
            ValueError,
            TypeError,
            LookupError,
            AttributeError,
            RuntimeError,
        ) as err:  # the SDK's parser, on events that are not what the API sends
            raise _malformed(f"the stream is not Messages events: {_one_line(err)}") from err
        listener(PartialReply("".join(text), tuple(uses)))
    if not text and not uses and stream._current_snapshot_or_none() is None:
        raise _malformed("the reply is not a stream of events")
    raise _Broken(ProviderError("connection", "the stream ended before the reply was complete"))


def _stream_error(err: anthropic.APIStatusError) -> Exception:
    """An ``error`` event mid-stream: broken (asked again) if the API says it was
    overloaded or failed, else a plain error."""
    inner = err.body.get("error") if isinstance(err.body, dict) else None
    kind_in_body = inner.get("type") if isinstance(inner, dict) else None
    detail = _api_detail(err)
    if kind_in_body == "overloaded_error":
        return _Broken(ProviderError("overloaded", f"the Anthropic API is overloaded: {detail}"))
    if kind_in_body in ("api_error", None):
        return _Broken(ProviderError("server_error", f"the Anthropic API failed: {detail}"))
    if kind_in_body == "rate_limit_error":
        return ProviderError("rate_limited", f"rate limited by the Anthropic API: {detail}")
    return ProviderError("bad_request", f"the Anthropic API refused the request: {detail}")


def _cause(err: BaseException) -> str:
    return _one_line(err.__cause__ if err.__cause__ is not None else err) or type(err).__name__


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
    return ProviderError("connection", f"the connection to {base_url} {what}: {_cause(err)}")


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
