"""What a session's model requests used, and the limits that refuse one more.

``Usage`` counts the requests and sums each response's token counts by their
``USAGE_FIELDS`` names, prices them (``SessionStatistics``), keeps them across a restart
(the store's ``usage``), and refuses a request past ``max_tokens_per_session`` or
``max_cost_per_session`` with a ``budget`` error.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentos._errors import ProviderError
from agentos._kernel.snapshot import SessionStatistics
from agentos._model.provider import USAGE_FIELDS
from agentos._model.provider import ModelResponse
from agentos._turns.agent_config import AgentConfig


class Usage:
    """One session's requests and token counts so far."""

    def __init__(self, config: AgentConfig) -> None:
        self._config = config
        self.requests = 0
        self._tokens: dict[str, int] = {}

    def count(self, response: ModelResponse) -> None:
        """Add what one response reports."""
        for name in USAGE_FIELDS:
            count = response.usage.get(name)
            if isinstance(count, int) and not isinstance(count, bool):
                self._tokens[name] = self._tokens.get(name, 0) + count

    def statistics(self) -> SessionStatistics:
        """Requests made so far, the token counts their answers reported, and their cost."""
        prices = self._config.model_prices()
        cost = None if prices is None else prices.cost(self._tokens)
        return SessionStatistics(requests=self.requests, cost_usd=cost, **self._tokens)

    def restore(self, usage: Mapping[str, int]) -> None:
        """Count what the session used before it was restored (the store kept it)."""
        self.requests += int(usage.get("requests", 0))
        for name in USAGE_FIELDS:
            self._tokens[name] = self._tokens.get(name, 0) + int(usage.get(name, 0))

    def stored(self) -> dict[str, int]:
        """Requests and token counts so far, as the store keeps them."""
        return {"requests": self.requests, **self._tokens}

    def check_budget(self) -> None:
        """Refuse a request past the session's token or cost limit (a ``budget`` error)."""
        config = self._config
        limit = config.max_tokens_per_session
        if limit is None and config.max_cost_per_session is None:
            return  # most sessions: nothing to add up
        spent = self.statistics()
        if limit is not None and spent.tokens >= limit:
            raise ProviderError(
                "budget",
                f"the session has used {spent.tokens:,} tokens, its max_tokens_per_session is "
                f"{limit:,}: it asks the model nothing more (raise the limit to go on)",
            )
        ceiling = config.max_cost_per_session
        if ceiling is not None and spent.cost_usd is not None and spent.cost_usd >= ceiling:
            raise ProviderError(
                "budget",
                f"the session has cost ${spent.cost_usd:.4f}, its max_cost_per_session is "
                f"${ceiling:g}: it asks the model nothing more (raise the limit to go on)",
            )
