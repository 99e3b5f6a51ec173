"""The token a streamable HTTP client must show: ``Authorization: Bearer TOKEN`` on every
request, told the way the MCP authorization spec has a client find out.

A request without it gets 401 with ``WWW-Authenticate: Bearer resource_metadata=...``,
pointing at the protected-resource metadata (RFC 9728) this guard serves to anyone: it
names the resource and says its bearer is agentos's own token, sent in the header, which
``agentos mcp`` prints (no OAuth server issues it). The MCP SDK itself refuses a ``Host``
or ``Origin`` that is not this machine's.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Collection
from urllib.parse import urlsplit

from starlette.types import ASGIApp
from starlette.types import Receive
from starlette.types import Scope
from starlette.types import Send

METADATA_PATH = "/.well-known/oauth-protected-resource"
"""Where the protected-resource metadata is (RFC 9728), and with the resource's path after
it (``.../oauth-protected-resource/mcp``), which the spec's clients try first."""


class BearerGuard:
    """An ASGI wrapper answering 401 to any HTTP request without the token, and the
    protected-resource metadata of ``resource`` (the endpoint's URL) to any ``GET``;
    ``command`` is what prints the token (or reads it from ``$variable``), ``public`` the
    paths a ``GET`` reads without it (an A2A agent's card)."""

    def __init__(
        self,
        app: ASGIApp,
        token: str,
        resource: str,
        *,
        command: str = "agentos mcp",
        variable: str = "AGENTOS_MCP_TOKEN",
        public: Collection[str] = (),
    ) -> None:
        self.app = app
        self.public = frozenset(public)
        self.expected = f"Bearer {token}".encode()
        parts = urlsplit(resource)
        origin = f"{parts.scheme}://{parts.netloc}"
        self.metadata_paths = {METADATA_PATH, METADATA_PATH + parts.path.rstrip("/")}
        self.challenge = f'Bearer resource_metadata="{origin}{METADATA_PATH}{parts.path}"'
        self.metadata = json.dumps(
            {
                "resource": resource,
                "resource_name": "agentos",
                "bearer_methods_supported": ["header"],
                "agentos_token": "the bearer is agentos's own token, not issued by an "
                f"authorization server: the one `{command}` prints, or its --token, or "
                f"${variable}; send it as 'Authorization: Bearer TOKEN'",
            }
        ).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
        elif scope["path"] in self.metadata_paths and scope["method"] == "GET":
            await send_json(send, 200, self.metadata, [])
        elif self._allowed(scope) or (scope["path"] in self.public and scope["method"] == "GET"):
            await self.app(scope, receive, send)
        else:
            body = b'{"error": "unauthorized: send Authorization: Bearer TOKEN"}'
            given = any(name == b"authorization" for name, _ in scope["headers"])
            challenge = self.challenge + (', error="invalid_token"' if given else "")
            await send_json(send, 401, body, [(b"www-authenticate", challenge.encode())])

    def _allowed(self, scope: Scope) -> bool:
        given = [value for name, value in scope["headers"] if name == b"authorization"]
        return len(given) == 1 and hmac.compare_digest(given[0], self.expected)


async def send_json(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    """Answer an HTTP request with ``status`` and the JSON ``body``, beside ``headers``."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
