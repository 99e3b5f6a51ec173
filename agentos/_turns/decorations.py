"""What a ``decorate`` rule asks of one call: how it runs, and how its result reads."""

from __future__ import annotations

import json
from dataclasses import dataclass

from agentos._kernel.json_values import dumps
from agentos._model.messages import Block
from agentos._model.messages import ToolResultBlock
from agentos._model.messages import content_blocks
from agentos._model.messages import content_text
from agentos._model.messages import tool_result
from agentos._turns.agent_config import AgentConfig
from agentos._turns.tool_policy import Decorate
from components import Json


@dataclass(frozen=True, slots=True)
class Decorations:
    """The decorators of one call, read once from its rule."""

    timeout: float | None = None
    """Bounds the whole call: ``timeout`` is outside ``retries`` (or alone)."""
    attempt_timeout: float | None = None
    """Bounds each attempt: ``retries`` is outside ``timeout``."""
    retries: int = 0
    label: str | None = None
    truncate: int | None = None
    cache_key: tuple[str, str, str] | None = None
    """(the agent's parameters' hash, tool, input): a completed result answers the same call
    again, in any session of the host whose agent has the same parameters."""

    @staticmethod
    def of(
        decorate: Decorate | None,
        tool_name: str,
        arguments: object,
        *,
        cache_scope: str | None = "",
    ) -> Decorations:
        """``cache_scope``: ``AgentConfig.cache_scope()`` (None: nothing is cached)."""
        if decorate is None:
            return NO_DECORATIONS
        cache_key = None
        if decorate.option("cache") and cache_scope is not None:
            inputs = json.dumps(arguments, sort_keys=True, default=str)
            cache_key = (cache_scope, tool_name, inputs)
        timeout, attempt_timeout = decorate.option("timeout"), None
        order = [decorator.setting for decorator in decorate.decorate]
        if timeout is not None and "retries" in order[: order.index("timeout")]:
            timeout, attempt_timeout = None, timeout  # outermost first: retries wrap it
        return Decorations(
            timeout=timeout,
            attempt_timeout=attempt_timeout,
            retries=decorate.option("retries") or 0,
            label=decorate.option("label"),
            truncate=decorate.option("truncate"),
            cache_key=cache_key,
        )

    @staticmethod
    def of_use(config: AgentConfig, use: Block, *, cache_scope: str | None = "") -> Decorations:
        """The decorations the agent's rule for ``use``'s tool gives that call."""
        name = str(use["name"])
        return Decorations.of(
            config.decorators(name), name, use.get("input", {}), cache_scope=cache_scope
        )

    def result(self, tool_use_id: str, value: Json) -> ToolResultBlock:
        """The ``tool_result`` of a completed call: its content blocks (images, documents)
        when it carries them, else ``render``'s text."""
        blocks = content_blocks(value)
        return tool_result(tool_use_id, self._shortened(value) if blocks is None else blocks)

    def render(self, value: Json) -> str:
        """A result as the model reads it as text (content blocks by their text)."""
        blocks = content_blocks(value)
        return self._shortened(value if blocks is None else content_text(blocks))

    def _shortened(self, value: Json) -> str:
        """Past ``truncate`` bytes of UTF-8, the longest valid prefix of at most that many
        bytes, and a marker stating the limit."""
        text = value if isinstance(value, str) else dumps(value)
        limit = self.truncate
        if limit is None or len(text) * 4 <= limit:  # no character is longer than 4 bytes
            return text
        encoded = text.encode()
        if len(encoded) <= limit:
            return text
        kept = encoded[:limit].decode(errors="ignore")  # drops a character cut in half
        return f"{kept}... [truncated to {limit} of {len(encoded)} bytes]"


NO_DECORATIONS = Decorations()
