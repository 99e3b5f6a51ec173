"""What the sessions tests script a model with: rules on the request it is asked (``asks``,
``has_results``), moving the clock and letting the runtime act on it (``advance``), letting
the runtime run until a condition holds (``until``), a session told the same words twice
(``said_twice``), and the configs many rooms share (``BOARD``, ``DEFER``,
``APPROVE_DEFERRED``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel

from agentos import AgentConfig
from agentos import Disposition
from agentos import ManualClock
from agentos import ModelRequest
from agentos import Provider
from agentos import Runtime
from agentos import Session
from agentos import Tool
from agentos import ToolPolicy
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import settle
from tests.support.backends import running

BOARD = AgentConfig(context_view="board")
"""A session that reads the board, not the transcript."""

DEFER = ToolPolicy(rules={"approve": Disposition.DEFER})
"""The approval tests' policy: an ``approve`` call waits for a person to complete it."""

APPROVE_DEFERRED = AgentConfig(policy=DEFER)
"""A transcript session whose ``approve`` calls wait for a person (``DEFER``)."""


def asks(phrase: str) -> Callable[[ModelRequest], bool]:
    return lambda request: phrase in last_user_text(request) and not last_tool_results(request)


def has_results(request: ModelRequest) -> bool:
    return bool(last_tool_results(request))


async def advance(clock: ManualClock, runtime: Runtime, seconds: float) -> None:
    """Move ``clock`` on by ``seconds`` and let ``runtime`` act on what came due."""
    clock.advance(seconds)
    await settle(runtime)


async def until(condition: Callable[[], bool], runtime: Runtime) -> None:
    """Let ``runtime`` run until ``condition`` holds (a bound of 10 s, never a measure)."""
    with anyio.fail_after(10):
        while not condition():
            await settle(runtime)
            await anyio.lowlevel.checkpoint()


@asynccontextmanager
async def said_twice(
    model: Provider, tool: Tool[Any], config: AgentConfig, clock: ManualClock, words: str
) -> AsyncIterator[tuple[Runtime, Session]]:
    """A session ``s`` whose one tool is ``tool``, told ``words`` twice, each time until it
    is idle: how a cache test makes a call and then its repeat."""
    async with running(model, tool, clock=clock) as (runtime, host):
        session = await host.create_session(config, session_id="s")
        for _ in range(2):
            session.post(words)
            with anyio.fail_after(5):
                await session.wait_idle()
        yield runtime, session
