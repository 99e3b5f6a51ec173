"""A session's model request, drafted from what the machine asks and performed: its span,
its cancel scope, how it fails.

``ModelCall.answer`` makes one request (streamed to the session when the provider
streams), bounded by the agent's ``request_timeout`` and cut by a stop; however it
fails, the failure is recorded as the session's error and the machine hears None.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import replace
from typing import Any
from typing import Protocol
from typing import cast

import anyio
import anyio.lowlevel

from agentos._errors import ProviderError
from agentos._model.provider import ModelRequest
from agentos._model.provider import ModelResponse
from agentos._model.provider import PartialReply
from agentos._model.provider import Provider
from agentos._model.provider import StreamingProvider
from agentos._model.provider import streams
from agentos._sessions.spans import SessionSpans
from agentos._sessions.usage import Usage
from agentos._turns.agent_config import AgentConfig
from agentos._turns.events import SendRequest


class Asker(Protocol):
    """The session a ``ModelCall`` asks for (its task): one object, where two callbacks
    were two bound methods every session kept."""

    def record_error(self, kind: str, message: str) -> None:
        """Record what went wrong (a failed request: ``kind``, ``message``)."""

    def streamed(self, partial: PartialReply) -> None:
        """The reply as it forms, from a provider that streams."""


class ModelCall:
    """How one session asks its model: one request at a time, each in its own scope."""

    def __init__(
        self,
        config: AgentConfig,
        provider: Provider,
        usage: Usage,
        owner: Asker,
        spans: SessionSpans | None = None,
    ) -> None:
        """``owner``: who records what went wrong and is told the reply as it forms."""
        self._config, self._provider, self._usage = config, provider, usage
        self._owner = owner
        self._spans = spans
        self._streams: bool | None = None
        """Whether the provider streams, found at the first request."""
        self._timeout: asyncio.Timeout | None = None
        """The request in flight: a stop expires it (a stream closes at once); its deadline
        is the agent's ``request_timeout``."""
        self._cut = False
        """A stop cut the request in flight (it did not time out)."""
        self._sampling: anyio.Lock | None = None
        """Requests outside the turns (``sample``) go one at a time, within the budget."""

    def draft(
        self, action: SendRequest, tools: list[dict[str, Any]], session_id: str
    ) -> ModelRequest:
        """The request the machine asks for (``action``): the agent's model, prompt (with
        the action's note) and token budget, and ``tools`` as they are now."""
        config = self._config
        system = config.system_prompt
        if action.system_note:
            system = f"{system}\n\n{action.system_note}"
        return ModelRequest(
            model=config.model,
            system=system,
            messages=action.messages,
            tools=tools,
            max_tokens=config.max_tokens,
            session_id=session_id,
            cache_system=action.cache_system,
        )

    async def answer(self, request: ModelRequest, *, stopping: bool) -> ModelResponse | None:
        """The model's response, or None once the failure is recorded (or a stop cut it;
        ``stopping``: one already did, so nothing is asked)."""
        if stopping:
            return None
        spans = self._spans
        span = None if spans is None else spans.request(request, self._provider.name)
        response: ModelResponse | None = None
        failure: ProviderError | None = None
        deadline = asyncio.get_running_loop().time() + self._config.request_timeout
        self._cut = False
        try:
            try:  # asyncio's timeout, not an anyio scope: a third of the cost, per request
                async with asyncio.timeout_at(deadline) as timeout:
                    self._timeout = timeout
                    current = None if span is None else SessionSpans.enter(span)
                    try:
                        response = await self._ask(request)
                    except ProviderError as error:
                        failure = error
                    finally:
                        self._timeout = None
                        if current is not None:
                            SessionSpans.leave(current)
            except TimeoutError:
                await anyio.lowlevel.checkpoint_if_cancelled()  # a cancel from outside, too
                if not self._cut:
                    failure = self._timed_out()
            if failure is not None:
                self._owner.record_error(failure.kind, failure.message)
        finally:  # however it ends (a cancel from outside too), its span ends
            if span is not None and spans is not None:
                spans.answered(span, response, failure)
        return response

    async def _ask(self, request: ModelRequest) -> ModelResponse:
        """One request; however it fails, a ``ProviderError`` says how (``provider_bug``,
        ``budget``, or the provider's own kind)."""
        self._usage.check_budget()
        self._usage.requests += 1
        try:
            if self._streams is None:
                self._streams = streams(self._provider)
            if self._streams:
                provider = cast(StreamingProvider, self._provider)
                response = await provider.stream(request, self._owner.streamed)
            else:
                response = await self._provider.complete(request)
        except TimeoutError:
            raise self._timed_out() from None
        except ProviderError:
            raise
        except Exception as error:  # a provider's bug must not end the session
            raise ProviderError("provider_bug", f"{type(error).__name__}: {error}") from None
        self._usage.count(response)
        return response

    async def sample(self, request: ModelRequest) -> tuple[str, ModelResponse]:
        """A request outside the session's turns (an MCP server's sampling): to its model,
        within its budget and ``request_timeout``, counted in its usage; not streamed, and
        a failure is the asker's (``ProviderError``), not recorded as the session's."""
        model = self._config.model
        asked = replace(request, model=model)
        if self._sampling is None:  # made at the first: most sessions never sample
            self._sampling = anyio.Lock()
        async with self._sampling:  # one at a time: each sees what the last one spent
            self._usage.check_budget()
            self._usage.requests += 1
            try:
                with anyio.fail_after(self._config.request_timeout):
                    response = await self._provider.complete(asked)
            except TimeoutError:
                raise self._timed_out() from None
            except ProviderError:
                raise
            except Exception as error:  # a provider's bug must not reach the asker as one
                raise ProviderError("provider_bug", f"{type(error).__name__}: {error}") from None
            self._usage.count(response)
        return model, response

    def _timed_out(self) -> ProviderError:
        """The error of a request with no answer within ``request_timeout``."""
        seconds = self._config.request_timeout
        return ProviderError("timeout", f"no answer from the model in {seconds:g}s")

    def stop(self) -> None:
        """Cut the request in flight, if any (its reply would end the turn unheard)."""
        timeout = self._timeout
        if timeout is not None and not self._cut and not timeout.expired():
            self._cut = True
            timeout.reschedule(-math.inf)
