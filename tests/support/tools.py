"""Tools a module gives when an agent names it by import path (``tests.support.tools``)."""

from __future__ import annotations

from pydantic import BaseModel

from agentos import tool


class Words(BaseModel):
    text: str


class Nothing(BaseModel):
    pass


@tool
def shout(args: Words) -> str:
    """Say the text in capitals."""
    return args.text.upper()


@tool
async def count(args: Nothing) -> int:
    """Count to three."""
    return 3
