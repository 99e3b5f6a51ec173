"""A host on another machine, for the failover tests: ``python -m tests.support.pg_host DSN N``.

It pretends to run on ``another-machine`` (so its leases are not freed early by a pid this
machine can see is gone), holds N sessions ``s0..`` on the PostgreSQL at DSN, each with a
``work`` call running and an ``approve`` call deferred, prints ``ready`` once every turn is
committed, and runs until it is killed. Its leases are renewed every 0.25 s and expire 30 s
after the last renewal (the test looks at them from a clock that far ahead).
"""

from __future__ import annotations

import socket
import sys

import anyio
from pydantic import BaseModel

from agentos import AgentConfig
from agentos import Disposition
from agentos import Host
from agentos import PostgresStore
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import ToolPolicy
from agentos import YieldOnTimeout
from agentos import tool
from agentos.testing import last_user_text
from agentos.testing import text
from agentos.testing import tool_calls

LEASE_EXPIRY = 30.0
CONFIG = AgentConfig(
    policy=ToolPolicy(rules={"approve": Disposition.DEFER}),
    async_yield_strategy=YieldOnTimeout(milliseconds=1),
)


class Nothing(BaseModel):
    pass


@tool
async def work(args: Nothing) -> str:
    """Work until stopped."""
    await anyio.sleep_forever()
    return "never"


@tool
async def approve(args: Nothing) -> str:
    """Wait for a human (deferred)."""
    return "never"


def script() -> ScriptedProvider:
    return ScriptedProvider(
        (
            lambda r: "work" in last_user_text(r),
            lambda r: tool_calls(("work", {}), ("approve", {})),
        ),
        (lambda r: True, lambda r: text("noted")),
    )


async def main(dsn: str, count: int) -> None:
    socket.gethostname = lambda: "another-machine"  # the leases this process writes say so
    async with (
        await PostgresStore.open(dsn) as store,
        Runtime([work, approve]) as runtime,
        Host(
            runtime,
            script(),
            store=store,
            lease_period=0.25,
            lease_expiry=LEASE_EXPIRY,
            holder="host-b",
        ) as host,
    ):
        sessions = [await host.create_session(CONFIG, session_id=f"s{n}") for n in range(count)]
        for session in sessions:
            session.post("work")
        for session in sessions:
            await session.wait_idle()  # its turn yielded, both calls outstanding
            assert len(session.outstanding()) == 2, session.outstanding()
        print("ready", flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], int(sys.argv[2]))
