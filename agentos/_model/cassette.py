"""Recorded conversations: a model's traffic kept in a file, then replayed offline.

Recorded at the provider boundary: ``RecordingProvider`` wraps a real provider and keeps
each request with its reply (for a streamed reply, every partial reply too);
``ReplayingProvider`` answers from the file. The ``anthropic`` SDK sends through
``httpx2``, which HTTP recorders (vcrpy, pytest-recording) do not patch: a request
there would reach the network silently, so agentos records what it asks and hears
instead. That also keeps secrets out: no header, key or URL is ever seen here, and
text that looks like an API key is masked before it is written.

A request is matched by its key: the request with what changes from run to run masked
(ids such as ``toolu_...``, UUIDs and call ids numbered in order of appearance,
timestamps, the session's id), so replay does not depend on them. Interactions are
matched in any order (sessions talk concurrently), each played once; a request the
cassette does not hold raises ``CassetteMiss`` with a diff against the nearest recorded
one, and ``Cassette.check`` names what was recorded and never played. A replayed stream
tells its partial replies with a checkpoint before each, as a live one awaits the
network, so interleavings a live stream allows happen in replay too.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import TypeVar
from typing import cast

import anyio.lowlevel

from agentos._errors import AgentOSError
from agentos._errors import ProviderError
from agentos._model.messages import Block
from agentos._model.provider import ModelRequest
from agentos._model.provider import ModelResponse
from agentos._model.provider import PartialReply
from agentos._model.provider import Provider
from agentos._model.provider import ReplyListener
from agentos._model.provider import StreamingProvider
from agentos._model.provider import close_provider
from agentos._model.provider import streams

T = TypeVar("T")
FORMAT = 1
"""The cassette file's format version."""
_IDS = re.compile(
    r"\b(?:toolu_[A-Za-z0-9_]+|msg_[A-Za-z0-9_]+|ct_[A-Za-z0-9_-]{8,}|call[-_][A-Za-z0-9-]{6,}"
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b"
)
_TIMES = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?\b")
_SECRETS = re.compile(r"sk-ant-[A-Za-z0-9_-]+|\bsk-[A-Za-z0-9_-]{8,}")
"""An Anthropic key (``sk-ant-...``) anywhere, glued to other text or not, however little
of it a streamed partial holds; another ``sk-...`` key where a word starts."""
MASK = "sk-***"
KEPT_PREFIX = 8
"""A beginning of the run's own key this long is masked too (a partial reply may end
inside the key)."""


class CassetteMiss(AgentOSError):
    """The conversation asked the model something the cassette does not hold."""


class CassetteError(AgentOSError, ValueError):
    """A cassette file cannot be read, or is not of a cassette's shape; the message names
    the file and what is wrong."""


@dataclass(slots=True)
class Interaction:
    """One request and the reply it got (``partials``: a streamed reply as it grew)."""

    key: str
    request: dict[str, Any]
    content: list[Block]
    stop_reason: str
    usage: dict[str, int]
    partials: list[tuple[str, list[Block]]] | None = None
    played: bool = False

    def response(self) -> ModelResponse:
        return ModelResponse(list(self.content), self.stop_reason, dict(self.usage))

    def to_json(self) -> dict[str, Any]:
        kept: dict[str, Any] = {
            "request": self.request,
            "response": {
                "content": self.content,
                "stop_reason": self.stop_reason,
                "usage": self.usage,
            },
        }
        if self.partials is not None:
            kept["stream"] = [{"text": text, "tool_uses": uses} for text, uses in self.partials]
        return kept

    @classmethod
    def from_json(cls, data: object) -> Interaction:
        """An interaction as ``to_json`` wrote it; ``ValueError`` saying what is wrong."""
        request = dict(_field(data, "request", dict))
        response = _field(data, "response", dict)
        stream = data.get("stream") if isinstance(data, dict) else None
        if stream is not None and not isinstance(stream, list):
            raise ValueError(f"'stream' must be a list, got {_kind(stream)}")
        usage = dict(_field(response, "usage", dict)) if "usage" in response else {}
        for name, count in usage.items():
            if not isinstance(count, int):
                raise ValueError(f"usage {name!r} must be an int, got {_kind(count)}")
        return cls(
            key=_key(request),
            request=request,
            content=_blocks(response, "content"),
            stop_reason=_field(response, "stop_reason", str),
            usage=usage,
            partials=None
            if stream is None
            else [(_field(p, "text", str), _blocks(p, "tool_uses")) for p in stream],
        )


def _field(data: object, name: str, kind: type[T]) -> T:
    """``data[name]``, which must be a ``kind``; ``ValueError`` naming what is wrong."""
    if not isinstance(data, dict):
        raise ValueError(f"expected an object holding {name!r}, got {_kind(data)}")
    if name not in data:
        raise ValueError(f"it has no {name!r}")
    value = data[name]
    if not isinstance(value, kind):
        raise ValueError(f"{name!r} must be a {kind.__name__}, got {_kind(value)}")
    return value


def _blocks(data: object, name: str) -> list[Block]:
    """``data[name]``, which must be a list of blocks (objects with a ``type``)."""
    blocks = list(_field(data, name, list))
    for number, block in enumerate(blocks, 1):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise ValueError(f"{name!r} {number} must be an object with a 'type'")
    return blocks


def request_record(request: ModelRequest, secrets: tuple[str, ...] = ()) -> dict[str, Any]:
    """The request as a cassette keeps it (what the model is asked; the session id aside),
    with ``secrets`` and anything that looks like a key masked."""
    record = {
        "model": request.model,
        "system": request.system,
        "messages": list(request.messages),
        "tools": list(request.tools),
        "max_tokens": request.max_tokens,
        "cache_system": request.cache_system,
    }
    return masked(record, secrets)


def masked(value: dict[str, Any], secrets: tuple[str, ...] = ()) -> dict[str, Any]:
    """``value`` with each of ``secrets`` and anything shaped like an API key masked,
    wherever they appear in its strings."""
    text = json.dumps(value)
    for secret in secrets:
        if len(secret) >= KEPT_PREFIX:  # shorter is no key, and would mask common words
            text = _beginnings(json.dumps(secret)[1:-1]).sub(MASK, text)
    kept: dict[str, Any] = json.loads(_SECRETS.sub(MASK, text))
    return kept


def _beginnings(secret: str) -> re.Pattern[str]:
    """``secret``, or any beginning of it of ``KEPT_PREFIX`` characters or more (a streamed
    partial reply may end in the middle of it)."""
    rest = ""
    for char in reversed(secret[KEPT_PREFIX:]):
        rest = f"(?:{re.escape(char)}{rest})?"
    return re.compile(re.escape(secret[:KEPT_PREFIX]) + rest)


def _kind(value: object) -> str:
    return "nothing" if value is None else type(value).__name__


def _key(record: Mapping[str, Any]) -> str:
    """``record`` as JSON, ids numbered in order of appearance and timestamps masked."""
    text = json.dumps(record, sort_keys=True, indent=1)
    numbered: dict[str, str] = {}

    def number(found: re.Match[str]) -> str:
        return numbered.setdefault(found.group(0), f"<id {len(numbered) + 1}>")

    return _TIMES.sub("<time>", _IDS.sub(number, text))


@dataclass(slots=True)
class Cassette:
    """A cassette file's interactions: ``load`` one to replay, or record into a new one."""

    path: Path
    interactions: list[Interaction] = field(default_factory=list)
    missed: str | None = None
    """Why the first request that found no reply found none."""

    @classmethod
    def load(cls, path: Path) -> Cassette:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise CassetteError(f"cannot read the cassette {path}: {error}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise CassetteError(f"{path} is not an agentos cassette of format {FORMAT}")
        items = data.get("interactions")
        if not isinstance(items, list):
            raise CassetteError(f"{path}: 'interactions' must be a list, got {_kind(items)}")
        interactions = []
        for number, item in enumerate(items, 1):
            try:
                interactions.append(Interaction.from_json(item))
            except ValueError as error:
                raise CassetteError(f"{path}: interaction {number}: {error}") from None
        return cls(path, interactions)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"format": FORMAT, "interactions": [i.to_json() for i in self.interactions]}
        written = self.path.with_suffix(".json.partial")
        written.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", "utf-8")
        written.replace(self.path)  # a cassette is whole or not there

    def take(self, request: ModelRequest) -> Interaction:
        """The first unplayed interaction whose key is the request's; ``CassetteMiss`` (with
        a diff against the nearest recorded request) if there is none."""
        record = request_record(request)
        key = _key(record)
        for interaction in self.interactions:
            if not interaction.played and interaction.key == key:
                interaction.played = True
                return interaction
        miss = self._miss(key)
        self.missed = self.missed or miss
        raise CassetteMiss(miss)

    def _miss(self, key: str) -> str:
        unplayed = [i for i in self.interactions if not i.played] or self.interactions
        head = f"the cassette {self.path} holds no reply to this request"
        if not unplayed:
            return f"{head} (it is empty)"
        nearest = max(
            unplayed, key=lambda i: difflib.SequenceMatcher(None, i.key, key).quick_ratio()
        )
        diff = difflib.unified_diff(
            nearest.key.splitlines(),
            key.splitlines(),
            "recorded",
            "asked now",
            lineterm="",
            n=2,
        )
        return f"{head}; against the nearest recorded one:\n" + "\n".join(diff)

    def check(self) -> None:
        """``CassetteMiss`` with the first request that found no reply (a session records
        a provider's failure and goes on, so the test may not have seen it), else naming
        each recorded interaction that was never played."""
        if self.missed is not None:
            raise CassetteMiss(self.missed)
        unplayed = [n for n, i in enumerate(self.interactions, 1) if not i.played]
        if unplayed:
            raise CassetteMiss(
                f"the cassette {self.path} holds {len(unplayed)} interaction(s) the "
                f"conversation never asked for (numbers {unplayed}, of "
                f"{len(self.interactions)}): it asked less, or differently, than when recorded"
            )


class RecordingProvider:
    """A provider that answers through ``inner`` and keeps every exchange in ``cassette``
    (``Cassette.save`` writes it). Streams if ``inner`` does."""

    def __init__(self, inner: Provider, cassette: Cassette) -> None:
        self.inner = inner
        self.cassette = cassette
        self.name = inner.name
        found = (*getattr(inner, "secrets", ()), os.environ.get("ANTHROPIC_API_KEY", ""))
        self._secrets = tuple(secret for secret in found if secret)
        """The keys this run uses: masked wherever they appear, whatever their shape."""

    async def aclose(self) -> None:
        """Close the recorded provider (its SDK client), if it can be closed."""
        await close_provider(self.inner)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        response = await self.inner.complete(request)
        self._keep(request, response, None)
        return response

    async def stream(self, request: ModelRequest, listener: ReplyListener) -> ModelResponse:
        if not streams(self.inner):
            return await self.complete(request)
        partials: list[tuple[str, list[Block]]] = []

        def heard(partial: PartialReply) -> None:
            partials.append((partial.text, [dict(use) for use in partial.tool_uses]))
            listener(partial)

        response = await cast(StreamingProvider, self.inner).stream(request, heard)
        self._keep(request, response, partials)
        return response

    def _keep(
        self,
        request: ModelRequest,
        response: ModelResponse,
        partials: list[tuple[str, list[Block]]] | None,
    ) -> None:
        record = request_record(request, self._secrets)
        kept = {"content": response.content, "usage": dict(response.usage), "stream": partials}
        reply = masked(kept, self._secrets)
        stream = reply["stream"]
        self.cassette.interactions.append(
            Interaction(
                _key(record),
                record,
                reply["content"],
                response.stop_reason,
                reply["usage"],
                None if stream is None else [(text, uses) for text, uses in stream],
            )
        )


class ReplayingProvider:
    """A provider that answers from a ``Cassette``, offline; a streamed reply is told as it
    was heard, a checkpoint before each partial."""

    name = "cassette"

    def __init__(self, cassette: Cassette) -> None:
        self.cassette = cassette

    async def aclose(self) -> None:
        """Nothing to give back: the cassette is read already."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        await anyio.lowlevel.checkpoint()  # a live request awaits the network
        return self.cassette.take(request).response()

    async def stream(self, request: ModelRequest, listener: ReplyListener) -> ModelResponse:
        interaction = self.cassette.take(request)
        for text, uses in interaction.partials or ():
            await anyio.lowlevel.checkpoint()
            listener(PartialReply(text, tuple(uses)))
        await anyio.lowlevel.checkpoint()
        return interaction.response()


def recording_wanted() -> bool:
    """``AGENTOS_RECORD=1``: record cassettes again, over those that exist."""
    return os.environ.get("AGENTOS_RECORD", "") not in ("", "0")


class RecordedConversation:
    """A test's model, recorded once into ``path`` and replayed from it after (the
    ``agentos_cassette`` fixture gives one). ``provider(real)`` is the model to use:
    while recording, ``real()`` (default: ``AnthropicProvider()``, which needs
    ``ANTHROPIC_API_KEY``) answers and every exchange is kept; otherwise the cassette
    answers, offline. It records when ``AGENTOS_RECORD=1``, or when the cassette does not
    exist yet outside CI (``CI=true`` replays only, so a missing cassette fails there).
    ``finish`` writes what was recorded, or checks that every recorded interaction was
    played."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.recording = recording_wanted() or (
            not path.exists() and os.environ.get("CI") != "true"
        )
        self.cassette: Cassette | None = None

    def provider(self, real: Callable[[], Provider] | None = None) -> Provider:
        if self.recording:
            if real is None:
                from agentos._model.anthropic_provider import AnthropicProvider

                real = AnthropicProvider
            try:
                provider = real()
            except ProviderError as refused:  # no API key, say: then nothing is recorded
                raise CassetteMiss(self._cannot_record(refused)) from None
            self.cassette = Cassette(self.path)
            return RecordingProvider(provider, self.cassette)
        if not self.path.exists():
            raise CassetteMiss(
                f"no cassette at {self.path}: record it once (run the test outside CI with "
                "ANTHROPIC_API_KEY set, or with AGENTOS_RECORD=1)"
            )
        self.cassette = Cassette.load(self.path)
        return ReplayingProvider(self.cassette)

    def _cannot_record(self, refused: ProviderError) -> str:
        """One line naming the cassette and what to do, for a model that cannot be made."""
        if self.path.exists():
            return f"cannot record the cassette {self.path} again: {refused.message}"
        if refused.kind == "missing_key":
            return (
                f"no cassette at {self.path}: set ANTHROPIC_API_KEY and run the test again "
                "to record it"
            )
        return f"no cassette at {self.path}, and the model to record it failed: {refused.message}"

    def finish(self, *, passed: bool = True) -> None:
        """Write the recording if the test ``passed`` (a failed run's traffic is not one to
        replay), else check the replay."""
        if self.cassette is None:
            return
        if self.recording:
            if passed:
                self.cassette.save()
        else:
            self.cassette.check()
