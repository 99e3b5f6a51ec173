"""A slow tool as a person writes one (``tests.support.progress_tools``): it reports a percent, then
logs a line, then works on until it is cancelled."""

from __future__ import annotations

import anyio
from pydantic import BaseModel

from agentos import ToolContext
from agentos import tool


class Nothing(BaseModel):
    pass


@tool
async def crawl(args: Nothing, ctx: ToolContext) -> str:
    """Crawl the pages, reporting how far it got."""
    ctx.progress({"percent": 40, "page": 4, "of": 10})
    ctx.log("fetched page 4")
    ctx.heartbeat()
    await anyio.sleep_forever()
    return "never"
