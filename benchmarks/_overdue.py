"""What waiting on a slow call costs in model requests (issue 45).

A scripted model starts one call, estimating it at 1 s (``expected_seconds``), and leaves
it running whenever it is told the call is overdue; the call ends after 12 s, or 600 s.
The clock is injected and stepped a second at a time, so the bench takes no wall time.
Each request is one the user would pay for with a real model: the first, one per overdue
turn, and the one that reads the result. Both context views are measured.
"""

from __future__ import annotations

from agentos import AgentConfig
from agentos import ManualClock
from benchmarks._common import Figures
from benchmarks._common import run_measure
from tests.support.overdue import a_slow_call_under_a_patient_model


async def requests_for(seconds: int, view: str) -> int:
    """Model requests made while one call estimated at 1 s runs ``seconds``."""
    config = AgentConfig(context_view=view)
    provider, _, _, _ = await a_slow_call_under_a_patient_model(ManualClock(), seconds, config)
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
