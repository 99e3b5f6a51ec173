"""``TokenFile``: where agentos keeps an MCP server's OAuth tokens and its registered
client, so that a person signs in once, not at every start.

One JSON file per server, mode 0600 in a directory of mode 0700, written whole to a
temporary file and renamed over the old one, so a crash never leaves half a token. A file
that cannot be read or is not what agentos wrote is a ``ToolsetError`` naming it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from pydantic import ValidationError

from agentos._errors import ToolsetError

if TYPE_CHECKING:
    from mcp.shared.auth import OAuthClientInformationFull
    from mcp.shared.auth import OAuthToken


def default_token_file(name: str, url: str, environ: Mapping[str, str]) -> Path:
    """``$XDG_STATE_HOME/agentos/mcp-oauth/NAME-HASH.json`` (``~/.local/state`` without
    it): one file per server name and URL, so a server moved elsewhere signs in afresh."""
    state = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    digest = hashlib.sha256(url.encode()).hexdigest()[:12]
    return Path(state) / "agentos" / "mcp-oauth" / f"{name}-{digest}.json"


class TokenFile:
    """The SDK's ``TokenStorage`` on disk: read once when made, written at each change."""

    def __init__(self, path: Path, setting: str) -> None:
        """``setting`` names the server's settings in errors (``mcp_servers.NAME.oauth``)."""
        self.path = path
        self._setting = setting
        self._saved: dict[str, Any] = self._read()
        self.preregistered: OAuthClientInformationFull | None = None
        """A client registered beforehand (the settings' client_id): used, never written,
        so its secret stays in the environment it came from."""

    def _read(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as error:
            raise self._error(f"cannot be read ({_why(error)})") from None
        try:
            saved = json.loads(text)
        except ValueError:
            saved = None
        if not isinstance(saved, dict) or not set(saved) <= {"tokens", "expires_at", "client_info"}:
            raise self._error("is not an agentos token file; delete it to sign in again")
        try:
            self._tokens(saved)
            self._client(saved)
            if not isinstance(saved.get("expires_at", 0.0), int | float):
                raise self._error("holds a bad expires_at; delete it to sign in again")
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise self._error(
                f"holds a bad {where or 'entry'} ({first['msg']}); delete it to sign in again"
            ) from None
        return saved

    @staticmethod
    def _tokens(saved: Mapping[str, Any]) -> OAuthToken | None:
        from mcp.shared.auth import OAuthToken

        found = saved.get("tokens")
        return None if found is None else OAuthToken.model_validate(found)

    @staticmethod
    def _client(saved: Mapping[str, Any]) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull

        found = saved.get("client_info")
        return None if found is None else OAuthClientInformationFull.model_validate(found)

    async def get_tokens(self) -> OAuthToken | None:
        return self._tokens(self._saved)

    async def set_tokens(self, tokens: OAuthToken) -> None:
        lifetime = tokens.expires_in
        expires_at = None if lifetime is None else time.time() + int(lifetime)
        self._write(
            {"tokens": tokens.model_dump(mode="json", exclude_none=True), "expires_at": expires_at}
        )

    @property
    def expires_at(self) -> float | None:
        """When the stored access token expires (seconds since the epoch; None: unknown)."""
        found = self._saved.get("expires_at")
        return None if found is None else float(found)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.preregistered or self._client(self._saved)

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self.preregistered is not None:
            self.preregistered = client_info
            return
        self._write({"client_info": client_info.model_dump(mode="json", exclude_none=True)})

    def _write(self, changed: dict[str, Any]) -> None:
        saved = {key: value for key, value in (self._saved | changed).items() if value is not None}
        folder = self.path.parent
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{self.path.name}.")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out:  # mkstemp: mode 0600
                    json.dump(saved, out, indent=1)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(temporary, self.path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError as error:
            raise self._error(f"cannot be written ({_why(error)})") from None
        self._saved = saved

    def _error(self, what: str) -> ToolsetError:
        return ToolsetError(f"{self._setting}: the token file {self.path} {what}")


def _why(error: BaseException) -> str:
    return str(getattr(error, "strerror", None) or error)
