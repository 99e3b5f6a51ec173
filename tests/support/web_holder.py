"""Another process holding a session, for the page's Take over test:
``python -m tests.support.web_holder DB [MODEL]``.

It creates session ``held`` in the SQLite store at DB (its agent's ``model`` MODEL if
given, which this process does not import: its own scripted model answers), has one turn
("hello", answered "ok"), commits it, prints ``ready`` and its holder name, and holds the
session (renewing its lease) until its stdin closes.
"""

from __future__ import annotations

import sys

import anyio
import anyio.to_thread

from agentos import AgentConfig
from agentos import Host
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import SqliteStore
from agentos.testing import text


async def main(path: str, named: str | None) -> None:
    model = ScriptedProvider((lambda request: True, lambda request: text("ok")))
    async with (
        await SqliteStore.open(path) as store,
        Runtime([]) as runtime,
        Host(runtime, model, store=store) as host,
    ):
        config = AgentConfig() if named is None else AgentConfig(model=named)
        session = await host.create_session(config, session_id="held", provider=model)
        session.post("hello")
        await session.wait_idle()
        await session.commit()
        print("ready", host.holder, flush=True)
        await anyio.to_thread.run_sync(sys.stdin.read)  # until the test closes it


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
