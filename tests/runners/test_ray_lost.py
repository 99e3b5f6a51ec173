"""A host outlives its Ray cluster (issue 46, point 10): the head (its GCS and raylet) is
killed under a call running on the cluster's other node, which hears nothing of it; the call
fails naming the lost cluster within seconds, the
host's other sessions go on, a later call on Ray fails at once saying the cluster still
does not answer, and the host is alive past Ray's 60 s reconnect window, in which Ray used
to end the whole process. The host is a process of its own (tests/support/ray_host.py)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import IO
from typing import Any

import pytest

from tests.support import ROOT
from tests.support import ray_tools

pytestmark = ray_tools.RAY_TESTS

RAYS_WINDOW = 60.0
"""Ray's default ``gcs_rpc_server_reconnect_timeout_s``: past it a driver used to be ended."""


@pytest.fixture
def cluster() -> Iterator[Any]:
    ray_tools.need_ray()
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False}
    )
    try:
        yield cluster
    finally:
        cluster.shutdown()  # type: ignore[no-untyped-call]


def lines_of(stream: IO[str]) -> queue.Queue[dict[str, Any] | None]:
    """The JSON lines a process prints, as they come (``None`` at its end)."""
    lines: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def read() -> None:
        for line in stream:
            if line.startswith("{"):
                lines.put(json.loads(line))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


def next_event(lines: queue.Queue[dict[str, Any] | None], seconds: float) -> dict[str, Any]:
    event = lines.get(timeout=seconds)
    assert event is not None, "the host ended"
    return event


def test_a_host_outlives_its_lost_ray_cluster(cluster: Any) -> None:
    address = cluster.address
    cluster.add_node(num_cpus=2, resources={"far": 2})
    host = subprocess.Popen(
        [sys.executable, "-m", "tests.support.ray_host"],
        cwd=ROOT,
        env={**os.environ, "RAY_ADDRESS": address},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert host.stdin is not None and host.stdout is not None
    try:
        lines = lines_of(host.stdout)
        assert next_event(lines, 180)["event"] == "started"
        cluster.head_node.kill_gcs_server()  # first: the raylet's death goes untold
        cluster.head_node.kill_raylet()
        killed = time.monotonic()
        host.stdin.write("killed\n")
        host.stdin.flush()

        local = next_event(lines, 60)
        assert (local["event"], local["status"]) == ("in_process", "completed"), local
        assert local["ray_call"] == "running", "the other session's call did not wait for it"

        ended = next_event(lines, RAYS_WINDOW - 10)
        took = time.monotonic() - killed
        assert ended["event"] == "ended" and ended["status"] == "failed", ended
        assert ended["error"].startswith(f"lost the Ray cluster at {address}"), ended
        later = next_event(lines, 60)
        assert later["event"] == "later" and later["status"] == "failed", later
        assert f"the Ray cluster at {address}" in later["error"], later
        assert "still does not answer" in later["error"], later

        with pytest.raises(subprocess.TimeoutExpired):  # alive past the window Ray allowed
            host.wait(timeout=max(0.0, killed + RAYS_WINDOW + 10 - time.monotonic()))
        host.stdin.close()
        assert next_event(lines, 60)["event"] == "alive"
        assert host.wait(timeout=60) == 0
        print(f"the call failed {took:.1f} s after the head was killed")
    finally:
        host.kill()
        host.wait()
        host.stdout.close()
        if not host.stdin.closed:
            host.stdin.close()
