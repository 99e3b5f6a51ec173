"""When agentos starts Ray itself and Ray cannot start, the call fails with Ray's own
reason (not with an error of agentos's quieting, on a Ray whose private names differ), and
the quieting leaves the process's warning filters as the application set them."""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path

import pytest

from agentos import CallOptions, CallStatus, RayRunner, Runtime
from tests.support import ray_tools
from tests.support.ray_tools import RAY_TESTS

pytestmark = [pytest.mark.anyio, RAY_TESTS]


@pytest.mark.parametrize("private_handler", ["kept", "missing"])
async def test_rays_own_reason_fails_the_call_and_the_warning_filters_stay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private_handler: str
) -> None:
    """``RAY_ADDRESS=auto`` with no cluster to find (Ray's temporary folder empty) makes
    ``ray.init`` fail at once; on this Ray, and on one that lacks ``PlainRayHandler`` (the
    private class of Ray's stderr handler)."""
    ray = ray_tools.need_ray()
    if private_handler == "missing":
        monkeypatch.delattr(importlib.import_module("ray._private.log"), "PlainRayHandler")
    monkeypatch.setenv("RAY_ADDRESS", "auto")
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    assert not ray.is_initialized()
    ray_tools.no_cluster_running()
    filters = list(warnings.filters)
    async with Runtime(ray_tools.TOOLS) as runtime:
        runtime.add_runner("ray", RayRunner(ray_tools.TOOLS))
        call = runtime.submit("stepper", {"steps": 1}, options=CallOptions(runner="ray"))
        done = await runtime.wait(call, 60)
    assert done.status is CallStatus.FAILED and done.error is not None
    assert done.error.message.startswith(
        "ConnectionError: Could not find any running Ray instance"
    ), done.error.message
    assert warnings.filters == filters
