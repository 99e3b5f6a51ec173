"""Running a Python program the docs show, as a user would: a fresh process, offline."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_offline(program: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``program`` with this interpreter and without ``ANTHROPIC_API_KEY``."""
    env = {name: value for name, value in os.environ.items() if name != "ANTHROPIC_API_KEY"}
    return subprocess.run(
        [sys.executable, str(program)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=env,
        check=False,
    )
