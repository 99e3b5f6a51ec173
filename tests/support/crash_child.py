"""A process that runs sessions against a store until it is killed (for test_crash).

Prints ``committed <session> <messages>`` after each turn is committed.
"""

from __future__ import annotations

import logging
import sys
import uuid

import anyio
import structlog
from pydantic import BaseModel

from agentos import AgentConfig
from agentos import Disposition
from agentos import Host
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import SqliteStore
from agentos import ToolPolicy
from agentos import YieldOnTimeout
from agentos import tool
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import text
from agentos.testing import tool_calls


class Empty(BaseModel):
    pass


@tool
async def quick(args: Empty) -> str:
    return "quick result"


@tool
async def slow(args: Empty) -> str:
    await anyio.sleep(3600)
    return "never"


@tool
async def approve(args: Empty) -> str:
    return "approved here"


PROVIDER = ScriptedProvider(
    (
        lambda r: "work" in last_user_text(r) and not last_tool_results(r),
        lambda r: tool_calls(("quick", {}), ("slow", {}), ("approve", {})),
    ),
    (lambda r: True, lambda r: text("on it")),
)
CONFIG = AgentConfig(
    policy=ToolPolicy(rules={"approve": Disposition.DEFER}),
    async_yield_strategy=YieldOnTimeout(milliseconds=5),
)


async def main(path: str) -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    async with (
        await SqliteStore.open(path) as store,
        Runtime([quick, slow, approve]) as runtime,
        Host(runtime, PROVIDER, store=store) as host,
    ):
        sessions = [
            await host.create_session(CONFIG, session_id=f"crash-{uuid.uuid4().hex[:8]}")
            for _ in range(3)
        ]
        number = 0
        while True:
            for session in sessions:
                number += 1
                session.post(f"work item {number}" if number % 2 else f"chat {number}")
                await session.wait_idle()
                print(f"committed {session.session_id} {len(session.history)}", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
