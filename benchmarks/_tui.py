"""``agentos chat`` with 200 running calls that report progress: does the UI stay responsive?

The terminal UI runs headless (Textual's ``run_test``, 80x24, frames composed as
on a terminal) on the loop that runs the runtime, as ``agentos chat`` does. One
message starts 200 calls; each reports its percent 10 times a second (2,000
events a second in all). Measured while they run, and for comparison once they
have all ended (``_idle``: the same 200 rows, nothing moving), in one process:
a key's latency (``down``/``up`` on the calls pane, from the key event to the
first frame composed with the cursor moved, ``tui.key_p99_ms``; headless,
Textual skips only turning the frame into terminal bytes), the loop's lag (a
10 ms sleep's overshoot, ``tui.loop_lag_p99_ms``), and how many redraws the
events cost (``tui.redraws_per_s`` against ``tui.events_per_s``) and how long
each takes (``tui.redraw_p50_ms``, ``tui.redraw_max_ms``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import anyio
from pydantic import BaseModel
from textual import events

import agentos
from agentos import AgentConfig
from agentos import Host
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import ToolContext
from agentos import YieldOnTimeout
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.tui import CallsPane
from agentos.tui import ChatApp
from benchmarks._common import Figures
from benchmarks._common import emit
from benchmarks._common import loop_lag
from benchmarks._common import percentile
from benchmarks._common import quiet_logs

KEYS = 100


class Lap(BaseModel):
    """Which of the calls this is."""

    n: int


class Flood:
    """The ``ticker`` tool: reports its percent every 0.1 s until ``stop`` is set."""

    def __init__(self) -> None:
        self.stop = anyio.Event()
        self.reports = 0

    def tool(self) -> agentos.Tool[Lap]:
        flood = self

        @agentos.tool
        async def ticker(args: Lap, ctx: ToolContext) -> str:
            """Reports progress 10 times a second."""
            await anyio.sleep(args.n / 2000)  # spread the reports over the 0.1 s
            percent = 0
            while not flood.stop.is_set():
                percent = (percent + 1) % 100
                ctx.progress({"percent": percent})
                flood.reports += 1
                await anyio.sleep(0.1)
            return "done"

        return ticker


def model(calls: int) -> ScriptedProvider:
    return ScriptedProvider(
        (
            lambda r: last_user_text(r) == "start them",
            lambda r: tool_calls(*(("ticker", {"n": n}) for n in range(calls))),
        ),
        (lambda r: True, lambda r: text("noted")),
    )


class Watched(ChatApp):
    """``ChatApp`` that says when a frame shows the calls' cursor on row ``target``."""

    target = -1
    shown: anyio.Event | None = None

    def post_display_hook(self) -> None:
        if self.shown is not None and self.query_one(CallsPane).cursor_row == self.target:
            self.shown.set()

    async def key_latencies(self) -> list[float]:
        """ms from ``down``/``up`` on the calls pane to a frame with the cursor moved."""
        latencies = []
        for n in range(KEYS):
            self.target = self.query_one(CallsPane).cursor_row + (1 if n % 2 == 0 else -1)
            self.shown = shown = anyio.Event()
            before = time.perf_counter()
            key = events.Key("down" if n % 2 == 0 else "up", None)
            key.set_sender(self)
            assert self._driver is not None
            self._driver.send_message(key)  # as a terminal's input thread does
            with anyio.fail_after(10):
                await shown.wait()
            latencies.append((time.perf_counter() - before) * 1000)
            self.shown = None
        return latencies


def timed(redraw: Callable[[], None], spent: list[float]) -> Callable[[], None]:
    def run() -> None:
        before = time.perf_counter()
        redraw()
        spent.append((time.perf_counter() - before) * 1000)

    return run


async def measure(calls: int, seconds: float) -> Figures:
    flood = Flood()
    config = AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=50))
    async with (
        Runtime([flood.tool()], max_running_per_session=calls + 1) as runtime,
        Host(runtime, model(calls)) as host,
    ):
        session = await host.create_session(config)
        app = Watched(session, runtime, theme="dark")
        async with app.run_test(size=(80, 24)) as pilot:
            app.query_one(CallsPane).focus()
            session.post("start them")
            with anyio.fail_after(60):
                while app.query_one(CallsPane).row_count < calls or not session.idle:
                    await settle(runtime)
                    await pilot.pause(0.05)
            redraws: list[float] = []
            app.redraw = timed(app.redraw, redraws)  # type: ignore[method-assign]
            reports_before, started = flood.reports, time.perf_counter()
            keys = await app.key_latencies()
            lag = await loop_lag(seconds)
            elapsed = time.perf_counter() - started
            listed = runtime.list_calls(session.session_id)
            running = sum(1 for call in listed if call.status == "running")
            flood.stop.set()
            with anyio.fail_after(60):
                while not all(
                    call.status.is_final for call in runtime.list_calls(session.session_id)
                ):
                    await settle(runtime)
                    await pilot.pause(0.05)
            await pilot.pause(0.5)
            idle_keys = await app.key_latencies()
            idle_lag = await loop_lag(seconds)
    return {
        "tui.calls_running": running,
        "tui.key_p99_ms": round(percentile(keys, 0.99), 2),
        "tui.key_p50_ms": round(percentile(keys, 0.5), 2),
        "tui.key_p99_ms_idle": round(percentile(idle_keys, 0.99), 2),
        "tui.loop_lag_p99_ms": round(percentile(lag, 0.99), 2),
        "tui.loop_lag_p99_ms_idle": round(percentile(idle_lag, 0.99), 2),
        "tui.events_per_s": round((flood.reports - reports_before) / elapsed),
        "tui.redraws_per_s": round(len(redraws) / elapsed, 1),
        "tui.redraw_p50_ms": round(percentile(redraws, 0.5), 2),
        "tui.redraw_max_ms": round(max(redraws), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=5.0)
    options = parser.parse_args()
    quiet_logs()
    emit(anyio.run(measure, options.calls, options.seconds))


if __name__ == "__main__":
    main()
