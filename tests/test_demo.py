"""The demo behind ``make run`` ends the way it says it does."""

from __future__ import annotations

import pytest

from agentos import demo

pytestmark = pytest.mark.anyio


async def test_demo_shows_concurrency_a_cancel_and_a_timeout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    await demo.main()
    final = capsys.readouterr().out.split("final state:")[1]
    lines = {line.split()[0]: line for line in final.strip().splitlines()[:5]}
    assert "completed" in lines["Jane"]
    assert "completed" in lines["Jack"]
    assert "cancelled  stalled: the user gave up on Joe" in lines["Joe"]
    assert "failed     timed out after 2.5s" in lines["Ann"]
    assert "5 pages written" in lines["report"]
