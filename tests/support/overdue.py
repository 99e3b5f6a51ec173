"""A slow call under a patient model (issue 45): what the tests of waiting read, and what the
overdue benchmark counts."""

from __future__ import annotations

import anyio

from agentos import AgentConfig
from agentos import ManualClock
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import ScriptedProvider
from agentos.board import ChatEntry
from agentos.testing import Puppet
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.turns import Message
from tests.support.backends import running


async def a_slow_call_under_a_patient_model(
    clock: ManualClock, seconds: int, config: AgentConfig
) -> tuple[ScriptedProvider, list[str], list[ChatEntry], list[Message]]:
    """A model that starts one call expected to take 1 s and leaves it running whenever it is
    told it is overdue; the call ends after ``seconds``. Returns the model, the nudges it read,
    the session's chat and its history."""
    puppet = Puppet()
    nudges: list[str] = []

    def leave(request: ModelRequest) -> ModelResponse:
        nudges.append(last_user_text(request))
        return text("waiting for: crawl")

    provider = ScriptedProvider(
        (lambda r: "has run" in last_user_text(r), leave),  # the board's note, or a nudge
        (
            lambda r: not puppet.calls,
            lambda r: tool_calls(
                ("puppet", {"label": "crawl", "expected_seconds": 1}), say="Crawling now."
            ),
        ),
        (lambda r: True, lambda r: text("The crawl is done: 12 pages.")),
    )
    async with running(provider, puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(config, session_id="s")
        session.post("crawl the site")
        with anyio.fail_after(5):
            while not puppet.calls:
                await settle(runtime)
        (call_id,) = puppet.calls
        await settle(runtime)
        puppet.progress(call_id, {"percent": 40})
        await settle(runtime)
        for _ in range(seconds):
            clock.advance(1)
            await settle(runtime)
        puppet.complete(call_id, "12 pages")
        await runtime.wait(call_id, timeout=None)
        with anyio.fail_after(5):
            await session.wait_idle()
        await settle(runtime)
        return provider, nudges, session.chat, session.history
