"""``loopback_authorize``: the person's sign-in step for a person at a terminal. The URL is
shown to them (the command line prints it on stderr), and a listener on the redirect URI's
loopback address takes their browser back with the code (RFC 8252's loopback redirect)."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qs
from urllib.parse import urlsplit

import anyio
from anyio.abc import SocketStream

from agentos._errors import ToolsetError
from agentos._toolsets.mcp.oauth import Authorize

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
LONGEST_REQUEST = 16_384
"""Bytes of the browser's request read at most (its line and headers)."""


def loopback_authorize(tell: Callable[[str], object], *, within: float = 300.0) -> Authorize:
    """An ``Authorize`` that gives ``tell`` the URL to open and waits, at most ``within``
    seconds, for the browser to come back to the redirect URI (a loopback address)."""

    async def authorize(url: str) -> str:
        redirect = parse_qs(urlsplit(url).query).get("redirect_uri", [""])[0]
        parts = urlsplit(redirect)
        if parts.scheme != "http" or parts.hostname not in LOOPBACK:
            raise ToolsetError(
                f"oauth.redirect_uri {redirect!r} is not an http:// loopback address "
                "(127.0.0.1, localhost): agentos cannot take the browser back there"
            )
        port = parts.port or 80
        host = "::1" if parts.hostname == "::1" else "127.0.0.1"
        try:
            listener = await anyio.create_tcp_listener(local_host=host, local_port=port)
        except OSError as error:
            raise ToolsetError(
                f"oauth.redirect_uri {redirect!r}: cannot listen on port {port} "
                f"({error.strerror or error}); name another port in oauth.redirect_uri"
            ) from None
        came_back: list[str] = []
        async with listener:
            tell(url)
            with anyio.move_on_after(within):
                async with anyio.create_task_group() as group:

                    async def answer(stream: SocketStream) -> None:
                        async with stream:
                            target = await _target(stream)
                            if target is None or urlsplit(target).path != parts.path:
                                await stream.send(_response(404, b"Not the sign-in page."))
                                return
                            await stream.send(_response(200, _said(target)))
                            came_back.append(f"{parts.scheme}://{parts.netloc}{target}")
                            group.cancel_scope.cancel()

                    await listener.serve(answer, task_group=group)
        if not came_back:
            raise ToolsetError(f"nobody signed in within {within:g} s (the URL: {url})")
        return came_back[0]

    return authorize


async def _target(stream: SocketStream) -> str | None:
    """The path and query of a browser's ``GET`` (None: not one)."""
    received = b""
    try:
        while b"\r\n\r\n" not in received and len(received) < LONGEST_REQUEST:
            received += await stream.receive()
    except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
        return None
    words = received.split(b"\r\n", 1)[0].split(b" ")
    if len(words) != 3 or words[0] != b"GET" or not words[1].startswith(b"/"):
        return None
    return words[1].decode("latin-1")


def _said(target: str) -> bytes:
    """What the browser shows: what came back, not more (agentos has yet to use the code)."""
    query = parse_qs(urlsplit(target).query)
    if "error" in query:
        text = f"The sign-in was refused ({query['error'][0]}); agentos says so too."
    elif "code" in query:
        text = "agentos has the sign-in code and goes on. You can close this tab."
    else:
        text = "This came back without a sign-in code; agentos says so too."
    return text.encode()


def _response(status: int, text: bytes) -> bytes:
    reason = {200: b"OK", 404: b"Not Found"}[status]
    head = (
        b"HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Content-Length: %d\r\nConnection: close\r\n\r\n" % (status, reason, len(text))
    )
    return head + text
