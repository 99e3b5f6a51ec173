"""A tool that reports 300 steps before it answers (``tests.ui.a2a.chatty_tools``), so a
task's turn tells many call events."""

from __future__ import annotations

from pydantic import BaseModel

from agentos import ToolContext
from agentos import tool

STEPS = 300


class Nothing(BaseModel):
    pass


@tool
async def chatty(args: Nothing, ctx: ToolContext) -> str:
    """Report every step, then say how many there were."""
    for step in range(STEPS):
        ctx.progress({"step": step})
    return f"{STEPS} steps"
