"""The archivist's one tool: a slow download that reports its progress."""

from __future__ import annotations

import anyio
from pydantic import BaseModel
from pydantic import Field

from agentos import ToolContext
from agentos import tool

ARCHIVE_MB = 2_000
CHUNK_MB = 100


class DownloadInput(BaseModel):
    year: int = Field(ge=1990, le=2100, description="Which year's archive")


@tool
async def download(args: DownloadInput, ctx: ToolContext) -> dict[str, int]:
    """Download a year's archive: 2 GB, a chunk of 100 MB every 30 seconds (slow)."""
    for done in range(0, ARCHIVE_MB, CHUNK_MB):
        ctx.progress({"percent": done * 100 // ARCHIVE_MB, "mb": done})
        await anyio.sleep(30)  # the slow work itself: cancelling the call interrupts it
    return {"year": args.year, "mb": ARCHIVE_MB}
