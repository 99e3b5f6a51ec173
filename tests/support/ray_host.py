"""A host whose calls run on the Ray cluster at ``RAY_ADDRESS``, on its node with the
resource ``far`` (for tests/runners/test_ray_lost.py).

It starts a call on Ray that runs until stopped and says so; once told on stdin that the
cluster's head was killed, it runs a call of another session in process, then waits for
the Ray call's end, then runs another call on Ray, saying each outcome as a JSON line; it
ends when stdin closes, saying it is alive.
"""

from __future__ import annotations

import json
import sys
import time

import anyio
from pydantic import BaseModel

from agentos import CallOptions
from agentos import CallSnapshot
from agentos import RayRunner
from agentos import Runtime
from agentos import tool
from tests.support import ray_tools

ON_RAY = CallOptions(runner="ray")


class Nothing(BaseModel):
    pass


@tool
async def here(args: Nothing) -> str:
    """Answers in process."""
    return "here"


def say(event: str, done: CallSnapshot | None = None, **more: object) -> None:
    if done is not None:
        more["status"] = done.status.value
        more["error"] = done.error.message if done.error else None
    print(json.dumps({"event": event, **more}), flush=True)


async def main() -> None:
    async with Runtime([*ray_tools.TOOLS, here]) as runtime:
        runtime.add_runner("ray", RayRunner(ray_tools.TOOLS, resources={"far": 1}))
        async with runtime.subscribe("default") as events:
            call = runtime.submit("stepper", {"steps": 1, "hang": True}, options=ON_RAY)
            while not any(p.kind.value == "partial" for p in runtime.status(call).progress):
                await events.receive()  # its first report, from its worker
        say("started")
        await anyio.to_thread.run_sync(sys.stdin.readline)  # the head is killed
        local = await runtime.wait(runtime.submit("here", session_id="other"), 60)
        say("in_process", local, ray_call=runtime.status(call).status.value)
        say("ended", await runtime.wait(call, 600))
        began = time.monotonic()
        later = await runtime.wait(runtime.submit("stepper", {"steps": 1}, options=ON_RAY), 600)
        say("later", later, seconds=time.monotonic() - began)
        await anyio.to_thread.run_sync(sys.stdin.read)
        say("alive")


if __name__ == "__main__":
    anyio.run(main)
