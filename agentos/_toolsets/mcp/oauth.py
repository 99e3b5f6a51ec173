"""Signing in to an HTTP MCP server with OAuth: the ``mcp`` SDK's ``OAuthClientProvider``
(the 401 and ``WWW-Authenticate``, metadata discovery, dynamic registration, PKCE, the
``resource`` parameter, the scopes the server asks for, refresh), fed by the server's
``oauth`` settings, a ``TokenFile``, and an ``Authorize`` hook for the person's step.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs
from urllib.parse import urlsplit

import anyio

from agentos._errors import ToolsetError
from agentos._toolsets.mcp.oauth_store import TokenFile
from agentos._toolsets.mcp.oauth_store import default_token_file
from agentos._turns.mcp_config import McpOAuth

Authorize = Callable[[str], Awaitable[str]]
"""The person's step: given the authorization URL (to open in a browser), the URL the
authorization server sent the browser back to, whose query holds ``code`` and ``state``
(and ``iss``, or ``error``). Set on ``McpServer.authorize``; ``loopback_authorize`` is one."""

logging.getLogger("mcp.client.auth").addHandler(logging.NullHandler())  # a library prints nothing

_START: ContextVar[anyio.CancelScope | None] = ContextVar("agentos_mcp_start", default=None)


@contextmanager
def start_timed_by(scope: anyio.CancelScope) -> Iterator[None]:
    """While open, the time a person takes to sign in is not counted against ``scope``'s
    deadline (the server's start timeout), however long they take."""
    token = _START.set(scope)
    try:
        yield
    finally:
        _START.reset(token)


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
    from mcp.shared.auth import OAuthClientInformationFull
    from mcp.shared.auth import OAuthClientMetadata
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
    return _provider_class()(
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


def _provider_class() -> Any:
    """The SDK's provider, told when the stored token expires (it forgets across restarts,
    and would send the person to sign in again where a refresh does)."""
    from mcp.client.auth import OAuthClientProvider

    class Provider(OAuthClientProvider):
        async def _initialize(self) -> None:
            await super()._initialize()
            storage = self.context.storage
            if isinstance(storage, TokenFile) and self.context.current_tokens is not None:
                self.context.token_expiry_time = storage.expires_at

    return Provider


class _PersonStep:
    """One ``Authorize`` as the SDK's two handlers (send the person, then read the code the
    browser brought back); with none, the error that says a sign-in is needed."""

    def __init__(self, name: str, authorize: Authorize | None) -> None:
        self._name = name
        self._authorize = authorize
        self._came_back: str | None = None

    async def redirect(self, authorization_url: str) -> None:
        if self._authorize is None:
            raise ToolsetError(
                f"mcp_servers.{self._name}: the server needs a person to sign in (OAuth) and "
                "nobody can be asked: set the McpServer's authorize hook (loopback_authorize "
                "asks a person at a terminal, as agentos run and chat do); once signed in, the "
                "kept token serves"
            )
        start = _START.get()  # the SDK sends this request in the context that started it
        deadline = math.inf if start is None else start.deadline
        began = anyio.current_time()
        if start is not None:
            start.deadline = math.inf
        try:
            self._came_back = await self._authorize(authorization_url)
        finally:
            if start is not None:
                start.deadline = deadline + (anyio.current_time() - began)

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
