"""An ASGI app served on 127.0.0.1 in the test's own loop: the socket listens before the
server runs, so a client never finds it not ready."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio


@asynccontextmanager
async def served(app: Any, port: int) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    """``app`` on ``port`` until the context ends or the function it gives is awaited
    (which stops it then)."""
    import uvicorn

    listening = listening_socket(port)
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    stopped = anyio.Event()

    async def serve() -> None:
        try:
            await server.serve(sockets=[listening])
        finally:
            listening.close()
            stopped.set()

    async def stop() -> None:
        server.should_exit = True
        await stopped.wait()

    async with anyio.create_task_group() as group:
        group.start_soon(serve)
        try:
            yield stop
        finally:
            await stop()


def listening_socket(port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:``port`` whose connections asyncio sends on at once.

    Its protocol is ``IPPROTO_TCP``, not 0: asyncio sets ``TCP_NODELAY`` only on a socket
    that says TCP (an accepted one inherits it from this one); without it a response
    written in two parts waits for the client's delayed ACK, about 40 ms each time."""
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listening.bind(("127.0.0.1", port))
    listening.listen()
    return listening


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
