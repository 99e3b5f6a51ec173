"""What waiting on a slow call costs in model requests (issue 45).

A scripted model starts one call, estimating it at 1 s (``expected_seconds``), and leaves
it running whenever it is told the call is overdue; the call ends after 12 s, or 600 s.
The clock is injected and stepped a second at a time, so the bench takes no wall time.
Each request is one the user would pay for with a real model: the first, one per overdue
turn, and the one that reads the result. Both context views are measured.
"""

from __future__ import annotations

import anyio

from agentos import AgentConfig, Host, ManualClock, Runtime, ScriptedProvider
from agentos.testing import Puppet, last_user_text, settle, text, tool_calls
from benchmarks._common import Figures, run_measure


async def requests_for(seconds: int, view: str) -> int:
    """Model requests made while one call estimated at 1 s runs ``seconds``."""
    clock = ManualClock()
    puppet = Puppet()
    provider = ScriptedProvider(
        (lambda r: "has run" in last_user_text(r), lambda r: text("waiting for: crawl")),
        (
            lambda r: not puppet.calls,
            lambda r: tool_calls(("puppet", {"label": "crawl", "expected_seconds": 1})),
        ),
        (lambda r: True, lambda r: text("done")),
    )
    async with Runtime([puppet.tool], clock=clock) as runtime, Host(runtime, provider) as host:
        session = await host.create_session(AgentConfig(context_view=view))
        session.post("crawl the site")
        with anyio.fail_after(10):
            while not puppet.calls:
                await settle(runtime)
        (call_id,) = puppet.calls
        for _ in range(seconds):
            clock.advance(1)
            await settle(runtime)
        puppet.complete(call_id, "12 pages")
        await runtime.wait(call_id, timeout=None)
        with anyio.fail_after(10):
            await session.wait_idle()
        return len(provider.requests)


async def measure() -> Figures:
    figures: Figures = {}
    for view, prefix in (("transcript", "overdue."), ("board", "overdue.board.")):
        for seconds in (12, 600):
            figures[f"{prefix}requests_{seconds}s_call_1s_estimate"] = await requests_for(
                seconds, view
            )
    return figures


if __name__ == "__main__":
    run_measure(measure)
