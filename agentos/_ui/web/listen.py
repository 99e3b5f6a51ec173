"""The socket ``agentos serve`` listens on, set for pages: no Nagle delay, and a bound on a
page that stops reading.

``TCP_NODELAY``: asyncio sets it only on sockets made with ``proto=IPPROTO_TCP``
and ``socket.create_server`` makes them with 0, so a response written in two
parts (headers, then body) waited for the client's delayed ACK: 40 ms on 8 %
of API answers. A stream the server stops sending to (``stall_seconds``) may
still hold what its socket buffered: with ``TCP_USER_TIMEOUT`` (Linux) the
kernel drops a connection whose data waited that long for a reader, and
everything it held goes with it. Accepted connections inherit both.
"""

from __future__ import annotations

import socket

from agentos._ui.web.limits import STALL_SECONDS


def listen(bind: str, port: int, *, stall_seconds: float | None = STALL_SECONDS) -> socket.socket:
    """A socket listening on ``bind``:``port`` (0: any free port), for ``uvicorn.Server.serve``.
    ``OSError`` when the address cannot be had."""
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    listening = socket.create_server((bind, port), family=family)
    listening.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    timeout = getattr(socket, "TCP_USER_TIMEOUT", None)
    if stall_seconds is not None and timeout is not None:
        listening.setsockopt(socket.IPPROTO_TCP, timeout, int(stall_seconds * 1000))
    return listening
