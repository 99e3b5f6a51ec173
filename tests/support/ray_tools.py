"""Tools the Ray tests run on a local Ray cluster (``tests/runners/test_ray.py``)."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import BaseModel

from agentos import ToolContext
from agentos import tool
from tests.support import ROOT
from tests.support.skips import cannot_run

RAY_TESTS = pytest.mark.xdist_group("ray")
"""Every test that starts Ray runs on one pytest-xdist worker (``--dist loadgroup``), one
after another: two clusters at once starve each other on a small machine, and a test in
process leaves Ray's global state to the next one of its worker."""


def need_ray() -> ModuleType:
    """``ray``, with this checkout on the workers' path; skips the test without it (fails
    it under ``CI=true``)."""
    try:
        import ray
    except ImportError:
        reason = "the Ray tests need ray: pip install 'agentos[ray]' (make test installs it)"
        cannot_run("the Ray tests", reason)
    root = str(ROOT)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [root, *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    return ray


def start_local_cluster(ray: ModuleType) -> None:
    """Start a Ray cluster of this process's own (even beside a running one, a test run's):
    two CPUs, no dashboard, the workers' logs and Ray's logging left out of the driver's."""
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )


def clusters_found() -> frozenset[str]:
    """The addresses ``RAY_ADDRESS=auto`` would find on this machine now: Ray reads them off
    its raylets' command lines (a raylet can outlive its cluster's GCS for a while), and
    keeps what it found in this process, which is forgotten first."""
    from ray._private.services import find_gcs_addresses

    find_gcs_addresses.cache_clear()  # type: ignore[attr-defined]  # an lru_cache
    return frozenset(find_gcs_addresses())  # type: ignore[no-untyped-call]


def no_cluster_running(within: float = 150.0) -> None:
    """Waits until ``RAY_ADDRESS=auto`` finds no cluster on this machine: an earlier test's
    can take a while to end on a loaded machine (a raylet whose GCS was killed, as
    ``test_ray_lost``'s other node's, ends only after Ray's 60 s reconnect window). Skips
    the test if one is still found then (fails it under ``CI=true``): someone else's."""
    deadline = time.monotonic() + within
    while left := clusters_found():
        if time.monotonic() > deadline:
            reason = f"a Ray cluster runs on this machine ({', '.join(sorted(left))})"
            cannot_run("this test alone", reason)
        time.sleep(0.1)


def written_within(path: Path, seconds: float) -> bool:
    """Whether a file (written by a tool in a Ray worker) appears within ``seconds``."""
    deadline = time.monotonic() + seconds
    while not path.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


class Steps(BaseModel):
    steps: int = 3
    hang: bool = False


class Nothing(BaseModel):
    pass


class Marker(BaseModel):
    path: str


@tool
def stepper(args: Steps, ctx: ToolContext) -> str:
    """Report each step (and the worker's pid), then answer, or work until stopped."""
    ctx.progress({"pid": os.getpid()})
    for step in range(args.steps):
        ctx.progress({"step": step})
    while args.hang:
        time.sleep(0.05)
    return f"{args.steps} steps"


@tool
async def async_stepper(args: Steps, ctx: ToolContext) -> str:
    """The same, as an async tool."""
    for step in range(args.steps):
        ctx.progress({"step": step})
    return f"{args.steps} async steps"


@tool
async def async_waiter(args: Marker, ctx: ToolContext) -> str:
    """Reports its pid and waits until cancelled, then writes what it heard to a file."""
    ctx.progress({"pid": os.getpid()})
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        heard = Path(args.path + ".part")
        heard.write_text("cancelled")  # noqa: ASYNC240 - a tiny file, then out
        heard.replace(args.path)  # noqa: ASYNC240 - whole or absent, as the test looks
        raise
    return "never"


@tool
async def async_dies(args: Nothing) -> str:
    """Ends the actor's process."""
    os._exit(3)


@tool
def broken(args: Nothing) -> str:
    """Raises."""
    raise ValueError("the input data is bad")


@tool
def unpicklable(args: Nothing) -> object:
    """Returns what cannot be sent back."""
    return threading.Lock()


@tool
def quits(args: Nothing) -> str:
    """Raises ``SystemExit``, as ``sys.exit`` does."""
    raise SystemExit(3)


@tool
async def async_quits(args: Nothing) -> str:
    """The same, as an async tool."""
    raise SystemExit(3)


@tool
def too_large(args: Nothing) -> str:
    """Returns 2,000,000 characters: over the runtime's 1,000,000."""
    return "x" * 2_000_000


@tool
def dies(args: Nothing) -> str:
    """Ends its worker process."""
    os._exit(3)


TOOLS = [
    stepper,
    async_stepper,
    async_waiter,
    async_dies,
    broken,
    quits,
    async_quits,
    unpicklable,
    too_large,
    dies,
]
