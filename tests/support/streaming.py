"""A model reply streamed by the real SDK from the Messages API's stand-in, held half-way: how
each face's test shows a reply as it forms (issue 28)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from agentos import AnthropicProvider
from agentos.testing import MessagesStandIn
from agentos.testing import Reply
from agentos.testing import message_body


@asynccontextmanager
async def streaming_a_call() -> AsyncIterator[tuple[MessagesStandIn, AnthropicProvider]]:
    """The stand-in, streaming "Let me look." and a ``puppet({"label": "p"})`` call in small
    pieces, then hanging once the call's block is whole; and the SDK's provider on it."""
    puppet_use = {"type": "tool_use", "id": "toolu_p", "name": "puppet", "input": {"label": "p"}}
    reply = message_body([{"type": "text", "text": "Let me look."}, puppet_use], "tool_use")
    with MessagesStandIn() as api:
        api.script(Reply(200, reply, chunk=4, stop_after=13, then="hang"))  # to the block's end
        provider = AnthropicProvider(api_key="sk-test", base_url=api.url, max_retries=0)
        yield api, provider
        await provider.aclose()
