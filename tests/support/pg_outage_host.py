"""A host through a database outage: ``python -m tests.support.pg_outage_host DSN``.

It holds session ``s`` on the PostgreSQL at DSN and commits a first turn, prints ``ready``,
waits for a line on stdin (the test has stopped the server), then has two more turns whose
commits fail, prints ``error: ...`` for each error its session reports, and exits. Logging
is left unconfigured, as an application that configures none leaves it.
"""

from __future__ import annotations

import sys

import anyio

from agentos import Host
from agentos import PostgresStore
from agentos import Runtime
from tests.support.backends import echo
from tests.support.backends import say


async def main(dsn: str) -> None:
    async with (
        await PostgresStore.open(dsn) as store,
        Runtime([]) as runtime,
        Host(runtime, echo(), store=store, lease_period=0.5) as host,
    ):
        session = await host.create_session(session_id="s")
        await say(session, "one")
        print("ready", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.readline)
        for words in ("two", "three"):
            await say(session, words)
        for error in session.errors:
            print(f"error: {error.message}", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
