"""An MCP server behind OAuth, for the tests: the ``mcp`` SDK's own authorization server
routes (metadata, dynamic registration, authorize, token) over an in-memory provider, and
one tool, ``echo``, that only a signed-in client may call. ``serve_oauth(port)`` serves it
on 127.0.0.1 in the test's event loop and gives its ``Provider``, whose counts say what the
client did (signed in, refreshed) and whose switches make it refuse or expire tokens at once.
"""

from __future__ import annotations

import secrets
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.provider import AuthorizationCode
from mcp.server.auth.provider import AuthorizationParams
from mcp.server.auth.provider import AuthorizeError
from mcp.server.auth.provider import IdentityAssertionParams
from mcp.server.auth.provider import RefreshToken
from mcp.server.auth.provider import TokenError
from mcp.server.auth.provider import construct_redirect_uri
from mcp.server.auth.settings import AuthSettings
from mcp.server.auth.settings import ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull
from mcp.shared.auth import OAuthToken


class Provider:
    """Clients, codes and tokens, in memory; every sign-in is granted unless ``refuse``."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.lifetimes: list[int] = []
        """``expires_in`` of the next access tokens it gives, in turn (0: expired as soon as
        given); then an hour each."""
        self.refuse = False
        self.signed_in = 0
        self.refreshed = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        if self.refuse:
            raise AuthorizeError("access_denied", "the person said no")
        code = secrets.token_urlsafe(16)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        self.signed_in += 1
        return self._tokens(authorization_code.client_id, authorization_code.scopes)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]
        self.refreshed += 1
        return self._tokens(refresh_token.client_id, scopes or refresh_token.scopes)

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(getattr(token, "token", ""), None)

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: IdentityAssertionParams
    ) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "no enterprise sign-in here")

    def _tokens(self, client_id: str, scopes: list[str]) -> OAuthToken:
        """New tokens; the access tokens given before are no longer good."""
        self.access.clear()
        access, refresh = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        return OAuthToken(
            access_token=access,
            expires_in=self.lifetimes.pop(0) if self.lifetimes else 3600,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )


def oauth_app(port: int, provider: Provider) -> MCPServer:
    """The server at ``http://127.0.0.1:PORT/mcp``, its own authorization server."""
    base = f"http://127.0.0.1:{port}"
    app = MCPServer(
        "agentos-test-oauth",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            client_registration_options=ClientRegistrationOptions(enabled=True),
            validate_token_resource=False,
        ),
    )

    @app.tool()
    def echo(text: str) -> str:
        """Say it back."""
        return text

    return app


@asynccontextmanager
async def serve_oauth(port: int) -> AsyncIterator[Provider]:
    """The server on 127.0.0.1:``port`` (listening before this yields) until the block ends."""
    import uvicorn

    provider = Provider()
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listening.bind(("127.0.0.1", port))
    listening.listen()
    app = oauth_app(port, provider).streamable_http_app()
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1, lifespan="on")
    )
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve, [listening])
        try:
            yield provider
        finally:
            server.should_exit = True
    listening.close()
