"""Sub-agents as calls: what a child costs beside a plain call, how fast a cancel clears
a tree, how soon a child's words are its call's progress, and 100 children at once.

``subagent.call_ms`` is one call of a sub-agent whose model answers at once (submit to
final, one after another), ``subagent.plain_call_ms`` a plain tool call of the same
session; they alternate in rounds, and ``subagent.call_overhead_ms`` is the difference
of their medians. ``subagent.cancel_tree_ms_p99``: a tree of 3 levels (a call of
``mid``, whose agent makes 10 calls of ``leaf``, each of whose agents makes 10 tool
calls that wait): from cancelling the top call to the last of its 100 tool calls seeing
``CancelledError``. ``subagent.progress_lag_ms_p99``: from the child's model answering
to its words being a ``progressed`` event of the parent's call. ``subagent.concurrent_children``:
of 100 children started in one batch on one host, those that answered.

``subagent.turn_vs_one_call_turn``: the CPU time (``time.process_time``) of a turn whose
one call is a sub-agent's (a message; the model calls ``quick``, whose child session is
opened, posted to, answered at once and stopped; the model's answer) over the CPU time of
a plain 1-call turn (the same, with ``noop`` as the call): 200 turns a round on a fresh
session, 5 rounds alternating the two after a warm-up, medians of the per-turn figures
(``subagent.turn_us`` and ``subagent.one_call_turn_us``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio

import agentos
from agentos import AgentConfig
from agentos import CallEvent
from agentos import Host
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import Runtime
from agentos import Session
from agentos import SubAgent
from agentos.testing import last_tool_results
from agentos.testing import text
from agentos.testing import tool_calls
from benchmarks._common import Empty
from benchmarks._common import Figures
from benchmarks._common import median
from benchmarks._common import noop
from benchmarks._common import percentile
from benchmarks._common import reported
from benchmarks._common import run_measure

ROUNDS = 5
CALLS_PER_ROUND = 50
TREES = 20
FAN_OUT = 10
WORDS = 200
CHILDREN = 100
TURNS = 200


class Models:
    """Each agent's model, by its system prompt: a function of the request."""

    name = "bench"

    def __init__(self, **scripts: Callable[[ModelRequest], ModelResponse]) -> None:
        self.scripts = scripts

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return self.scripts[request.system](request)


def agent(name: str, tools: list[str], **children: AgentConfig) -> AgentConfig:
    return AgentConfig(
        name=name,
        system_prompt=name,
        tools=tools,
        agents={child: SubAgent(agent=config) for child, config in children.items()},
        max_children_running=CHILDREN,
        max_steps_per_turn=WORDS + 5,
    )


def fan_out(tool_name: str, arguments: dict[str, str]) -> Callable[[ModelRequest], ModelResponse]:
    """Calls ``tool_name`` ``FAN_OUT`` times, then answers."""

    def script(request: ModelRequest) -> ModelResponse:
        if last_tool_results(request):
            return text("done")
        return tool_calls(*[(tool_name, arguments)] * FAN_OUT)

    return script


async def call_ms(
    runtime: Runtime, session: Session, tool_name: str, arguments: dict[str, str]
) -> float:
    started = time.perf_counter()
    for _ in range(CALLS_PER_ROUND):
        call = runtime.submit(tool_name, arguments, session_id=session.session_id)
        done = await runtime.wait(call, 30)
        assert done.status == "completed", done
    return (time.perf_counter() - started) / CALLS_PER_ROUND * 1e3


async def overhead(host: Host, runtime: Runtime) -> Figures:
    session = await host.create_session(agent("top", ["noop"], quick=agent("quick", [])))
    child: list[float] = []
    plain: list[float] = []
    await call_ms(runtime, session, "quick", {"task": "hi"})  # warm-up
    for _ in range(ROUNDS):
        child.append(await call_ms(runtime, session, "quick", {"task": "hi"}))
        plain.append(await call_ms(runtime, session, "noop", {}))
    return {
        "subagent.call_ms": round(median(child), 3),
        "subagent.plain_call_ms": round(median(plain), 3),
        "subagent.call_overhead_ms": round(median(child) - median(plain), 3),
    }


def one_call(tool_name: str) -> Callable[[ModelRequest], ModelResponse]:
    """Calls ``tool_name`` once for a message, then answers."""

    def script(request: ModelRequest) -> ModelResponse:
        if last_tool_results(request):
            return text("done")
        return tool_calls((tool_name, {"task": "hi"} if tool_name == "quick" else {}))

    return script


async def turn_cpu_us(session: Session, turns: int) -> float:
    """CPU microseconds per turn of ``session`` (posted, then ``wait_idle``)."""
    started = time.process_time()
    for turn in range(turns):
        session.post(f"turn {turn}")
        await session.wait_idle()
    if session.errors:
        raise RuntimeError(f"the session failed: {session.errors}")
    return (time.process_time() - started) / turns * 1e6


async def turn_ratio(host: Host) -> Figures:
    via_child = agent("via_child", ["quick"], quick=agent("quick", []))
    via_noop = agent("via_noop", ["noop"])
    await turn_cpu_us(await host.create_session(via_child), 20)  # warm-up
    await turn_cpu_us(await host.create_session(via_noop), 20)
    child_us: list[float] = []
    plain_us: list[float] = []
    for _ in range(ROUNDS):  # fresh sessions: a round's histories start empty
        child_us.append(await turn_cpu_us(await host.create_session(via_child), TURNS))
        plain_us.append(await turn_cpu_us(await host.create_session(via_noop), TURNS))
    return {
        "subagent.turn_us": round(median(child_us), 1),
        "subagent.one_call_turn_us": round(median(plain_us), 1),
        "subagent.turn_vs_one_call_turn": round(median(child_us) / median(plain_us), 2),
    }


class Holds:
    """The leaves' tool: waits until cancelled, and notes when the cancel reached it."""

    def __init__(self) -> None:
        self.started = 0
        self.cancelled = 0
        self.all_started = anyio.Event()
        self.all_cancelled = anyio.Event()
        self.last_cancel = 0.0

        @agentos.tool
        async def wait_here(args: Empty) -> None:
            """Waits until cancelled."""
            self.started += 1
            if self.started == FAN_OUT * FAN_OUT:
                self.all_started.set()
            try:
                await anyio.sleep_forever()
            finally:
                self.cancelled += 1
                self.last_cancel = time.perf_counter()
                if self.cancelled == FAN_OUT * FAN_OUT:
                    self.all_cancelled.set()

        self.tool = wait_here


async def cancel_tree(host: Host, runtime: Runtime, holds: Holds) -> list[float]:
    leaf = agent("leaf", ["wait_here"])
    config = agent("root", [], mid=agent("mid", [], leaf=leaf))
    times = []
    for _ in range(TREES):
        holds.started = holds.cancelled = 0
        holds.all_started, holds.all_cancelled = anyio.Event(), anyio.Event()
        session = await host.create_session(config)
        top = runtime.submit("mid", {"task": "go"}, session_id=session.session_id)
        with anyio.fail_after(60):
            await holds.all_started.wait()
        started = time.perf_counter()
        runtime.cancel(top, "benchmark")
        with anyio.fail_after(60):
            await holds.all_cancelled.wait()
        times.append(holds.last_cancel - started)
    return times


async def progress_lag(host: Host, runtime: Runtime, answered: dict[str, float]) -> list[float]:
    session = await host.create_session(agent("top", [], talker=agent("talker", ["noop"])))
    lags: list[float] = []
    done = anyio.Event()

    def heard(event: CallEvent) -> None:
        said = reported(event).get("said")
        if isinstance(said, str):
            lags.append(time.perf_counter() - answered[said])
            if len(lags) == WORDS:
                done.set()

    stop = runtime.on_call_events(session.session_id, heard)
    call = runtime.submit("talker", {"task": "talk"}, session_id=session.session_id)
    with anyio.fail_after(120):
        await done.wait()
    stop()
    await runtime.wait(call, 30)
    return lags


async def concurrent(host: Host, runtime: Runtime) -> int:
    session = await host.create_session(agent("many", [], child=agent("child", [])))
    calls = [
        runtime.submit("child", {"task": f"n{n}"}, session_id=session.session_id)
        for n in range(CHILDREN)
    ]
    answered = 0
    for call in calls:
        done = await runtime.wait(call, 120)
        answered += done.status == "completed" and done.result == "done"
    return answered


async def measure() -> Figures:
    holds = Holds()
    answered: dict[str, float] = {}

    def talker(request: ModelRequest) -> ModelResponse:
        step = len(request.messages) // 2
        said = f"step {step}"
        answered[said] = time.perf_counter()
        if step >= WORDS:
            return text(said)
        return tool_calls(("noop", {}), say=said)

    models = Models(
        top=lambda r: text("-"),
        quick=lambda r: text("done"),
        child=lambda r: text("done"),
        many=lambda r: text("-"),
        root=lambda r: text("-"),
        mid=fan_out("leaf", {"task": "go"}),
        leaf=fan_out("wait_here", {}),
        talker=talker,
        via_child=one_call("quick"),
        via_noop=one_call("noop"),
    )
    async with (
        Runtime([noop, holds.tool], max_running=4096, max_running_per_session=256) as runtime,
        Host(runtime, models) as host,
    ):
        figures = await overhead(host, runtime)
        figures |= await turn_ratio(host)
        cancels = await cancel_tree(host, runtime, holds)
        lags = await progress_lag(host, runtime, answered)
        children = await concurrent(host, runtime)
    return {
        **figures,
        "subagent.cancel_tree_ms_p50": round(percentile(cancels, 0.5) * 1e3, 2),
        "subagent.cancel_tree_ms_p99": round(percentile(cancels, 0.99) * 1e3, 2),
        "subagent.progress_lag_ms_p50": round(percentile(lags, 0.5) * 1e3, 2),
        "subagent.progress_lag_ms_p99": round(percentile(lags, 0.99) * 1e3, 2),
        "subagent.concurrent_children": children,
    }


if __name__ == "__main__":
    run_measure(measure)
