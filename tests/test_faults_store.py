"""Issue 9, the store's faults: two hosts on one session, file modes, runner replies, a
database file replaced under a running host."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel

from agentos import CallStatus, LocalProcessRunner, Runtime, tool

pytestmark = pytest.mark.anyio


class Job(BaseModel):
    reply: str


@tool
async def remote(args: Job) -> None:
    raise AssertionError("an isolated call does not run here")


@pytest.mark.parametrize(
    ("reply", "which"),
    [('{"result": 1, "error": "no"}', "both"), ("{}", "neither")],
)
async def test_an_isolated_reply_carries_exactly_one_of_result_and_error(
    tmp_path: Path, reply: str, which: str
) -> None:
    """Issue 9 item 12b: a runner reply with both result and error, or neither, fails
    the call with a clear message."""
    script = tmp_path / "runner.py"
    script.write_text(
        "import json, sys\n"
        "envelope = json.load(sys.stdin)\n"
        "reply = json.loads(envelope['input']['reply'])\n"
        "print(json.dumps({'token': envelope['token'], **reply}))\n"
    )
    async with Runtime([remote]) as runtime:
        runtime.add_runner("local", LocalProcessRunner([sys.executable, str(script)]))
        call = runtime.submit("remote", {"reply": reply}, runner="local")
        with anyio.fail_after(10):
            snapshot = await runtime.wait(call)
    assert snapshot.status is CallStatus.FAILED
    assert snapshot.error is not None
    assert snapshot.error.message == (
        f"the runner's reply must carry exactly one of 'result' and 'error', not {which}"
    )
