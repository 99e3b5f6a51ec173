"""An agent's MCP server, as its agent file describes it: a command to start (stdio) or a
URL to reach (streamable HTTP), and which of its tools the agent sees, under what names.

Data only: ``agentos._toolsets`` starts and talks to the server. ``${VAR}`` in ``env``
and ``headers`` is read from the environment when the server is started, so a secret
is never part of the configuration a session stores.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import field_validator
from pydantic import model_validator

TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""What the Messages API accepts as a tool's name."""


def check_names(names: Iterable[str], whose: str) -> None:
    """``ValueError`` for the first of ``names`` that is not a tool's name (``whose``: "a
    server's", "an A2A agent's": what the names are)."""
    for name in names:
        if not TOOL_NAME.match(name):
            raise ValueError(f"{name!r}: {whose} name is letters, digits, _ and -")


def http_url(url: str) -> str:
    """``url``, or ``ValueError`` when it is not an http:// or https:// URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{url!r} is not an http:// or https:// URL")
    return url


DEFAULT_REDIRECT = "http://127.0.0.1:33418/callback"
"""Where the authorization server sends the person's browser back (agentos's loopback
listener), unless ``redirect_uri`` says otherwise."""


class McpOAuth(BaseModel):
    """How agentos signs in to an HTTP server that asks for OAuth: the spec's flow (a 401,
    metadata discovery, registration, PKCE, the ``resource`` parameter, refresh); the scopes
    are the ones the server asks for. Its tokens are kept in a file of the user's (0600)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    client_name: str = Field(
        "agentos",
        min_length=1,
        description="The name agentos registers under (the person sees it).",
    )
    client_id: str | None = Field(
        None,
        min_length=1,
        description="A client registered beforehand (${VAR}): no dynamic registration. "
        "None: agentos registers itself (or uses client_metadata_url).",
    )
    client_secret: str | None = Field(
        None, min_length=1, description="That client's secret, if it has one (${VAR})."
    )
    client_metadata_url: str | None = Field(
        None,
        description="An https URL of agentos's client metadata document, used as its "
        "client_id where the server supports it (instead of registering).",
    )
    redirect_uri: str = Field(
        DEFAULT_REDIRECT,
        description="Where the browser comes back with the code (registered with the "
        "server): McpServer.loopback_authorize listens there, on a loopback address.",
    )
    token_file: str | None = Field(
        None,
        description="The file that keeps the tokens and the registered client (mode 0600). "
        "None: $XDG_STATE_HOME/agentos/mcp-oauth/ (~/.local/state/...), one per server "
        "name and url.",
    )

    @model_validator(mode="after")
    def _secret_needs_id(self) -> McpOAuth:
        if self.client_secret is not None and self.client_id is None:
            raise ValueError("client_secret needs the client_id it belongs to")
        return self

    @field_validator("client_metadata_url")
    @classmethod
    def _https_document(cls, url: str | None) -> str | None:
        if url is not None:
            parts = urlsplit(url)
            if parts.scheme != "https" or not parts.netloc or parts.path in ("", "/"):
                raise ValueError(f"{url!r}: client_metadata_url is an https:// URL with a path")
        return url

    @field_validator("redirect_uri")
    @classmethod
    def _http_redirect(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{url!r}: redirect_uri is an http:// or https:// URL")
        return url


class McpServerConfig(BaseModel):
    """One MCP server: exactly one of ``command`` (stdio) and ``url`` (streamable HTTP)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str | None = Field(
        None,
        min_length=1,
        description="stdio: the program to start ('python' is the Python agentos runs on).",
    )
    args: list[str] = Field(default_factory=list, description="stdio: its arguments.")
    env: dict[str, str] = Field(
        default_factory=dict,
        description="stdio: variables set for it, over PATH, HOME and the like (${VAR} read).",
    )
    cwd: str | None = Field(None, description="stdio: the directory it starts in.")
    url: str | None = Field(None, description="Streamable HTTP: the server's endpoint.")
    headers: dict[str, str] = Field(
        default_factory=dict, description="Streamable HTTP: sent with every request (${VAR})."
    )
    tools: list[str] | None = Field(
        None, description="Only these of the server's tools (None: all it lists)."
    )
    prefix: str = Field(
        "",
        description="Put before each tool's name, to avoid clashes: a tool whose name is "
        "a session capability's, a Python tool's or another server's is left out, with "
        "a warning.",
    )
    roots: list[str] = Field(
        default_factory=list,
        description="The roots the server may see (roots/list): directories, as paths or "
        "file:// URIs. None are offered unless named here.",
    )
    sampling: bool = Field(
        True,
        description="Whether the server may ask the session's own model (sampling): its "
        "budget pays, and the call shows it. false: agentos does not offer sampling.",
    )
    oauth: McpOAuth | None = Field(
        None,
        description="Streamable HTTP: sign in with OAuth when the server asks (true, or a "
        "table of its settings). None: no sign-in; a server that asks for one fails to start.",
    )
    start_timeout: float = Field(
        30.0,
        gt=0,
        le=600,
        description="Longest wait for the server to start and answer initialize and "
        "tools/list (also when it is restarted).",
    )

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of command (stdio) and url (streamable HTTP)")
        if self.url is not None:
            stray = [name for name in ("args", "env", "cwd") if getattr(self, name)]
            if stray:
                raise ValueError(f"{', '.join(stray)} apply to a command, not to a url")
        else:
            stray = [name for name in ("headers", "oauth") if getattr(self, name)]
            if stray:
                raise ValueError(f"{', '.join(stray)} apply to a url, not to a command")
        return self

    @field_validator("oauth", mode="before")
    @classmethod
    def _oauth_switch(cls, value: Any) -> Any:
        """``oauth = true`` is every default; ``false``, none."""
        if value is True:
            return {}
        return None if value is False else value

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        return None if url is None else http_url(url)

    @field_validator("prefix")
    @classmethod
    def _name_characters(cls, prefix: str) -> str:
        if prefix and not TOOL_NAME.match(prefix):
            raise ValueError(f"{prefix!r}: a prefix is letters, digits, _ and - (at most 64)")
        return prefix

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"


def shared_settings(
    tools: Sequence[str] | None, prefix: str, start_timeout: float, roots: Sequence[str]
) -> dict[str, Any]:
    """A server's settings that do not depend on its transport (``McpServer``'s
    constructors take them)."""
    return {
        "tools": None if tools is None else list(tools),
        "prefix": prefix,
        "start_timeout": start_timeout,
        "roots": list(roots),
    }
