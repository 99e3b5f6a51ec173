"""``agentos a2a`` as the tests run it: an agent file, the server in a process of its own,
the A2A SDK's client (``ClientFactory``, its JSON-RPC transport) connected to it, two hosts
on one store, and what a task's stream says (``said``, ``state``, ``started``)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import asynccontextmanager
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx
from a2a.client import Client
from a2a.client import ClientConfig
from a2a.client import ClientFactory
from a2a.helpers import get_message_text
from a2a.helpers import new_data_part
from a2a.helpers import new_text_part
from a2a.types.a2a_pb2 import Message
from a2a.types.a2a_pb2 import Part
from a2a.types.a2a_pb2 import Role
from a2a.types.a2a_pb2 import SendMessageRequest
from a2a.types.a2a_pb2 import StreamResponse
from a2a.types.a2a_pb2 import TaskState
from anyio.abc import SocketListener

from tests.support.gate_tools import gate
from tests.support.serving import serving


def agent_file(tmp_path: Path, module: str, more: str = "") -> str:
    """The agent ``worker``, of the offline model, with ``module``'s tools."""
    path = tmp_path / "worker.toml"
    path.write_text(f'name = "worker"\nmodel = "test"\ntools = ["{module}"]\n{more}')
    return str(path)


@contextmanager
def a2a_server(
    tmp_path: Path,
    env: dict[str, str],
    *,
    options: Sequence[str] = (),
    module: str = "tests.support.tools",
    agent: str = "",
    said_after: list[str] | None = None,
) -> Iterator[tuple[str, str | None]]:
    """``agentos a2a --port 0`` running: its URL and token (None with ``--no-token``), read
    off its first line; what it wrote to stderr after that goes into ``said_after``.
    ``agent``: the rest of the agent file's TOML."""
    args = ["a2a", "--agent", agent_file(tmp_path, module, agent), *options]
    with serving(args, env, "agentos: A2A at ", said_after) as words:
        yield words[3], (words[5] if words[4] == "token:" else None)


@asynccontextmanager
async def connected(
    url: str, token: str | None, *, streaming: bool = True
) -> AsyncIterator[Client]:
    """The SDK's client for the agent at ``url`` (its card read from there), showing
    ``token`` on every request."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(30.0, read=None)) as http:
        config = ClientConfig(httpx_client=http, streaming=streaming)
        client = await ClientFactory(config).create_from_url(url)
        async with client:
            yield client


@asynccontextmanager
async def a2a_client(
    tmp_path: Path,
    env: dict[str, str],
    *,
    streaming: bool = True,
    options: Sequence[str] = (),
    module: str = "tests.support.tools",
    agent: str = "",
) -> AsyncIterator[Client]:
    """The SDK's client ``connected`` to an ``a2a_server`` of its own (given ``options``,
    ``module`` and ``agent``), the two given a minute at most."""
    with (
        a2a_server(tmp_path, env, options=options, module=module, agent=agent) as (url, token),
        anyio.fail_after(60),
    ):
        async with connected(url, token, streaming=streaming) as client:
            yield client


@asynccontextmanager
async def two_hosts(
    tmp_path: Path, env: dict[str, str], *, other_streams: bool = True
) -> AsyncIterator[tuple[SocketListener, Client, Client]]:
    """Two ``agentos a2a`` on one store and token, each with the tool held on the ``gate``
    (listening first), a client of each: the first's runs the tasks, the other's
    (``other_streams`` or not) is another host's; a minute at most."""
    mine = ["--token", "mine"]
    module = "tests.support.gate_tools"
    async with gate(env) as listener:
        with (
            a2a_server(tmp_path, env, options=mine, module=module) as (url, token),
            a2a_server(tmp_path, env, options=mine, module=module) as (there, _),
            anyio.fail_after(60),
        ):
            async with (
                connected(url, token) as runner,
                connected(there, token, streaming=other_streams) as other,
            ):
                yield listener, runner, other


def message(
    text: str | None = None,
    *,
    data: dict[str, object] | None = None,
    context_id: str | None = None,
    task_id: str | None = None,
) -> SendMessageRequest:
    """A user's message: its text (or data), in a context or on a task."""
    parts: list[Part] = []
    if text is not None:
        parts.append(new_text_part(text))
    if data is not None:
        parts.append(new_data_part(data))
    sent = Message(
        role=Role.ROLE_USER,
        parts=parts,
        message_id=uuid.uuid4().hex,
        context_id=context_id,
        task_id=task_id,
    )
    return SendMessageRequest(message=sent)


async def everything(stream: AsyncIterator[StreamResponse]) -> list[StreamResponse]:
    """Every event of a stream, to its end."""
    return [event async for event in stream]


def said(event: StreamResponse) -> str:
    """What a streamed status update's message says ("" for another event)."""
    if not event.HasField("status_update"):
        return ""
    return get_message_text(event.status_update.status.message)


def state(event: StreamResponse) -> TaskState:
    """The task's state an event tells (its status update's, or the task's)."""
    if event.HasField("task"):
        return event.task.status.state
    return event.status_update.status.state


async def started(events: AsyncIterator[StreamResponse], line: str) -> str:
    """Read a task's stream until a status message says ``line``: the task's id."""
    task_id = (await anext(events)).task.id
    async for event in events:
        if line in said(event):
            return task_id
    raise AssertionError(f"the stream ended before saying {line}")
