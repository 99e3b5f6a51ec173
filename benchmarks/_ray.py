"""Tool calls on Ray (a local cluster this benchmark starts): what a call costs beside an
in-process one, how soon a cancel ends the worker, how soon progress reaches the call.

``ray.call_ms`` is a no-op call through ``RayRunner`` (submit to final, one after
another), ``ray.inprocess_call_ms`` the same tool run in the runtime; they alternate in
rounds, and ``ray.call_overhead_ms`` is the difference of their medians.
``ray.cancel_ms_p99``: from ``runtime.cancel`` of a running call to its worker process
being gone (``force=True``). ``ray.progress_lag_ms_p99``: from the tool's ``progress``
in the worker (its ``time.time()``, one clock on one machine) to the runtime's event.
Skipped, with a note, where ``ray`` is not installed.
"""

from __future__ import annotations

import os
import time

import anyio
from pydantic import BaseModel

from agentos import CallEvent
from agentos import CallOptions
from agentos import RayRunner
from agentos import Runtime
from agentos import ToolContext
from agentos import tool
from benchmarks._common import Figures
from benchmarks._common import emit
from benchmarks._common import median
from benchmarks._common import percentile
from benchmarks._common import quiet_logs
from benchmarks._common import reported
from tests.support.ray_tools import start_local_cluster

ROUNDS = 5
CALLS = 20
CANCELS = 20
REPORTS = 200
ON_RAY = CallOptions(runner="ray")


class Work(BaseModel):
    reports: int = 0
    hang: bool = False


@tool
def work(args: Work, ctx: ToolContext) -> int:
    """Report ``reports`` times (with the worker's clock), then end, or run until stopped."""
    ctx.progress({"pid": os.getpid(), "at": time.time()})
    for _ in range(args.reports):
        time.sleep(0.002)
        ctx.progress({"at": time.time()})
    while args.hang:
        time.sleep(0.01)
    return args.reports


async def calls_ms(runtime: Runtime, options: CallOptions) -> float:
    started = time.perf_counter()
    for _ in range(CALLS):
        done = await runtime.wait(runtime.submit("work", {}, options=options), 60)
        assert done.status == "completed", done
    return (time.perf_counter() - started) / CALLS * 1e3


async def cancel_ms(runtime: Runtime, first: anyio.Event, pids: list[int]) -> float:
    call = runtime.submit("work", {"hang": True}, options=ON_RAY)
    with anyio.fail_after(60):
        await first.wait()
    started = time.perf_counter()
    runtime.cancel(call, "benchmark")
    pid = pids[-1]
    with anyio.fail_after(30):
        while _alive(pid):  # noqa: ASYNC110 - another process: nothing to await
            await anyio.sleep(0.001)
    return (time.perf_counter() - started) * 1e3


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def measure() -> Figures:
    import ray

    start_local_cluster(ray)
    try:
        async with Runtime([work], max_running_per_session=64) as runtime:
            runtime.add_runner("ray", RayRunner([work]))
            lags: list[float] = []
            pids: list[int] = []
            first = anyio.Event()

            def heard(event: CallEvent) -> None:
                payload = reported(event)
                pid, at = payload.get("pid"), payload.get("at")
                if isinstance(pid, int):
                    pids.append(pid)
                    first.set()
                elif isinstance(at, float):
                    lags.append(time.time() - at)

            runtime.on_call_events("default", heard)
            await calls_ms(runtime, ON_RAY)  # warm-up: the workers start
            remote, local = [], []
            for _ in range(ROUNDS):
                remote.append(await calls_ms(runtime, ON_RAY))
                local.append(await calls_ms(runtime, CallOptions()))
            done = await runtime.wait(runtime.submit("work", {"reports": REPORTS}, options=ON_RAY))
            assert done.status == "completed", done
            cancels = []
            for _ in range(CANCELS):
                first = anyio.Event()
                cancels.append(await cancel_ms(runtime, first, pids))
    finally:
        ray.shutdown()
    return {
        "ray.call_ms": round(median(remote), 3),
        "ray.inprocess_call_ms": round(median(local), 3),
        "ray.call_overhead_ms": round(median(remote) - median(local), 3),
        "ray.cancel_ms_p50": round(percentile(cancels, 0.5), 2),
        "ray.cancel_ms_p99": round(percentile(cancels, 0.99), 2),
        "ray.progress_lag_ms_p50": round(percentile(lags, 0.5) * 1e3, 2),
        "ray.progress_lag_ms_p99": round(percentile(lags, 0.99) * 1e3, 2),
    }


def main() -> None:
    quiet_logs()
    try:
        import ray  # noqa: F401
    except ImportError:
        emit({"ray.skipped": "ray is not installed: pip install 'agentos[ray]'"})
        return
    emit(anyio.run(measure))


if __name__ == "__main__":
    main()
