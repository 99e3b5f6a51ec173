"""The token a streamable HTTP client must show: ``Authorization: Bearer TOKEN`` on every
request. The MCP SDK itself refuses a ``Host`` or ``Origin`` that is not this machine's."""

from __future__ import annotations

import hmac

from starlette.types import ASGIApp, Receive, Scope, Send


class BearerGuard:
    """An ASGI wrapper answering 401 to any HTTP request without the token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._allowed(scope):
            body = b'{"error": "unauthorized: send Authorization: Bearer TOKEN"}'
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b"Bearer"),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    def _allowed(self, scope: Scope) -> bool:
        given = [value for name, value in scope["headers"] if name == b"authorization"]
        return len(given) == 1 and hmac.compare_digest(given[0], self.expected)
