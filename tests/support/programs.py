"""Running a Python program the docs show, as a user would: a fresh process, offline."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_offline(program: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``program`` with this interpreter and without ``ANTHROPIC_API_KEY``."""
    return _offline([sys.executable, str(program)], cwd)


def run_offline_tests(module: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the tests of ``module`` under pytest, as CI would (``CI=true``: a cassette that
    is missing fails instead of recording), without ``ANTHROPIC_API_KEY``."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(module)]
    return _offline(command, cwd, CI="true")


def _offline(command: list[str], cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if name != "ANTHROPIC_API_KEY"}
    env.update(extra)
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=env,
        check=False,
    )
