"""What the sessions tests script a model with: rules on the request it is asked (``asks``,
``has_results``), and letting the runtime run until a condition holds (``until``)."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import anyio.lowlevel

from agentos import (
    ModelRequest,
    Runtime,
)
from agentos.testing import last_tool_results, last_user_text, settle


def asks(phrase: str) -> Callable[[ModelRequest], bool]:
    return lambda request: phrase in last_user_text(request) and not last_tool_results(request)


def has_results(request: ModelRequest) -> bool:
    return bool(last_tool_results(request))


async def until(condition: Callable[[], bool], runtime: Runtime) -> None:
    """Let ``runtime`` run until ``condition`` holds (a bound of 10 s, never a measure)."""
    with anyio.fail_after(10):
        while not condition():
            await settle(runtime)
            await anyio.lowlevel.checkpoint()
