"""A new connection's streams: a server process started (stdio) or an HTTP client made
(streamable HTTP), its settings' ``${VAR}`` read from the environment as it starts; and how
to tell a lost connection from the server's own answer, and say an error in words."""

from __future__ import annotations

import re
import sys
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from contextlib import AsyncExitStack
from functools import partial
from typing import TYPE_CHECKING
from typing import Any

import anyio

from agentos._errors import ToolsetError
from agentos._turns.mcp_config import McpServerConfig

if TYPE_CHECKING:
    from agentos._toolsets.mcp.oauth import Authorize
    from agentos._toolsets.mcp.stdio import ServerProcess

LINE_SLACK = 65_536
"""Bytes a stdio message may have beyond twice the result cap (its envelope, escapes): a
longer one fails its call unread."""
PYTHONS = frozenset({"python", "python3"})
"""Commands that mean the Python agentos runs on (its virtual environment, its mcp)."""
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


async def open_streams(
    stack: AsyncExitStack,
    name: str,
    config: McpServerConfig,
    environ: Mapping[str, str],
    max_result_chars: int | None,
    authorize: Authorize | None = None,
) -> tuple[Any, ServerProcess | None]:
    """The read and write streams of server ``name``, and its process when it has one;
    ``ToolsetError`` when it cannot start or a ``${VAR}`` is unset. ``authorize`` is the
    person's step when an HTTP server with ``oauth`` settings needs a sign-in."""
    if config.command is not None:
        from mcp.client.stdio import get_default_environment

        from agentos._toolsets.mcp.stdio import stdio_server

        env = get_default_environment() | expanded(name, config.env, "env", environ)
        command = sys.executable if config.command in PYTHONS else config.command
        argv = [command, *config.args]
        longest = None if max_result_chars is None else 2 * max_result_chars + LINE_SLACK
        try:
            streams, process = await stack.enter_async_context(
                stdio_server(argv, env, config.cwd, longest)
            )
        except OSError as error:
            raise ToolsetError(
                f"mcp_servers.{name}.command: cannot start {config.command!r}: "
                f"{error.strerror or error}"
            ) from None
        return streams, process
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    assert config.url is not None
    headers = expanded(name, config.headers, "headers", environ)
    auth: Any = None
    if config.oauth is not None:
        from agentos._toolsets.mcp.oauth import oauth_client

        expand = partial(expanded, name, setting="oauth", environ=environ)
        auth = oauth_client(name, config.url, config.oauth, expand, environ, authorize)
    hooks: dict[str, list[Callable[..., Any]]] = {}
    if auth is None:
        hooks["response"] = [partial(_refused, name)]
    client = await stack.enter_async_context(
        httpx2.AsyncClient(
            headers=headers,
            auth=auth,
            event_hooks=hooks,
            timeout=httpx2.Timeout(30.0, read=None),
        )
    )
    http: Any = streamable_http_client(config.url, http_client=client)
    return await stack.enter_async_context(http), None


async def _refused(name: str, response: Any) -> None:
    """A 401 from a server agentos has no sign-in for: say what to set."""
    if response.status_code == 401:
        raise ToolsetError(
            f"mcp_servers.{name}: the server wants a sign-in (HTTP 401): set oauth = true "
            "in its settings, or a valid token in its headers"
        )


def expanded(
    name: str,
    values: Mapping[str, str],
    setting: str,
    environ: Mapping[str, str],
    *,
    table: str = "mcp_servers",
) -> dict[str, str]:
    """``${VAR}`` replaced from ``environ``; ``ToolsetError`` naming one unset (as the
    setting of ``table.name``)."""

    def value(match: re.Match[str]) -> str:
        found = environ.get(match[1])
        if found is None:
            raise ToolsetError(
                f"{table}.{name}.{setting}: ${{{match[1]}}} is not set in the environment"
            )
        return found

    return {key: _VARIABLE.sub(value, text) for key, text in values.items()}


def leaf_error(error: BaseException) -> BaseException:
    """The first error a task group's exception group holds (the error itself if none)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def connection_lost(error: BaseException) -> bool:
    """Whether a call failed because the connection is gone (not the server's answer)."""
    from mcp import MCPError
    from mcp_types import CONNECTION_CLOSED

    if isinstance(error, MCPError):
        return error.code == CONNECTION_CLOSED
    return isinstance(error, anyio.BrokenResourceError | anyio.ClosedResourceError | OSError)


class InWords(Exception):
    """An error whose text says all of it (``said`` gives it as it is)."""


def said(error: BaseException) -> str:
    """An error in words: the server's own for its JSON-RPC error (or an ``InWords``), else
    type and text."""
    from mcp import MCPError

    error = leaf_error(error)
    text = str(getattr(error, "message", "") or error)
    if isinstance(error, MCPError | InWords) and text:
        return text
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


async def first_of(*waits: Callable[[], Awaitable[object]]) -> None:
    """Wait until one of ``waits`` returns."""
    async with anyio.create_task_group() as group:

        async def wait(one: Callable[[], Awaitable[object]]) -> None:
            await one()
            group.cancel_scope.cancel()

        for one in waits:
            group.start_soon(wait, one)
