"""A host whose session's call runs as a task on an HTTP MCP server (or a remote A2A
agent), until it is killed.

``python -m tests.support.task_host DB URL TOOL [INPUT]``: a session asks for TOOL
(``research`` when not given) with INPUT (JSON; the topic "ecs" when not given), the call
runs as a task on the MCP server at URL (the A2A agent whose card is at URL, when TOOL is
``librarian``), and once the store's mirror of the call names the task it prints ``ready
SESSION`` and waits to be killed (``killed_when_ready`` does both).
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import anyio
from anyio.streams.buffered import BufferedByteReceiveStream

from agentos import A2aAgent
from agentos import AgentConfig
from agentos import Host
from agentos import JsonObject
from agentos import McpServer
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import SqliteStore
from agentos import YieldOnTimeout
from agentos.testing import last_user_text
from agentos.testing import text
from agentos.testing import tool_calls
from tests.support import ROOT

CONFIG = AgentConfig(name="researcher", async_yield_strategy=YieldOnTimeout(milliseconds=5))


TOPIC: JsonObject = {"topic": "ecs"}
A2A_TOOL = "librarian"
"""The tool that is a remote A2A agent (its card at URL), not an MCP server's."""


async def main(path: Path, url: str, tool: str, arguments: JsonObject) -> None:
    server = A2aAgent.http(tool, url) if tool == A2A_TOOL else McpServer.http("tasks", url)
    provider = ScriptedProvider(
        (
            lambda r: last_user_text(r) == "research ecs",
            lambda r: tool_calls((tool, arguments)),
        ),
        (lambda r: True, lambda r: text("on it")),
    )
    async with (
        await SqliteStore.open(path) as store,
        Runtime(toolsets=[server]) as runtime,
        Host(runtime, provider, store=store, call_mirror_period=0.05) as host,
    ):
        session = await host.create_session(CONFIG)
        session.post("research ecs")
        # The store has no news of the mirror's writes: look at it until it names the task.
        while not await _task_mirrored(store, session.session_id):  # noqa: ASYNC110
            await anyio.sleep(0.05)
        print("ready", session.session_id, flush=True)
        await anyio.sleep_forever()


async def _task_mirrored(store: SqliteStore, session_id: str) -> bool:
    rows = await store.mirrored_calls(session_id=session_id)
    return any(isinstance(row.progress, dict) and row.progress.get("task_id") for row in rows)


async def killed_when_ready(
    path: Path, url: str, tool: str = "research", arguments: JsonObject = TOPIC
) -> str:
    """Run this host on ``path``'s store and the server at ``url`` (its session calling
    ``tool`` with ``arguments``), SIGKILL it once it says ``ready``; the session it
    started."""
    argv = [
        *(sys.executable, "-m", "tests.support.task_host", str(path), url, tool),
        json.dumps(arguments),
    ]
    async with await anyio.open_process(argv, cwd=ROOT) as host:
        assert host.stdout is not None
        said = await BufferedByteReceiveStream(host.stdout).receive_until(b"\n", 1024)
        assert said.startswith(b"ready "), said
        host.send_signal(signal.SIGKILL)
        await host.wait()
    return said.decode().split()[1]


if __name__ == "__main__":
    given = sys.argv[3:]
    chosen = json.loads(given[1]) if len(given) > 1 else TOPIC
    anyio.run(main, Path(sys.argv[1]), sys.argv[2], (given or ["research"])[0], chosen)
