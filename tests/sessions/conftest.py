"""What the sessions tests build from: scripted models that answer what the user said
(``said``, ``calls_on``, ``ask_for``, a ``FailsOnce`` model), one process's runtime and
host on a store (``process``: a restart is the next one), a session waiting for a call,
one waiting for an approval, and a stored session waiting for one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from agentos import AgentConfig
from agentos import Host
from agentos import ManualClock
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import Provider
from agentos import ProviderError
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import Session
from agentos import SessionStatus
from agentos import Tool
from agentos.stores import TokenRecord
from agentos.testing import Puppet
from agentos.testing import board_turn
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import text
from agentos.testing import tool_calls
from tests.support.backends import hosted
from tests.support.backends import running
from tests.support.scripting import APPROVE_DEFERRED
from tests.support.scripting import asks
from tests.support.scripting import until

ScriptRule = tuple[Callable[[ModelRequest], bool], Callable[[ModelRequest], ModelResponse]]


def said(request: ModelRequest) -> str:
    """What the user said that this turn answers ('' for a turn about calls)."""
    turn = board_turn(request)
    if turn is not None:
        return turn.text if turn.author == "user" else ""
    return "" if last_tool_results(request) else last_user_text(request)


def calls_on(phrase: str, *calls: str) -> ScriptRule:
    """A rule: a turn answering a user message with ``phrase`` in it makes ``calls``."""
    return (
        lambda request: phrase in said(request),
        lambda request: tool_calls(*((name, {}) for name in calls)),
    )


OTHERWISE: ScriptRule = (lambda request: True, lambda request: text("noted"))


def ask_for(*calls: str) -> ScriptedProvider:
    """A model that makes ``calls`` when asked to ``go``, and says ``noted`` otherwise."""
    return ScriptedProvider(calls_on("go", *calls), OTHERWISE)


class FailsOnce:
    """A model whose requests mentioning ``phrase`` fail, as one past the SDK's retries does,
    until ``recover``; every other request gets ``ok``."""

    name = "fails-once"

    def __init__(self, phrase: str) -> None:
        self.phrase = phrase
        self.down = True
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        if self.down and self.phrase in said(request):
            raise ProviderError("overloaded", "the API is overloaded")
        return text("ok")


@asynccontextmanager
async def process(
    path: Path, clock: ManualClock, provider: Provider, *tools: Tool[Any], **host: Any
) -> AsyncIterator[tuple[Runtime, Host]]:
    """One process's runtime and host on the store at ``path`` (a restart: the next one)."""
    async with hosted(path, provider, *tools, clock=clock, **host) as (_, runtime, hosting):
        yield runtime, hosting


@asynccontextmanager
async def waiting_for_a_call(
    clock: ManualClock, *rules: ScriptRule, config: AgentConfig | None = None
) -> AsyncIterator[tuple[Puppet, ScriptedProvider, Runtime, Session]]:
    """A session (on ``config``) whose turn waits for the one puppet call the model made when
    told ``slow``; the model answers the requests after that by ``rules``."""
    puppet = Puppet()
    provider = ScriptedProvider((asks("slow"), lambda r: tool_calls(("puppet", {}))), *rules)
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(config)
        session.post("slow")
        await until(lambda: session.status == "waiting", runtime)
        yield puppet, provider, runtime, session


@asynccontextmanager
async def waiting_for_approval(
    clock: ManualClock, config: AgentConfig = APPROVE_DEFERRED, **host_options: Any
) -> AsyncIterator[tuple[ScriptedProvider, Runtime, Host, Session]]:
    """A session ``s`` (on ``config``, on a host given ``host_options``) told to approve the
    trip, once its turn is idle with the deferred ``approve`` call it made."""
    approve = Puppet(name="approve")
    provider = ScriptedProvider(calls_on("approve", "approve"), OTHERWISE)
    async with running(provider, approve.tool, clock=clock, **host_options) as (runtime, host):
        session = await host.create_session(config, session_id="s")
        session.post("approve the trip")
        with anyio.fail_after(5):
            await session.wait_idle()
        yield provider, runtime, host, session


async def stored_waiting_for_approval(
    path: Path, clock: ManualClock, approve: Puppet, **host: Any
) -> TokenRecord:
    """A process whose session's turn waits for a deferred ``approve`` call when it ends."""
    async with process(path, clock, ask_for("approve"), approve.tool, **host) as (_, hosting):
        session = await hosting.create_session(APPROVE_DEFERRED, session_id="s")
        session.post("go and get it approved")
        with anyio.fail_after(5):
            await session.wait_idle()
        (record,) = hosting.tokens.pending("s")
        return record


def status_of(session: Session) -> SessionStatus:
    """The status now (mypy would keep what an earlier assert narrowed it to)."""
    return session.status
