"""An agent's MCP server, as its agent file describes it: a command to start (stdio) or a
URL to reach (streamable HTTP), and which of its tools the agent sees, under what names.

Data only: ``agentos._toolsets`` starts and talks to the server. ``${VAR}`` in ``env``
and ``headers`` is read from the environment when the server is started, so a secret
is never part of the configuration a session stores.
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""What the Messages API accepts as a tool's name."""


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
        elif self.headers:
            raise ValueError("headers apply to a url, not to a command")
        return self

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        if url is not None:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValueError(f"{url!r} is not an http:// or https:// URL")
        return url

    @field_validator("prefix")
    @classmethod
    def _name_characters(cls, prefix: str) -> str:
        if prefix and not TOOL_NAME.match(prefix):
            raise ValueError(f"{prefix!r}: a prefix is letters, digits, _ and - (at most 64)")
        return prefix

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"
