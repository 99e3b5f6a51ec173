"""``agentos mcp`` as the tests run it: an agent file, the server over HTTP in a process of
its own, and the ``mcp`` SDK's client connected to it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import asynccontextmanager
from contextlib import contextmanager
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.session import ElicitationFnT
from mcp.client.session import LoggingFnT
from mcp.client.session import MessageHandlerFnT
from mcp.client.streamable_http import streamable_http_client

from tests.support.serving import serving

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
"""A raw ``initialize`` request, for tests that speak HTTP themselves."""
ACCEPT = {"Accept": "application/json, text/event-stream"}
"""What a streamable HTTP client accepts on a ``POST``."""


def agent_file(tmp_path: Path, module: str, more: str = "") -> str:
    """The agent ``worker``, of the offline model, with ``module``'s tools (``more``: the
    rest of its TOML)."""
    path = tmp_path / "worker.toml"
    path.write_text(f'name = "worker"\nmodel = "test"\ntools = ["{module}"]\n{more}')
    return str(path)


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result
    value = result.structured_content
    assert isinstance(value, dict)
    return value


@contextmanager
def http_server(
    tmp_path: Path,
    env: dict[str, str],
    said_after: list[str] | None = None,
    *,
    options: Sequence[str] = (),
    module: str = "tests.support.tools",
    agent: str = "",
    within: float | None = None,
) -> Iterator[tuple[str, str | None]]:
    """``agentos mcp --http 0`` running: its URL and token (None with ``--no-token``), read
    off its first line; what it wrote to stderr after that line goes into ``said_after``
    once it has stopped. ``agent``: the rest of the agent file's TOML. ``within``: the
    seconds an async test has, once the server is up, before it fails (None: no bound)."""
    agent = agent_file(tmp_path, module, agent)
    args = ["mcp", "--agent", agent, "--http", "0", *options]
    with (
        serving(args, env, "agentos: MCP at ", said_after) as words,
        nullcontext() if within is None else anyio.fail_after(within),
    ):
        yield words[3], (words[5] if words[4] == "token:" else None)


@asynccontextmanager
async def connected(
    url: str,
    token: str | None,
    *,
    logging_callback: LoggingFnT | None = None,
    message_handler: MessageHandlerFnT | None = None,
    elicitation_callback: ElicitationFnT | None = None,
) -> AsyncIterator[ClientSession]:
    """The SDK's client, initialized, over streamable HTTP (with the token, if any); given an
    ``elicitation_callback``, it declares elicitation."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=None)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(
            read,
            write,
            logging_callback=logging_callback,
            message_handler=message_handler,
            elicitation_callback=elicitation_callback,
        ) as client,
    ):
        await client.initialize()
        yield client
