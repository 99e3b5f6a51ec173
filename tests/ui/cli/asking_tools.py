"""A tool that asks the person (``tests.ui.cli.asking_tools``): which city, and for how many
days; it says what came back."""

from __future__ import annotations

import json

from pydantic import BaseModel

from agentos import JsonObject
from agentos import ToolContext
from agentos import tool

FORM: JsonObject = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "title": "City"},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
    },
    "required": ["city"],
}


class Nothing(BaseModel):
    pass


@tool
async def where(args: Nothing, ctx: ToolContext) -> str:
    """Ask the person where to look."""
    answer = await ctx.ask("Which city?", form=FORM, source="the forecast service")
    why = "" if answer.reason is None else f" ({answer.reason})"
    return f"{answer.action.value}: {json.dumps(answer.content)}{why}"
