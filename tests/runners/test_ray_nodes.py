"""A Ray node that dies under a running call (issue 27): a two-node cluster on this machine,
the calls placed on the second node by a resource only it has, and that node removed at
once (as a lost machine would be). Each call fails naming what died; the runner goes on."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from agentos import CallOptions
from agentos import CallStatus
from agentos import RayRunner
from agentos import Runtime
from tests.support import ray_tools
from tests.support.ray_tools import RAY_TESTS

pytestmark = [pytest.mark.anyio, RAY_TESTS]

ON_RAY = CallOptions(runner="ray")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    ray = ray_tools.need_ray()
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False}
    )
    try:
        ray.init(address=cluster.address, log_to_driver=False, configure_logging=False)
        try:
            yield cluster
        finally:
            ray.shutdown()
    finally:
        cluster.shutdown()  # type: ignore[no-untyped-call]


def started(runtime: Runtime, call_id: str) -> bool:
    """Whether the tool has reported from its worker (its first progress is its pid)."""
    return any(p.kind.value == "partial" for p in runtime.status(call_id).progress)


async def test_a_node_that_dies_mid_call_fails_its_calls_naming_it(cluster: Any) -> None:
    doomed = cluster.add_node(num_cpus=2, resources={"doomed": 2})
    cluster.wait_for_nodes()
    runner = RayRunner(ray_tools.TOOLS, resources={"doomed": 1})
    async with Runtime(ray_tools.TOOLS) as runtime, runtime.subscribe("default") as events:
        runtime.add_runner("ray", runner)
        sync = runtime.submit("stepper", {"steps": 1, "hang": True}, options=ON_RAY)
        asynchronous = runtime.submit("async_waiter", {"path": "/dev/null"}, options=ON_RAY)
        with anyio.fail_after(60):
            while not all(started(runtime, call) for call in (sync, asynchronous)):
                await events.receive()
        cluster.remove_node(doomed, allow_graceful=False)
        done = await runtime.wait(sync, 60)
        assert done.status is CallStatus.FAILED and done.error is not None
        assert "the Ray node running the call died" in done.error.message, done.error.message
        assert "node ID" in done.error.message, "it names the node"
        done = await runtime.wait(asynchronous, 60)
        assert done.status is CallStatus.FAILED and done.error is not None
        assert "the Ray actor running the call died" in done.error.message, done.error.message
