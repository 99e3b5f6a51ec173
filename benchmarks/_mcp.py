"""MCP calls: what one costs beside an in-process tool, how soon a cancel reaches the
server's tool, and whether 50 concurrent calls on one server each see their own progress.

``mcp.echo_call_us`` is one echo through a stdio MCP server (submit to final, one call
at a time), ``mcp.inprocess_echo_call_us`` the same echo as an ``@agentos.tool``; the
two alternate in rounds; ``mcp.call_overhead_us`` is their difference and
``mcp.call_overhead_ratio`` their ratio (medians). ``mcp.cancel_to_server_ms_p99``:
from ``runtime.cancel`` of a running call to its tool's ``CancelledError`` in the
server (one monotonic clock, so the server says when). ``mcp.concurrent_calls_progress``:
of 50 calls with 1-5 progress steps each, those whose progress was exactly their own.
``mcp.elicitation_round_trip_ms``: from a person's ``Runtime.answer`` to a server's question
until the server's tool has the answer (median; ``_p99`` beside it). ``mcp.task_resume_s``:
a host whose call runs as a task on an HTTP server is SIGKILLed; from the kill until another
host (this process: store opened, runtime started, session resumed) follows the same task
(median of 3).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from anyio.streams.memory import MemoryObjectReceiveStream

import agentos
from agentos import CallEvent
from agentos import Host
from agentos import McpServer
from agentos import ProgressKind
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import SqliteStore
from agentos.testing import text
from benchmarks._common import Figures
from benchmarks._common import echo_rounds
from benchmarks._common import local_echo
from benchmarks._common import median
from benchmarks._common import percentile
from benchmarks._common import run_measure
from tests.support.asgi import free_port
from tests.support.asgi import served
from tests.support.mcp_servers import SERVERS
from tests.support.mcp_servers.task_server import app as task_app
from tests.support.task_host import killed_when_ready

SERVER = str(SERVERS / "tools_server.py")
ROUNDS = 5
ECHOES = 200
CANCELS = 200
CONCURRENT = 50
QUESTIONS = 100
RESUMES = 3


async def first_progress(
    runtime: Runtime, events: MemoryObjectReceiveStream[CallEvent], call_id: str, count: int
) -> None:
    while sum(e.kind is ProgressKind.PARTIAL for e in runtime.status(call_id).progress) < count:
        await events.receive()


async def cancel_latencies(
    runtime: Runtime, events: MemoryObjectReceiveStream[CallEvent]
) -> list[float]:
    asked: list[float] = []
    for _ in range(CANCELS):
        call_id = runtime.submit("slow", {"steps": 1})
        await first_progress(runtime, events, call_id, 1)
        asked.append(time.monotonic())
        runtime.cancel(call_id)
    done = await runtime.wait(runtime.submit("cancel_times", {"count": CANCELS}), 60)
    assert isinstance(done.result, dict), done
    seen = done.result["result"]
    assert isinstance(seen, list)
    return [float(str(at)) - before for at, before in zip(seen, asked, strict=True)]


async def answer_latencies(
    runtime: Runtime, events: MemoryObjectReceiveStream[CallEvent]
) -> list[float]:
    """Seconds from each answer to the server's tool having it (one clock: monotonic)."""
    runtime.ask_person = held
    latencies: list[float] = []
    for _ in range(QUESTIONS):
        call_id = runtime.submit("answered_at", {})
        while runtime.status(call_id).question is None:
            await events.receive()
        answered = time.monotonic()
        runtime.answer(call_id, agentos.Answer(agentos.AnswerAction.ACCEPT, {"city": "Lyon"}))
        done = await runtime.wait(call_id, 30)
        assert isinstance(done.result, dict), done
        latencies.append(float(str(done.result["result"])) - answered)
    return latencies


async def task_resume_seconds() -> list[float]:
    """Seconds from a host's SIGKILL until another follows its call's task, ``RESUMES`` times."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    provider = ScriptedProvider((lambda r: True, lambda r: text("thanks")))
    seconds: list[float] = []
    async with served(task_app, port):
        for _ in range(RESUMES):
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / "tasks.db"
                session_id = await killed_when_ready(path, url)
                killed = time.perf_counter()  # the host is gone
                async with (
                    await SqliteStore.open(path) as store,
                    Runtime(toolsets=[McpServer.http("tasks", url)]) as runtime,
                    Host(runtime, provider, store=store) as host,
                ):
                    await host.resume(session_id, steal=True)
                    (call,) = runtime.list_calls(session_id)
                    async with runtime.subscribe(session_id) as events:
                        await first_progress(runtime, events, call.call_id, 1)
                    seconds.append(time.perf_counter() - killed)
                    await runtime.wait(runtime.submit("release", {}), 30)
                    await runtime.wait(call.call_id, 30)
    return seconds


async def held(asked: agentos.Asked) -> None:
    """A person who answers through ``Runtime.answer``."""
    return None


async def own_progress(runtime: Runtime, events: MemoryObjectReceiveStream[CallEvent]) -> int:
    calls = {runtime.submit("slow", {"steps": 1 + n % 5}): 1 + n % 5 for n in range(CONCURRENT)}
    for call_id, steps in calls.items():
        await first_progress(runtime, events, call_id, steps)
    await runtime.wait(runtime.submit("release", {}), 30)
    right = 0
    for call_id, steps in calls.items():
        done = await runtime.wait(call_id, 30)
        entries = [e.payload for e in done.progress if e.kind is ProgressKind.PARTIAL]
        totals = {p.get("total") for p in entries if isinstance(p, dict)}
        right += done.status == "completed" and len(entries) == steps and totals == {steps}
    return right


async def measure() -> Figures:
    server = McpServer.stdio("bench", sys.executable, [SERVER])
    async with (
        Runtime(
            [local_echo], toolsets=[server], max_running=256, max_running_per_session=128
        ) as runtime,
        runtime.subscribe("default") as events,
    ):
        echo = {"text": "hi"}
        remote, local = await echo_rounds(runtime, "echo", echo, ECHOES, ROUNDS)
        cancels = await cancel_latencies(runtime, events)
        progress = await own_progress(runtime, events)
        answers = await answer_latencies(runtime, events)
    resumes = await task_resume_seconds()
    return {
        "mcp.echo_call_us": round(median(remote) * 1e6, 1),
        "mcp.inprocess_echo_call_us": round(median(local) * 1e6, 1),
        "mcp.call_overhead_us": round((median(remote) - median(local)) * 1e6, 1),
        "mcp.call_overhead_ratio": round(median(remote) / median(local), 1),
        "mcp.cancel_to_server_ms_p50": round(percentile(cancels, 0.5) * 1e3, 2),
        "mcp.cancel_to_server_ms_p99": round(percentile(cancels, 0.99) * 1e3, 2),
        "mcp.concurrent_calls_progress": progress,
        "mcp.elicitation_round_trip_ms": round(median(answers) * 1e3, 2),
        "mcp.elicitation_round_trip_ms_p99": round(percentile(answers, 0.99) * 1e3, 2),
        "mcp.task_resume_s": round(median(resumes), 3),
    }


if __name__ == "__main__":
    run_measure(measure)
