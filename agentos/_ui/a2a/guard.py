"""What every request to ``agentos a2a`` passes before the SDK reads it: a ``Host`` that names
this server (not a DNS-rebound name), an ``Origin``, when a browser sends one, of this server,
and a body no bigger than ``MAX_BODY``."""

from __future__ import annotations

import json
from collections.abc import Iterable

from starlette.types import ASGIApp
from starlette.types import Message
from starlette.types import Receive
from starlette.types import Scope
from starlette.types import Send

from agentos._ui.mcp.guard import send_json

MAX_BODY = 1024 * 1024
"""Bytes a request body may hold."""
LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")
"""The names a ``Host`` header gives this machine by (besides the address bound)."""


class RequestGuard:
    """Refuses a request whose ``Host`` (without its port) is none of ``hosts``, whose
    ``Origin`` is not ``http://`` one of them, or whose body is over ``max_body`` bytes."""

    def __init__(self, app: ASGIApp, hosts: Iterable[str], max_body: int = MAX_BODY) -> None:
        self.app = app
        self.hosts = frozenset(hosts)
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {
            name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]
        }
        refused = self._refusal(headers)
        if refused is not None:
            await _answer(send, *refused)
            return
        body = bytearray()  # read whole before the SDK, which would answer an error as 200
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_body:
                await _answer(send, 413, f"a request body is at most {self.max_body} bytes")
                return
        read: list[Message] = [{"type": "http.request", "body": bytes(body), "more_body": False}]

        async def replayed() -> Message:
            return read.pop() if read else await receive()

        await self.app(scope, replayed, send)

    def _refusal(self, headers: dict[str, str]) -> tuple[int, str] | None:
        if _name(headers.get("host", "")) not in self.hosts:
            return 421, "this server answers only for its own address (the Host header)"
        origin = headers.get("origin")
        if origin is not None and not any(
            origin == f"http://{host}" or origin.startswith(f"http://{host}:")
            for host in self.hosts
        ):
            return 403, f"a request from {origin} is refused"
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            return 413, f"a request body is at most {self.max_body} bytes"
        return None


def _name(host: str) -> str:
    """The name a ``Host`` header gives, without its port (``[::1]:8000`` is ``[::1]``)."""
    if host.startswith("["):
        return host[: host.find("]") + 1]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


async def _answer(send: Send, status: int, error: str) -> None:
    await send_json(send, status, json.dumps({"error": error}).encode(), [])
