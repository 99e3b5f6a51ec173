"""A tool held on a gate the test opens (``tests/ui/cli/test_live.py``), never on a duration:
it reports where it is, then waits for a byte on a socket the test listens on
(``GATE_PORT``), so it ends when the test says so, or when it is cancelled, however busy
the machine is. ``gate`` is that socket, on the test's side.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc
from anyio.abc import SocketListener
from pydantic import BaseModel

from agentos import ToolContext
from agentos import tool

PORT = "GATE_PORT"
"""The variable holding the port of the test's socket, on 127.0.0.1."""


@asynccontextmanager
async def gate(env: dict[str, str]) -> AsyncIterator[SocketListener]:
    """Where ``held`` waits; ``env`` is given its port."""
    async with await anyio.create_tcp_listener(local_host="127.0.0.1") as listeners:
        (listener,) = listeners.listeners
        assert isinstance(listener, SocketListener)
        env[PORT] = str(listener.extra(anyio.abc.SocketAttribute.local_port))
        yield listener


class Lookup(BaseModel):
    person: str = "Jane"


@tool
async def held(args: Lookup, ctx: ToolContext) -> str:
    """Look up ``person``, once the test opens the gate."""
    async with await anyio.connect_tcp("127.0.0.1", int(os.environ[PORT])) as opened:
        ctx.progress({"person": args.person, "percent": 50})
        await opened.receive()  # until the test opens the gate (or the call is cancelled)
    return f"{args.person} is free"
