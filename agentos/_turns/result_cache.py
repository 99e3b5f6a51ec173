"""Results the cache decorator keeps: shared by the sessions of one host, bounded."""

from __future__ import annotations

from collections import OrderedDict

from components import Json

CacheKey = tuple[str, str, str]
"""(the agent's parameters' hash, the tool, its input as canonical JSON)."""

RESULTS_KEPT = 4096
"""Results a cache holds before it forgets the one used least recently."""


class ResultCache:
    """Completed results of cacheable calls by ``CacheKey``: a session serves a repeated call
    from here, whichever session of its host ran it first, when their agents' parameters
    are alike (the key starts with their hash). The least recently used go first past
    ``size``."""

    def __init__(self, size: int = RESULTS_KEPT) -> None:
        self._size = size
        self._results: OrderedDict[CacheKey, Json] = OrderedDict()

    def __len__(self) -> int:
        return len(self._results)

    def get(self, key: CacheKey) -> tuple[Json] | None:
        """The result kept under ``key``, in a 1-tuple (a result may be null); None if none."""
        if key not in self._results:
            return None
        self._results.move_to_end(key)
        return (self._results[key],)

    def keep(self, key: CacheKey, result: Json) -> None:
        self._results[key] = result
        self._results.move_to_end(key)
        while len(self._results) > self._size:
            self._results.popitem(last=False)
