"""Whose a request to ``agentos mcp`` is: over HTTP, the holder of the token it shows, on
any connection; without a token, its connection (its MCP session); on stdio, the one client.
A 2026-07-28 request has no connection, so without a token that protocol is refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from mcp import MCPError
from mcp.server.context import CallNext
from mcp.server.context import HandlerResult
from mcp.server.context import ServerRequestContext
from mcp_types import UNSUPPORTED_PROTOCOL_VERSION
from mcp_types import UnsupportedProtocolVersionErrorData
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from mcp_types.version import LATEST_HANDSHAKE_VERSION
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

MCP_SESSION_HEADER = "mcp-session-id"


async def one_client_each(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """Without a token, a client is its connection; a 2026-07-28 request over HTTP has none
    (no ``Mcp-Session-Id``), so whose it is cannot be told, and every such client would be
    one owner, seeing the others' sessions. That protocol is refused then (``-32022``, naming
    the handshake protocols): a client that probes for it speaks 2025-11-25 instead."""
    headers = getattr(ctx.request, "headers", None)
    if (
        headers is not None
        and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        and not headers.get("authorization")
    ):
        refusal = UnsupportedProtocolVersionErrorData(
            supported=list(HANDSHAKE_PROTOCOL_VERSIONS), requested=ctx.protocol_version
        )
        raise MCPError(
            UNSUPPORTED_PROTOCOL_VERSION,
            f"without a token agentos mcp tells clients apart by their connection, which protocol "
            f"{ctx.protocol_version} has not: speak {LATEST_HANDSHAKE_VERSION} (initialize)",
            refusal.model_dump(mode="json"),
        )
    return await call_next(ctx)


def owner_of(headers: Mapping[str, str] | None) -> str:
    """Whose sessions a request may see: over HTTP, the holder of the token it shows, on
    whichever connection it comes (a one-shot client follows up from a new one); without a
    token (loopback only) nobody is known, so its connection; on stdio, the one client."""
    shown = None if headers is None else headers.get("authorization")
    if not shown:
        return client_of(headers)
    return "token " + hashlib.sha256(shown.encode()).hexdigest()


def client_of(headers: Mapping[str, str] | None) -> str:
    """Who asks: over HTTP, its MCP session, the one whose id the server gave it at
    ``initialize`` (and which only it knows); on stdio, the one client."""
    return (headers or {}).get(MCP_SESSION_HEADER, "stdio")
