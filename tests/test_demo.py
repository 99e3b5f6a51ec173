"""The demo behind ``make run`` shows what it says: concurrency, a cancel, a restart."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_demo_survives_its_own_crash() -> None:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    done = subprocess.run(
        [sys.executable, "-m", "agentos.demo"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    said = "\n".join(lines)
    assert "model: the scripted model (offline" in said
    weather = next(i for i, line in enumerate(lines) if "carol  <" in line)
    first_result = next(i for i, line in enumerate(lines) if "is free" in line)
    assert weather < first_result, "carol was answered while alice's calendars ran"
    assert "cancel took: True" in said
    assert "stopping the process now (SIGKILL)" in said
    after = said.split("a new process opens the same database")[1]
    assert "fetch_calendar(Joe): cancelled" in after
    assert "fetch_calendar(Jane): completed" in after
    assert "write_report(write_report): orphaned" in after
    assert "The report was lost in the restart" in after
