"""What the tests share, and the benchmarks too: stores and hosts on each backend, PostgreSQL,
the browser, processes, the command line, and the tool modules and MCP servers agents name."""

import os
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[2]
"""The repository's folder: where the tests run programs, read docs and find examples."""


def cannot_run(tests: str, reason: str, *, module: bool = False) -> NoReturn:
    """Skip ``tests`` here, saying ``reason`` (how to enable them); under ``CI=true`` fail
    instead: CI installs all they need, so there a skip would hide a broken set-up."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must run {tests}: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=module)
