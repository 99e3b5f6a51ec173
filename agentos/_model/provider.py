"""Talking to a model: one request in, one response out, in Anthropic Messages shapes.

Messages and content blocks are plain JSON dicts exactly as the Messages API
takes and returns them (``{"type": "tool_use", "id": ..., "name": ...,
"input": ...}``), so a transcript can be sent, stored and compared as it is.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Protocol
from typing import runtime_checkable

from agentos._model.messages import Block
from agentos._model.messages import Message
from agentos._model.messages import blocks_of
from components import quick_init


@quick_init
@dataclass(frozen=True, slots=True)
class ModelRequest:
    """What a session asks the model: the whole context, rebuilt every turn."""

    model: str
    system: str
    messages: Sequence[Message]
    tools: Sequence[Mapping[str, Any]] = ()
    max_tokens: int = 1024
    session_id: str = ""
    cache_system: bool = False
    """Mark the system prompt as a prompt-cache breakpoint, so the tools and the system
    prompt are cached even when no message carries a mark (a board session's requests)."""


USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
"""The token counts a response's ``usage`` may hold, named as the Messages API names them."""


@quick_init
@dataclass(frozen=True, slots=True)
class ModelResponse:
    """The model's answer: content blocks, why it stopped, its token counts (``USAGE_FIELDS``)."""

    content: list[Block]
    stop_reason: str = "end_turn"
    usage: Mapping[str, int] = field(default_factory=dict)

    @property
    def tool_uses(self) -> list[Block]:
        return [block for block in self.content if block.get("type") == "tool_use"]

    @property
    def text(self) -> str:
        return "".join(str(b.get("text", "")) for b in self.content if b.get("type") == "text")


class Provider(Protocol):
    """Anything that can answer a ``ModelRequest``."""

    name: str

    async def complete(self, request: ModelRequest) -> ModelResponse: ...


@runtime_checkable
class ClosableProvider(Provider, Protocol):
    """A provider that holds something to give back, such as an SDK client's connections:
    whoever made it calls ``aclose`` once done with it. Every provider agentos ships is one
    (closing holds nothing up where nothing is held); one of your own needs only ``name``
    and ``complete``, and ``close_provider`` closes either kind."""

    async def aclose(self) -> None: ...


async def close_provider(provider: Provider) -> None:
    """Give back what ``provider`` holds: ``aclose`` it if it is a ``ClosableProvider``."""
    if isinstance(provider, ClosableProvider):
        await provider.aclose()


@dataclass(frozen=True, slots=True)
class PartialReply:
    """A reply as it forms: its text so far, and the ``tool_use`` blocks already whole."""

    text: str = ""
    tool_uses: tuple[Block, ...] = ()


ReplyListener = Callable[[PartialReply], None]
"""Told of a streaming reply each time it grows (and once more, empty, if it starts again)."""


@runtime_checkable
class StreamingProvider(Provider, Protocol):
    """A provider that can tell a reply as it forms. ``stream`` answers exactly as
    ``complete`` does; the session shows the partial replies and its machine still sees
    one whole response."""

    async def stream(self, request: ModelRequest, listener: ReplyListener) -> ModelResponse: ...


def streams(provider: Provider) -> bool:
    """Whether ``provider`` is a ``StreamingProvider``: what the protocol's ``isinstance``
    looks for (its members), without its ~30 µs, which a sub-agent's session paid once."""
    return all(hasattr(provider, member) for member in ("name", "complete", "stream"))


def text(value: str) -> ModelResponse:
    """A response that only says ``value`` and ends the turn."""
    return ModelResponse([{"type": "text", "text": value}], "end_turn")


def tool_calls(*calls: tuple[str, Mapping[str, Any]], say: str = "") -> ModelResponse:
    """A response that calls tools: ``("name", {input}), ...`` with ids ``toolu_s<n>``."""
    content: list[Block] = [{"type": "text", "text": say}] if say else []
    for name, arguments in calls:
        content.append(
            {"type": "tool_use", "id": _next_tool_use_id(), "name": name, "input": dict(arguments)}
        )
    return ModelResponse(content, "tool_use")


_counter = [0]


def _next_tool_use_id() -> str:
    _counter[0] += 1
    return f"toolu_s{_counter[0]:06d}"


ScriptRule = tuple[Callable[[ModelRequest], bool], Callable[[ModelRequest], ModelResponse]]
"""One line of a scripted model's script: when the test matches a request, the answer."""


class ScriptedProvider:
    """A deterministic stand-in for a model: the first rule whose test matches answers.

    Rules look at the request (usually its last message) and answer with text
    or tool calls, so demos and tests run offline and the same way each time.
    A request no rule matches gets a text saying so, never an exception.
    ``requests`` holds the newest ``keep_requests`` requests (True: all,
    False: none), so a long-lived host does not grow; ``answered`` counts all.
    """

    name = "scripted"

    def __init__(self, *rules: ScriptRule, keep_requests: bool | int = 100) -> None:
        if isinstance(keep_requests, bool):
            kept = None if keep_requests else 0
        elif isinstance(keep_requests, int) and keep_requests >= 0:
            kept = keep_requests
        else:
            raise ValueError(f"keep_requests must be a bool or an int >= 0, got {keep_requests!r}")
        self.rules = list(rules)
        self.requests: deque[ModelRequest] = deque(maxlen=kept)
        self.answered = 0

    async def aclose(self) -> None:
        """Nothing to give back: the rules hold no connection."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.answered += 1
        self.requests.append(request)
        for matches, respond in self.rules:
            if matches(request):
                return respond(request)
        return text("(scripted model: no rule matched this request)")


def last_user_text(request: ModelRequest) -> str:
    """The text of the last user message's text blocks ('' if it has none)."""
    for message in reversed(request.messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        return "".join(
            str(block.get("text", ""))
            for block in content or ()
            if isinstance(block, Mapping) and block.get("type") == "text"
        )
    return ""


def last_user_blocks(request: ModelRequest) -> list[Block]:
    """The content blocks of the request's last message if it is the user's, else none."""
    if not request.messages or request.messages[-1].get("role") != "user":
        return []
    return blocks_of(request.messages[-1])


def last_tool_results(request: ModelRequest) -> list[Block]:
    """The tool_result blocks of the last user message."""
    return [b for b in last_user_blocks(request) if b.get("type") == "tool_result"]
