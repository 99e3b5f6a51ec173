"""``agentos a2a`` as the tests run it: an agent file, the server in a process of its own,
and the A2A SDK's client (``ClientFactory``, its JSON-RPC transport) connected to it."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import httpx
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.helpers import new_data_part, new_text_part
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest, StreamResponse

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
