"""A tool that asks the person which city only once the test opens a gate, then waits at the
gate again before it ends (``tests.ui.mcp.asking_later_tools``, ``GATE_PORT`` as
``tests/support/gate_tools.py``): between the two, its session changes only by the question
and its answer."""

from __future__ import annotations

import os

import anyio
from pydantic import BaseModel

from agentos import ToolContext
from agentos import tool
from tests.support.gate_tools import PORT
from tests.ui.cli.asking_tools import FORM


class Nothing(BaseModel):
    pass


async def _gate() -> None:
    async with await anyio.connect_tcp("127.0.0.1", int(os.environ[PORT])) as gate:
        await gate.receive()  # until the test opens the gate (or the call is cancelled)


@tool
async def later(args: Nothing, ctx: ToolContext) -> str:
    """Ask the person where to look, when the test says so."""
    await _gate()
    answer = await ctx.ask("Which city?", form=FORM, source="the forecast service")
    ctx.progress({"answered": answer.action.value})
    await _gate()
    return answer.action.value
