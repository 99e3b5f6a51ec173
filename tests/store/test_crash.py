"""Crash safety: a process running sessions is SIGKILLed at random points, again and again.

After each kill the store opens, every turn the process reported committed is
there, and every stored history is one the Messages API would accept. At the
end every call any history mentions is final, pending (deferred) or orphaned.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio

from agentos import ScriptedProvider
from agentos import SqliteStore
from agentos.testing import text
from agentos.turns import Caller
from tests.support import ROOT
from tests.support.backends import hosted
from tests.support.crash_child import approve
from tests.support.crash_child import quick
from tests.support.crash_child import slow
from tests.support.transcripts import assert_valid_transcript

KILLS = 20


def test_sigkill_at_random_points_loses_no_committed_turn(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    chooser = random.Random(20_261_130)
    committed: dict[str, int] = {}
    for _ in range(KILLS):
        child = subprocess.Popen(
            [sys.executable, "-m", "tests.support.crash_child", str(path)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        for _ in range(chooser.randint(1, 6)):
            line = child.stdout.readline()
            assert line.startswith("committed "), f"the child said {line!r}"
            _, session_id, messages = line.split()
            committed[session_id] = max(committed.get(session_id, 0), int(messages))
        time.sleep(chooser.random() * 0.02)  # land the kill anywhere in the next turn
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
        child.stdout.close()
        anyio.run(_check_store, path, dict(committed))
    anyio.run(_check_calls_after_restart, path)


async def _check_store(path: Path, committed: dict[str, int]) -> None:
    async with await SqliteStore.open(path) as store:
        stored = {s.session_id for s in await store.list_sessions()}
        assert set(committed) <= stored
        for session_id in stored:
            loaded = await store.load_session(session_id)
            assert loaded is not None
            assert len(loaded.history) >= committed.get(session_id, 0)
            if loaded.history:
                assert_valid_transcript(list(loaded.history))


async def _check_calls_after_restart(path: Path) -> None:
    provider = ScriptedProvider((lambda r: True, lambda r: text("resumed")))
    async with hosted(path, provider, quick, slow, approve) as (store, _, host):
        for summary in await store.list_sessions():
            session = await host.resume(summary.session_id)
            caller = Caller(session.session_id, conversation_id=session.session_id)
            uses = [
                block["id"]
                for message in session.history
                for block in message["content"]
                if isinstance(block, dict) and block.get("type") == "tool_use"
            ]
            for tool_use_id in uses:
                seen = await host.toolbox.get_tool_call_status(caller, tool_use_id)
                if seen["status"] == "pending":
                    assert seen["tool_name"] == "approve", seen
                else:
                    assert seen["is_final"] is True, seen
