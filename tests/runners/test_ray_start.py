"""When agentos starts Ray itself and Ray cannot start, the call fails with Ray's own
reason (not with an error of agentos's quieting, on a Ray whose private names differ), and
the quieting leaves the process's warning filters as the application set them."""

from __future__ import annotations

import contextlib
import importlib
import socket
import subprocess
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agentos import CallOptions
from agentos import CallStatus
from agentos import RayRunner
from agentos import Runtime
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


WHERE = {
    "RAY_ADDRESS": "the address RAY_ADDRESS names ({dead})",
    "ray_current_cluster": "({record}): start it again, or remove that file",
    "auto": "the cluster RAY_ADDRESS=auto found on this machine",
}


@contextmanager
def a_raylet_left(address: str) -> Iterator[None]:
    """A process Ray takes for a raylet of the cluster at ``address`` (its name and flag),
    as one that outlived its GCS would be: what ``RAY_ADDRESS=auto`` finds."""
    process = subprocess.Popen(
        [
            str(Path("/tmp/raylet")),
            "-c",
            "import time; time.sleep(120)",
            f"--gcs-address={address}",
        ],
        executable=sys.executable,
    )
    try:
        yield
    finally:
        process.kill()
        process.wait()


@pytest.mark.parametrize("named_by", list(WHERE))
async def test_a_cluster_that_does_not_answer_fails_the_call_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named_by: str
) -> None:
    """The cluster a bare ``ray.init()`` would join is dead: named by ``RAY_ADDRESS``,
    recorded by Ray as the last one started here (a crashed cluster leaves that record), or
    found by ``RAY_ADDRESS=auto`` from a raylet that outlived it. The call fails naming the
    address and where it came from, instead of waiting for it (with the driver's reconnect
    bound lifted, Ray would wait for good)."""
    ray = ray_tools.need_ray()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{probe.getsockname()[1]}"
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    left: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
    if named_by == "RAY_ADDRESS":
        monkeypatch.setenv("RAY_ADDRESS", dead)
    elif named_by == "auto":
        ray_tools.no_cluster_running()
        monkeypatch.setenv("RAY_ADDRESS", "auto")
        left = a_raylet_left(dead)
    else:
        monkeypatch.delenv("RAY_ADDRESS", raising=False)
        (tmp_path / "ray").mkdir()
        (tmp_path / "ray" / "ray_current_cluster").write_text(dead)
    assert not ray.is_initialized()
    with left:
        async with Runtime(ray_tools.TOOLS) as runtime:
            runtime.add_runner("ray", RayRunner(ray_tools.TOOLS))
            call = runtime.submit("stepper", {"steps": 1}, options=CallOptions(runner="ray"))
            done = await runtime.wait(call, 60)
    assert done.status is CallStatus.FAILED and done.error is not None
    port = dead.rpartition(":")[2]
    assert f":{port} (Connection refused)" in done.error.message, done.error.message
    where = WHERE[named_by].format(dead=dead, record=tmp_path / "ray" / "ray_current_cluster")
    assert where in done.error.message, done.error.message
    assert not ray.is_initialized()
