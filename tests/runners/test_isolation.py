"""Isolated runners and retries: work done elsewhere, or again, still one tracked call."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel

from agentos import CallOptions
from agentos import CallStatus
from agentos import ErrorKind
from agentos import LocalProcessRunner
from agentos import ManualClock
from agentos import ProgressKind
from agentos import Runtime
from agentos import tool
from agentos.testing import settle
from tests.support.processes import alive
from tests.support.processes import dies_within

pytestmark = pytest.mark.anyio

RUNNER = """
import json, os, sys, time
envelope = json.load(sys.stdin)
mode = envelope["tool_input"]["mode"]
if mode == "ok":
    reply = {"token": envelope["token"], "result": {"doubled": envelope["tool_input"]["n"] * 2}}
elif mode == "error":
    reply = {"token": envelope["token"], "error": "the remote tool said no"}
elif mode == "forged":
    reply = {"token": "not-the-token", "result": 1}
elif mode == "garbage":
    print("<html>oops</html>"); sys.exit(0)
elif mode == "crash":
    sys.stderr.write("boom"); sys.exit(3)
elif mode == "hang":
    with open(envelope["tool_input"]["pidfile"], "w") as fifo:
        fifo.write(str(os.getpid()))
    time.sleep(300)
print(json.dumps(reply))
"""


class Job(BaseModel):
    mode: str
    n: int = 0
    pidfile: str = ""


@tool
async def remote(args: Job) -> None:
    raise AssertionError("an isolated call must not run the local function")


@pytest.fixture
def runner(tmp_path: Path) -> LocalProcessRunner:
    script = tmp_path / "runner.py"
    script.write_text(RUNNER)
    return LocalProcessRunner([sys.executable, str(script)])


@pytest.mark.parametrize(
    ("mode", "status", "expected"),
    [
        ("ok", CallStatus.COMPLETED, {"doubled": 42}),
        ("error", CallStatus.FAILED, "the remote tool said no"),
        ("forged", CallStatus.FAILED, "does not carry this call's token"),
        ("garbage", CallStatus.FAILED, "the runner's reply is not JSON"),
        ("crash", CallStatus.FAILED, "the runner exited with status 3: boom"),
    ],
)
async def test_the_local_process_runner(
    runner: LocalProcessRunner, mode: str, status: CallStatus, expected: object
) -> None:
    async with Runtime([remote]) as runtime:
        runtime.add_runner("local", runner)
        call = runtime.submit(
            "remote", {"mode": mode, "n": 21}, options=CallOptions(runner="local")
        )
        with anyio.fail_after(10):
            snapshot = await runtime.wait(call)
    assert snapshot.status is status
    if status is CallStatus.COMPLETED:
        assert snapshot.result == expected
    else:
        assert snapshot.error is not None
        assert str(expected) in snapshot.error.message


async def test_cancelling_an_isolated_call_kills_its_process(
    runner: LocalProcessRunner, tmp_path: Path
) -> None:
    fifo = tmp_path / "pid"
    os.mkfifo(fifo)
    async with Runtime([remote]) as runtime:
        runtime.add_runner("local", runner)
        call = runtime.submit(
            "remote", {"mode": "hang", "pidfile": str(fifo)}, options=CallOptions(runner="local")
        )
        with anyio.fail_after(10):
            pid = int(await anyio.to_thread.run_sync(fifo.read_text))
        assert alive(pid)
        outcome = runtime.cancel(call)
        assert outcome.cancelled
        assert runtime.status(call).status is CallStatus.CANCELLED
        assert await anyio.to_thread.run_sync(dies_within, pid, 5.0)


async def test_runner_names_are_checked(runner: LocalProcessRunner) -> None:
    async with Runtime([remote]) as runtime:
        with pytest.raises(ValueError, match="no isolated runner named 'far'"):
            runtime.submit("remote", {"mode": "ok"}, options=CallOptions(runner="far"))
        runtime.add_runner("local", runner)
        with pytest.raises(ValueError, match="already registered"):
            runtime.add_runner("local", runner)
    with pytest.raises(ValueError, match="non-empty list"):
        LocalProcessRunner([])


class Attempts(BaseModel):
    fail_times: int


ATTEMPTS: list[int] = []


@tool
async def flaky(args: Attempts) -> str:
    ATTEMPTS.append(1)
    if len(ATTEMPTS) <= args.fail_times:
        raise ConnectionError(f"attempt {len(ATTEMPTS)} lost the connection")
    return f"worked on attempt {len(ATTEMPTS)}"


@pytest.mark.parametrize(("fail_times", "retries", "ok"), [(2, 2, True), (3, 2, False)])
async def test_retries_run_the_work_again_within_one_call(
    clock: ManualClock, fail_times: int, retries: int, ok: bool
) -> None:
    ATTEMPTS.clear()
    async with Runtime([flaky], clock=clock) as runtime:
        call = runtime.submit(
            "flaky", {"fail_times": fail_times}, options=CallOptions(retries=retries)
        )
        snapshot = await runtime.wait(call)
        await settle(runtime)
    assert len(ATTEMPTS) == min(fail_times + 1, retries + 1)
    logs = [entry.payload for entry in snapshot.progress if entry.kind is ProgressKind.LOG]
    assert logs[0] == "attempt 1 of 3 failed: ConnectionError: attempt 1 lost the connection"
    if ok:
        assert snapshot.result == "worked on attempt 3"
    else:
        assert snapshot.status is CallStatus.FAILED
        assert snapshot.error is not None
        assert snapshot.error.kind is ErrorKind.TOOL_ERROR
        assert "attempt 3 lost" in snapshot.error.message


async def test_retries_are_bounded(clock: ManualClock) -> None:
    async with Runtime([flaky], clock=clock) as runtime:
        with pytest.raises(ValueError, match="retries must be an int from 0 to 10"):
            runtime.submit("flaky", {"fail_times": 0}, options=CallOptions(retries=11))
