"""A tool for the tests of ``agentos mcp``: it reports three steps, then works until it is
cancelled, and then writes ``cancelled`` to the file ``$AGENTOS_TEST_MARK`` names."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
from pydantic import BaseModel

from agentos import ToolContext
from agentos import tool


class Nothing(BaseModel):
    pass


@tool
async def slow_steps(args: Nothing, ctx: ToolContext) -> str:
    """Report three steps, then work until cancelled."""
    for step in range(3):
        ctx.progress({"step": step})
    try:
        await anyio.sleep_forever()
    except anyio.get_cancelled_exc_class():
        Path(os.environ["AGENTOS_TEST_MARK"]).write_text("cancelled")  # noqa: ASYNC240 - tiny
        raise
    return "never"
