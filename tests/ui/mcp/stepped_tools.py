"""A tool held on a gate the test opens (``GATE_PORT``, as ``tests/support/gate_tools.py``)
that reports a step each time the test sends ``s`` and ends when it sends ``g``: a running
call whose progress the test makes, for ``test_tasks.py``."""

from __future__ import annotations

import os

import anyio
from pydantic import BaseModel

from agentos import ToolContext
from agentos import tool
from tests.support.gate_tools import PORT


class Nothing(BaseModel):
    pass


@tool
async def stepped(args: Nothing, ctx: ToolContext) -> str:
    """Take a step each time the gate says so, until it says go."""
    step = 0
    async with await anyio.connect_tcp("127.0.0.1", int(os.environ[PORT])) as gate:
        ctx.progress({"step": step})
        while True:
            for byte in await gate.receive():
                if byte == ord("g"):
                    return f"done after {step} steps"
                step += 1
                ctx.progress({"step": step})
