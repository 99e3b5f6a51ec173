"""What a ``decorate`` rule asks of one call: how it runs, and how its result reads."""

from __future__ import annotations

import json
from dataclasses import dataclass

from agentos._kernel.json_values import dumps
from agentos._turns.agent_config import Decorate
from components import Json


@dataclass(frozen=True, slots=True)
class Decorations:
    """The decorators of one call, read once from its rule."""

    timeout: float | None = None
    retries: int = 0
    label: str | None = None
    truncate: int | None = None
    cache_key: tuple[str, str] | None = None
    """(tool, input): a completed result answers the same call again, in this session."""

    @staticmethod
    def of(decorate: Decorate | None, tool_name: str, arguments: object) -> Decorations:
        if decorate is None:
            return NO_DECORATIONS
        cache_key = None
        if decorate.option("cache"):
            cache_key = (tool_name, json.dumps(arguments, sort_keys=True, default=str))
        return Decorations(
            timeout=decorate.option("timeout"),
            retries=decorate.option("retries") or 0,
            label=decorate.option("label"),
            truncate=decorate.option("truncate"),
            cache_key=cache_key,
        )

    def render(self, value: Json) -> str:
        """A result as the model reads it (shortened if ``truncate`` says so)."""
        text = value if isinstance(value, str) else dumps(value)
        if self.truncate is not None and len(text) > self.truncate:
            cut = len(text) - self.truncate
            return f"{text[: self.truncate]}... [truncated {cut} characters]"
        return text


NO_DECORATIONS = Decorations()
