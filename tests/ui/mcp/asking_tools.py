"""A tool that asks the person which city (``tests.ui.mcp.asking_tools``), for
``test_asking.py``: it reports the answer it got as progress, and, given a gate
(``GATE_PORT``, as ``tests/support/gate_tools.py``), waits there before it says what came back.
"""

from __future__ import annotations

import json
import os

import anyio
from pydantic import BaseModel

from agentos import ToolContext
from agentos import tool
from tests.support.gate_tools import PORT
from tests.ui.cli.asking_tools import FORM


class Nothing(BaseModel):
    pass


@tool
async def where(args: Nothing, ctx: ToolContext) -> str:
    """Ask the person where to look."""
    answer = await ctx.ask("Which city?", form=FORM, source="the forecast service")
    ctx.progress({"answered": answer.action.value})
    if PORT in os.environ:
        async with await anyio.connect_tcp("127.0.0.1", int(os.environ[PORT])) as gate:
            await gate.receive()  # until the test opens the gate (or the call is cancelled)
    why = "" if answer.reason is None else f" ({answer.reason})"
    return f"{answer.action.value}: {json.dumps(answer.content)}{why}"
