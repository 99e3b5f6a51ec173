"""What a test does where a real component it needs is missing (its own module: the
package is imported by the tool modules agent files name, which must not load pytest)."""

import os
from typing import NoReturn

import pytest


def cannot_run(tests: str, reason: str, *, module: bool = False) -> NoReturn:
    """Skip ``tests`` here, saying ``reason`` (how to enable them); under ``CI=true`` fail
    instead: CI installs all they need, so there a skip would hide a broken set-up."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must run {tests}: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=module)
