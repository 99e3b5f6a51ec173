"""``agentos mcp --http``: the MCP server as an ASGI app on an address, guarded.

With a token, every request shows it (``guard``). Without one, only a loopback address
may be bound, so nothing off this machine reaches it; either way the SDK's ``Host`` and
``Origin`` guard refuses what a page elsewhere (or a DNS-rebound name) sends. Streams
can be resumed (``replay``): each starts with a priming event that says how soon to
reconnect.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp

from agentos._ui.loopback import refusal
from agentos._ui.mcp.guard import BearerGuard
from agentos._ui.mcp.replay import RecentEvents

RETRY_MS = 1000
"""How long a client waits before reconnecting to a stream that dropped (the SSE ``retry``)."""
PATH = "/mcp"


def endpoint(bind: str, port: int) -> str:
    """The URL clients use for a server bound to ``bind``:``port``."""
    shown = f"[{bind}]" if ":" in bind else bind
    return f"http://{shown}:{port}{PATH}"


def http_app(server: MCPServer, bind: str, port: int, token: str | None) -> ASGIApp:
    """The app to serve on ``bind``:``port``; ``ValueError`` when ``refusal`` says why not."""
    refused = refusal(bind, token)
    if refused:
        raise ValueError(refused)
    shown = f"[{bind}]" if ":" in bind else bind
    hosts = [f"{name}:*" for name in ("127.0.0.1", "localhost", "[::1]", shown)]
    security = TransportSecuritySettings(
        allowed_hosts=list(dict.fromkeys(hosts)),
        allowed_origins=[f"http://{host}" for host in dict.fromkeys(hosts)],
    )
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        event_store=RecentEvents(),
        retry_interval=RETRY_MS,
        transport_security=security,
        host=bind,
    )
    return app if token is None else BearerGuard(app, token, endpoint(bind, port))
