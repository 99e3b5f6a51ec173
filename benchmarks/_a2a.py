"""A2A calls: what one costs beside an in-process tool, how soon a cancel reaches the remote
agent, and how soon what the agent says reaches the call's progress.

The agent is ``tests/support/a2a_agents/librarian.py`` (the ``a2a-sdk``'s executor, request
handler and Starlette routes), served on loopback by uvicorn in this process, streaming.
``a2a.call_ms`` is one echo through it (submit to final, one call at a time),
``a2a.inprocess_call_ms`` the same echo as an ``@agentos.tool``; the two alternate in
rounds; ``a2a.call_overhead_ms`` is their difference (medians); ``a2a.sdk_call_ms`` is the
same message sent with the SDK's own client alone, no agentos (what the protocol, the
SDK's server and HTTP on loopback cost by themselves). ``a2a.cancel_ms_p99``: from
``runtime.cancel`` of a running call until the agent's executor is told to cancel (its
``cancel``, after the SDK has read ``CancelTask``). ``a2a.progress_lag_ms_p99``: from the
agent's status update (its text the ``time.monotonic()`` it was made at; 5 ms apart)
until the call's ``progressed`` event.
"""

from __future__ import annotations

import time

from anyio.streams.memory import MemoryObjectReceiveStream

from agentos import A2aAgent
from agentos import CallEvent
from agentos import Runtime
from benchmarks._common import Figures
from benchmarks._common import echo_rounds
from benchmarks._common import local_echo
from benchmarks._common import median
from benchmarks._common import percentile
from benchmarks._common import reported
from benchmarks._common import run_measure
from tests.support.a2a_agents.librarian import Librarian
from tests.support.a2a_agents.librarian import app
from tests.support.asgi import free_port
from tests.support.asgi import served

ROUNDS = 5
ECHOES = 50
CANCELS = 100
TICKS = 200
TICKS_APART = 0.005
"""Seconds between two status updates: each is timed alone, not behind a burst."""


async def cancel_latencies(
    runtime: Runtime, events: MemoryObjectReceiveStream[CallEvent], librarian: Librarian
) -> list[float]:
    """Seconds from each ``runtime.cancel`` until the agent's executor is told."""
    asked: list[float] = []
    for _ in range(CANCELS):
        librarian.told_to_cancel.clear()
        call_id = runtime.submit("librarian", {"message": "hold"})
        while not any(
            isinstance(e.payload, dict) and e.payload.get("text") == "holding"
            for e in runtime.status(call_id).progress
        ):
            await events.receive()
        asked.append(time.monotonic())
        runtime.cancel(call_id)
        done = await runtime.wait(call_id, 30)
        assert done.status == "cancelled", done
        await librarian.told_to_cancel.wait()
    told = librarian.cancelled_at[-CANCELS:]
    return [at - before for at, before in zip(told, asked, strict=True)]


async def progress_lags(
    runtime: Runtime, events: MemoryObjectReceiveStream[CallEvent]
) -> list[float]:
    """Seconds from each of the agent's status updates to the call's progress event."""
    lags: list[float] = []
    call_id = runtime.submit("librarian", {"message": f"tick {TICKS} {TICKS_APART}"})
    while len(lags) < TICKS:
        event = await events.receive()
        said = reported(event).get("text")
        if event.call_id == call_id and isinstance(said, str) and said[:1].isdigit():
            lags.append(time.monotonic() - float(said))
    done = await runtime.wait(call_id, 30)
    assert done.status == "completed", done
    return lags


async def sdk_seconds(url: str) -> float:
    """Seconds for one message sent with the SDK's client alone, mean of ``ECHOES``."""
    import httpx
    from a2a.client import A2ACardResolver
    from a2a.client import ClientConfig
    from a2a.client import ClientFactory
    from a2a.helpers import new_text_message
    from a2a.types import Role
    from a2a.types import SendMessageRequest

    async with httpx.AsyncClient(timeout=httpx.Timeout(30, read=None)) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        client = ClientFactory(ClientConfig(httpx_client=http)).create(card)
        started = time.perf_counter()
        for _ in range(ECHOES):
            message = new_text_message("hi", role=Role.ROLE_USER)
            async for _event in client.send_message(SendMessageRequest(message=message)):
                pass
        return (time.perf_counter() - started) / ECHOES


async def measure() -> Figures:
    librarian = Librarian()
    port = free_port()
    remote = A2aAgent.http("librarian", f"http://127.0.0.1:{port}")
    async with (
        served(app(port, librarian), port),
        Runtime([local_echo], toolsets=[remote], max_running=64) as runtime,
        runtime.subscribe("default") as events,
    ):
        echo = {"message": "hi"}
        far, near = await echo_rounds(runtime, "librarian", echo, ECHOES, ROUNDS)
        alone = [await sdk_seconds(f"http://127.0.0.1:{port}") for _ in range(ROUNDS)]
        cancels = await cancel_latencies(runtime, events, librarian)
        lags = await progress_lags(runtime, events)
    return {
        "a2a.call_ms": round(median(far) * 1e3, 2),
        "a2a.inprocess_call_ms": round(median(near) * 1e3, 3),
        "a2a.call_overhead_ms": round((median(far) - median(near)) * 1e3, 2),
        "a2a.sdk_call_ms": round(median(alone) * 1e3, 2),
        "a2a.cancel_ms_p50": round(percentile(cancels, 0.5) * 1e3, 2),
        "a2a.cancel_ms_p99": round(percentile(cancels, 0.99) * 1e3, 2),
        "a2a.progress_lag_ms_p50": round(percentile(lags, 0.5) * 1e3, 2),
        "a2a.progress_lag_ms_p99": round(percentile(lags, 0.99) * 1e3, 2),
    }


if __name__ == "__main__":
    run_measure(measure)
