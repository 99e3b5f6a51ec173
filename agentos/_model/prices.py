"""What a model's tokens cost: the published per-token prices of Claude models, by model name.

Prices are US dollars per million tokens, as Anthropic publishes them: input, output,
prompt-cache writes (5-minute cache) and prompt-cache reads. An agent's ``prices``
setting replaces the table's entry for its model (another provider, a new model, a
negotiated rate); a model the table does not know has no cost, only token counts.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field


class ModelPrices(BaseModel):
    """US dollars per million tokens of each kind."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0, description="Input tokens.")
    output: float = Field(ge=0, description="Output tokens.")
    cache_write: float = Field(ge=0, description="Prompt-cache writes (the 5-minute cache).")
    cache_read: float = Field(ge=0, description="Prompt-cache reads.")

    def cost(self, usage: Mapping[str, int]) -> float:
        """The dollars ``usage`` (Messages API ``usage`` names) cost."""
        return (
            usage.get("input_tokens", 0) * self.input
            + usage.get("output_tokens", 0) * self.output
            + usage.get("cache_creation_input_tokens", 0) * self.cache_write
            + usage.get("cache_read_input_tokens", 0) * self.cache_read
        ) / 1_000_000


PRICES: dict[str, ModelPrices] = {
    "claude-opus-4-5": ModelPrices(input=5, output=25, cache_write=6.25, cache_read=0.5),
    "claude-opus-4": ModelPrices(input=15, output=75, cache_write=18.75, cache_read=1.5),
    "claude-sonnet-4": ModelPrices(input=3, output=15, cache_write=3.75, cache_read=0.3),
    "claude-3-7-sonnet": ModelPrices(input=3, output=15, cache_write=3.75, cache_read=0.3),
    "claude-haiku-4-5": ModelPrices(input=1, output=5, cache_write=1.25, cache_read=0.1),
    "claude-3-5-haiku": ModelPrices(input=0.8, output=4, cache_write=1, cache_read=0.08),
}
"""By model-name prefix; the longest prefix that matches wins (``claude-opus-4-1`` is Opus 4's
price, ``claude-opus-4-5-20251101`` Opus 4.5's)."""


def prices_for(model: str) -> ModelPrices | None:
    """The table's prices for ``model``, or None for a model it does not know."""
    matches = [prefix for prefix in PRICES if model.startswith(prefix)]
    return PRICES[max(matches, key=len)] if matches else None
