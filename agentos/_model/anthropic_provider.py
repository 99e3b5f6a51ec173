"""The real model: a ``Provider`` that asks Anthropic's Messages API through the official SDK.

It asks through the SDK's streaming Messages API, so a session can show a reply as it
forms. Retrying is the SDK's job (429, 5xx and 529 with backoff, honouring
``retry-after``); ``anthropic_sdk`` only turns requests into SDK calls and
the SDK's replies and exceptions into ``ModelResponse`` and ``ProviderError``,
so the runtime never sees an SDK type or an SDK exception. The SDK is
imported on the first request, not before: it takes seconds to import.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from agentos._errors import ProviderError
from agentos._model.provider import ModelRequest
from agentos._model.provider import ModelResponse
from agentos._model.provider import ReplyListener

if TYPE_CHECKING:
    import anthropic


class AnthropicProvider:
    """A ``Provider`` backed by ``anthropic.AsyncAnthropic``.

    The key comes from ``api_key`` or ``ANTHROPIC_API_KEY``; the endpoint from
    ``base_url``, ``ANTHROPIC_BASE_URL`` or the SDK's default. Pass ``client``
    to use a ready-made SDK client instead (then no key is needed here).
    """

    name = "anthropic"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 3,
        timeout: float = 120.0,
        client: anthropic.AsyncAnthropic | None = None,
    ) -> None:
        self._client = client
        self._key = api_key or os.environ.get("ANTHROPIC_API_KEY") or ""
        if client is None and not self._key:
            raise ProviderError(
                "missing_key", "no Anthropic API key: set ANTHROPIC_API_KEY (or pass api_key=...)"
            )
        self._base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self._max_retries = max_retries
        self._timeout = timeout

    @property
    def secrets(self) -> tuple[str, ...]:
        """What a recording must never write: the key this provider sends."""
        key = self._key or getattr(self._client, "api_key", None) or ""
        return (key,) if key else ()

    @property
    def client(self) -> anthropic.AsyncAnthropic:
        """The SDK client, made (and the SDK imported) on first use."""
        if self._client is None:
            from agentos._model.anthropic_sdk import make_client

            self._client = make_client(
                self._key,
                base_url=self._base_url,
                max_retries=self._max_retries,
                timeout=self._timeout,
            )
        return self._client

    async def aclose(self) -> None:
        """Close the SDK client's connections (the provider is unusable afterwards)."""
        if self._client is not None:
            await self._client.close()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Ask the model once (the SDK does the retrying); raise only ``ProviderError``."""
        from agentos._model.anthropic_sdk import ask

        return await ask(self.client, request)

    async def stream(self, request: ModelRequest, listener: ReplyListener) -> ModelResponse:
        """``complete``, telling ``listener`` of the reply each time it grows."""
        from agentos._model.anthropic_sdk import ask

        return await ask(self.client, request, listener)
