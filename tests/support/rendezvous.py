"""A tool that proves two calls run at the same time: each waits until both have started."""

from __future__ import annotations

from typing import Any

import anyio

from agentos import Tool
from agentos import ToolContext
from agentos import tool
from tests.support.arguments import Empty


def rendezvous() -> Tool[Any]:
    """A fresh ``rendezvous`` tool: each call returns "met" once two calls have started, so
    two calls run one after the other would hang."""
    started: list[str] = []
    both_started = anyio.Event()

    @tool
    async def rendezvous(args: Empty, ctx: ToolContext) -> str:
        started.append(ctx.call_id)
        if len(started) == 2:
            both_started.set()
        await both_started.wait()
        return "met"

    return rendezvous
