"""A holder host that stalls with a transaction open:
``python -m tests.support.pg_stalled_host DSN``.

It holds session ``s`` (holder ``host-a``, leases of ``LEASE_EXPIRY`` seconds) on the
PostgreSQL at DSN, commits a first turn, then holds the commit of the second one open (the
session's row locked): it prints ``open`` and waits for a line on stdin, which the test
sends once it has SIGSTOPped, taken over and SIGCONTinued it. Then it prints ``error: ...``
for each error its session reports until one says it was taken over, and exits.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import asyncpg
import asyncpg.connection
import asyncpg.transaction

from agentos import Host
from agentos import PostgresStore
from agentos import Runtime
from tests.support.backends import echo
from tests.support.backends import say

LEASE_PERIOD = 0.5
LEASE_EXPIRY = 2.0


def hold_the_turns_commit() -> None:
    """Fault injection at the driver: the next commit of a transaction that wrote messages
    waits for a line on stdin (its transaction open meanwhile), then goes ahead."""
    writing: set[object] = set()
    done: list[object] = []
    execute = asyncpg.connection.Connection.execute
    commit = asyncpg.transaction.Transaction.commit

    async def noting(self: asyncpg.connection.Connection, query: str, *args: Any) -> Any:
        if query.startswith("INSERT INTO messages"):
            writing.add(self)
        return await execute(self, query, *args)

    async def held(self: asyncpg.transaction.Transaction) -> None:
        if self._connection in writing and not done:  # type: ignore[attr-defined]
            done.append(self)
            print("open", flush=True)
            await anyio.to_thread.run_sync(sys.stdin.readline)
        await commit(self)

    asyncpg.connection.Connection.execute = noting  # type: ignore[method-assign, assignment]
    asyncpg.transaction.Transaction.commit = held  # type: ignore[method-assign]


async def main(dsn: str) -> None:
    async with (
        await PostgresStore.open(dsn) as store,
        Runtime([]) as runtime,
        Host(
            runtime,
            echo(),
            store=store,
            lease_period=LEASE_PERIOD,
            lease_expiry=LEASE_EXPIRY,
            holder="host-a",
        ) as host,
    ):
        session = await host.create_session(session_id="s")
        await say(session, "one")
        hold_the_turns_commit()
        session.post("two")
        told = 0
        with anyio.fail_after(60):
            while not any("taken over" in error.message for error in session.errors):
                for error in session.errors[told:]:
                    print(f"error: {error.message}", flush=True)
                told = len(session.errors)
                await anyio.sleep(0.05)
        for error in session.errors[told:]:
            print(f"error: {error.message}", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
