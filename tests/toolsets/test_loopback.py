"""The loopback server the toolset tests (and benchmarks) serve MCP servers and A2A agents
on answers without Nagle's wait: its connections are sent on at once."""

from __future__ import annotations

import asyncio
import socket

import anyio
import pytest

from tests.support.asgi import free_port
from tests.support.asgi import listening_socket

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_connection_the_served_socket_accepts_has_tcp_nodelay() -> None:
    nodelay: list[int] = []

    async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        nodelay.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    port = free_port()
    server = await asyncio.start_server(accepted, sock=listening_socket(port))
    async with server:
        with anyio.fail_after(10):
            stream = await anyio.connect_tcp("127.0.0.1", port)
            async with stream:
                with pytest.raises(anyio.EndOfStream):  # the server closes once it has looked
                    await stream.receive()
    assert nodelay and nodelay[0] != 0
