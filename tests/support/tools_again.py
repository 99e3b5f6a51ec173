"""A second module with a tool named ``shout``: naming both is an error."""

from __future__ import annotations

from agentos import tool
from tests.support.tools import Words


@tool
def shout(args: Words) -> str:
    """Say the text loudly, another way."""
    return args.text.upper() + "!"
