"""Tool calls on a real (local) Ray cluster through ``RayRunner`` (issue 27, ``agentos[ray]``).

Ray starts once for the module. Progress reaches the call while the task runs; cancel and
timeouts end the task's worker; a tool that raises, a result that does not pickle and a
worker that dies each fail the call saying so.
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from collections.abc import Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from agentos import CallOptions
from agentos import CallStatus
from agentos import RayRunner
from agentos import Runtime
from agentos.testing import settle
from tests.support import ray_tools
from tests.support.processes import dies_within
from tests.support.ray_tools import RAY_TESTS

pytestmark = [pytest.mark.anyio, RAY_TESTS]

ON_RAY = CallOptions(runner="ray")


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    ray = ray_tools.need_ray()
    ray_tools.start_local_cluster(ray)
    try:
        yield
    finally:
        ray.shutdown()


@asynccontextmanager
async def on_ray() -> AsyncIterator[Runtime]:
    async with Runtime(ray_tools.TOOLS) as runtime:
        runtime.add_runner("ray", RayRunner(ray_tools.TOOLS))
        yield runtime


def partial(runtime: Runtime, call_id: str) -> list[object]:
    return [p.payload for p in runtime.status(call_id).progress if p.kind.value == "partial"]


async def test_progress_arrives_while_it_runs_and_cancel_ends_the_worker(
    ray_cluster: None,
) -> None:
    async with on_ray() as runtime, runtime.subscribe("default") as events:
        call = runtime.submit("stepper", {"steps": 3, "hang": True}, options=ON_RAY)
        with anyio.fail_after(60):
            while len(partial(runtime, call)) < 4:
                await events.receive()
        assert runtime.status(call).status is CallStatus.RUNNING  # progress before the end
        first, *steps = partial(runtime, call)
        assert steps == [{"step": 0}, {"step": 1}, {"step": 2}]
        assert isinstance(first, dict)
        pid = first["pid"]
        assert isinstance(pid, int) and pid != os.getpid()
        runtime.cancel(call, "enough")
        assert runtime.status(call).status is CallStatus.CANCELLED
        await settle(runtime)  # the call's task hears it, and cancels the Ray task
        assert dies_within(pid, 30), "force=True ends the worker process"


async def test_results_of_sync_and_async_tools_come_back(ray_cluster: None) -> None:
    async with on_ray() as runtime:
        sync = runtime.submit("stepper", {"steps": 2}, options=ON_RAY)
        asynchronous = runtime.submit("async_stepper", {"steps": 2}, options=ON_RAY)
        done = await runtime.wait(sync, 60)
        assert (done.status, done.result) == (CallStatus.COMPLETED, "2 steps")
        done = await runtime.wait(asynchronous, 60)
        assert (done.status, done.result) == (CallStatus.COMPLETED, "2 async steps")
        assert partial(runtime, asynchronous) == [{"step": 0}, {"step": 1}]


@pytest.mark.parametrize(
    ("tool", "says"),
    [
        ("broken", "ValueError: the input data is bad"),
        ("quits", "SystemExit: 3"),  # issue 46, point 12: as in process, not an IndexError
        ("async_quits", "SystemExit: 3"),
        ("unpicklable", "the Ray task failed"),
        # issue 46, point 11: refused before it leaves the worker, naming its size
        ("too_large", "string of 2,000,000 characters, over 1,000,000; refused in the Ray worker"),
        ("dies", "the Ray worker running the call died"),
        ("async_dies", "the Ray actor running the call died"),
    ],
)
async def test_what_goes_wrong_on_ray_fails_the_call_saying_so(
    ray_cluster: None, tool: str, says: str
) -> None:
    async with on_ray() as runtime:
        done = await runtime.wait(runtime.submit(tool, {}, options=ON_RAY), 60)
        assert done.status is CallStatus.FAILED and done.error is not None
        assert says in done.error.message, done.error.message


async def test_an_async_tool_hears_the_cancel_and_its_actor_goes_on(
    ray_cluster: None, tmp_path: Path
) -> None:
    """An async tool runs on an actor: a cancel reaches it as ``CancelledError`` (its cleanup
    runs, as in process) and the actor's other calls go on; an actor that dies is replaced."""
    marker = tmp_path / "heard"
    async with on_ray() as runtime, runtime.subscribe("default") as events:
        call = runtime.submit("async_waiter", {"path": str(marker)}, options=ON_RAY)
        other = runtime.submit("async_waiter", {"path": str(tmp_path / "x")}, options=ON_RAY)
        with anyio.fail_after(60):
            while not (partial(runtime, call) and partial(runtime, other)):
                await events.receive()
        runtime.cancel(call, "enough")
        await settle(runtime)
        assert await anyio.to_thread.run_sync(ray_tools.written_within, marker, 30)
        assert marker.read_text() == "cancelled"
        assert runtime.status(other).status is CallStatus.RUNNING
        again = await runtime.wait(runtime.submit("async_stepper", {}, options=ON_RAY), 60)
        assert again.status is CallStatus.COMPLETED
        runtime.cancel(other)
        died = await runtime.wait(runtime.submit("async_dies", {}, options=ON_RAY), 60)
        assert died.status is CallStatus.FAILED
        after = await runtime.wait(runtime.submit("async_stepper", {}, options=ON_RAY), 60)
        assert after.status is CallStatus.COMPLETED, after.error


async def test_a_timeout_ends_the_task(ray_cluster: None) -> None:
    async with on_ray() as runtime:
        options = CallOptions(runner="ray", timeout=2.0)
        done = await runtime.wait(runtime.submit("stepper", {"hang": True}, options=options), 60)
        assert done.status is CallStatus.FAILED and done.error is not None
        assert done.error.kind.value == "timed_out"


async def test_a_worker_killed_mid_call_fails_the_call_naming_it(ray_cluster: None) -> None:
    """Issue 27: SIGKILL the worker process while the call runs (as an OOM killer or a lost
    machine would): the call fails saying its worker died, and is not run again."""
    async with on_ray() as runtime, runtime.subscribe("default") as events:
        call = runtime.submit("stepper", {"steps": 1, "hang": True}, options=ON_RAY)
        with anyio.fail_after(60):
            while not partial(runtime, call):
                await events.receive()
        first = partial(runtime, call)[0]
        assert isinstance(first, dict) and isinstance(first["pid"], int)
        os.kill(first["pid"], signal.SIGKILL)
        done = await runtime.wait(call, 60)
        assert done.status is CallStatus.FAILED and done.error is not None
        assert "the Ray worker running the call died" in done.error.message, done.error.message
