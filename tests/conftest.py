"""Shared fixtures: the anyio backend, a manual clock, and quiet logs."""

from __future__ import annotations

import logging

import pytest
import structlog

from agentos import ManualClock


@pytest.fixture(autouse=True)
def _quiet_logs() -> None:
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        cache_logger_on_first_use=False,
    )


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()
