"""Python tools an agent file names by import path (``my_tools``, ``my_tools:word_count``)."""

from pydantic import BaseModel

from agentos import tool


class Text(BaseModel):
    text: str


@tool
def word_count(args: Text) -> int:
    """Count the words of a text."""
    return len(args.text.split())
