"""Signing in to an HTTP MCP server with OAuth: the ``mcp`` SDK's ``OAuthClientProvider``
(the 401 and ``WWW-Authenticate``, metadata discovery, dynamic registration, PKCE, the
``resource`` parameter, the scopes the server asks for, refresh), fed by the server's
``oauth`` settings, a ``TokenFile``, and an ``Authorize`` hook for the person's step.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from agentos._errors import ToolsetError
from agentos._toolsets.mcp.oauth_store import TokenFile, default_token_file
from agentos._turns.mcp_config import McpOAuth

Authorize = Callable[[str], Awaitable[str]]
"""The person's step: given the authorization URL (to open in a browser), the URL the
authorization server sent the browser back to, whose query holds ``code`` and ``state``
(and ``iss``, or ``error``). Set on ``McpServer.authorize``; ``loopback_authorize`` is one."""

logging.getLogger("mcp.client.auth").addHandler(logging.NullHandler())  # a library prints nothing


def oauth_client(
    name: str,
    url: str,
    oauth: McpOAuth,
    expand: Callable[[Mapping[str, str]], dict[str, str]],
    environ: Mapping[str, str],
    authorize: Authorize | None,
) -> Any:
    """The ``httpx2.Auth`` that signs requests to server ``name`` at ``url``: stored tokens
    first, refreshed when they expire, else the person's step through ``authorize``;
    ``expand`` reads ``${VAR}`` in the settings. ``ToolsetError`` when the token file is bad."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata
    from pydantic import AnyUrl

    setting = f"mcp_servers.{name}.oauth"
    given = {"client_id": oauth.client_id or "", "client_secret": oauth.client_secret or ""}
    client = expand(given)
    where = oauth.token_file
    path = default_token_file(name, url, environ) if where is None else Path(where).expanduser()
    storage = TokenFile(path, setting)
    redirect = [AnyUrl(oauth.redirect_uri)]
    if client["client_id"]:
        storage.preregistered = OAuthClientInformationFull(
            client_id=client["client_id"],
            client_secret=client["client_secret"] or None,
            redirect_uris=redirect,
            token_endpoint_auth_method="client_secret_basic" if client["client_secret"] else "none",
        )
    person = _PersonStep(name, authorize)
    return OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name=oauth.client_name,
            redirect_uris=redirect,
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        ),
        storage=storage,
        redirect_handler=person.redirect,
        callback_handler=person.callback,
        client_metadata_url=oauth.client_metadata_url,
    )


class _PersonStep:
    """The SDK's two handlers (send the person, wait for the code) as one ``Authorize``."""

    def __init__(self, name: str, authorize: Authorize | None) -> None:
        self._name = name
        self._authorize = authorize
        self._came_back: str | None = None

    async def redirect(self, authorization_url: str) -> None:
        if self._authorize is None:
            raise ToolsetError(
                f"mcp_servers.{self._name}: the server needs a person to sign in (OAuth) and "
                "nobody can be asked: run agentos on a terminal to sign in once, or give "
                "McpServer an authorize hook"
            )
        self._came_back = await self._authorize(authorization_url)

    async def callback(self) -> Any:
        from mcp.shared.auth import AuthorizationCodeResult

        came_back, self._came_back = self._came_back or "", None
        query = {key: values[0] for key, values in parse_qs(urlsplit(came_back).query).items()}
        if "error" in query:
            said = query.get("error_description")
            raise ToolsetError(
                f"mcp_servers.{self._name}: sign-in refused: {query['error']}"
                + (f" ({said})" if said else "")
            )
        if not query.get("code"):
            raise ToolsetError(
                f"mcp_servers.{self._name}: sign-in came back without a code: {came_back!r}"
            )
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )
