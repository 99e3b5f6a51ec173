"""Tools the Ray tests run on a local Ray cluster (``tests/test_ray.py``)."""

from __future__ import annotations

import os
import threading
import time

from pydantic import BaseModel

from agentos import ToolContext, tool


class Steps(BaseModel):
    steps: int = 3
    hang: bool = False


class Nothing(BaseModel):
    pass


@tool
def stepper(args: Steps, ctx: ToolContext) -> str:
    """Report each step (and the worker's pid), then answer, or work until stopped."""
    ctx.progress({"pid": os.getpid()})
    for step in range(args.steps):
        ctx.progress({"step": step})
    while args.hang:
        time.sleep(0.05)
    return f"{args.steps} steps"


@tool
async def async_stepper(args: Steps, ctx: ToolContext) -> str:
    """The same, as an async tool."""
    for step in range(args.steps):
        ctx.progress({"step": step})
    return f"{args.steps} async steps"


@tool
def broken(args: Nothing) -> str:
    """Raises."""
    raise ValueError("the input data is bad")


@tool
def unpicklable(args: Nothing) -> object:
    """Returns what cannot be sent back."""
    return threading.Lock()


@tool
def dies(args: Nothing) -> str:
    """Ends its worker process."""
    os._exit(3)


TOOLS = [stepper, async_stepper, broken, unpicklable, dies]
