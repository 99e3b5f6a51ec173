"""Run every benchmark, each in a fresh process, and write ``results/latest.json``.

Usage: ``python -m benchmarks [--strict] [--output PATH]`` (``make bench``).
Prints each figure beside its target; ``--strict`` exits 1 if a target is
missed (by default only a benchmark that crashes makes the exit status 1).
"""

from __future__ import annotations

import argparse
import datetime
import json
import operator
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from benchmarks._common import Figures

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = Path(__file__).resolve().parent / "results" / "latest.json"
JOB_TIMEOUT_SECONDS = 300


@dataclass(frozen=True)
class Job:
    """One benchmark process: ``python -m <module> <args>``."""

    title: str
    module: str
    args: tuple[str, ...] = ()


JOBS = (
    Job("lifecycle", "benchmarks._lifecycle"),
    Job("a turn against bare tasks", "benchmarks._turn"),
    Job("scale 1k", "benchmarks._scale", ("--calls", "1000", "--sessions", "100", "--label", "1k")),
    Job(
        "scale 100k",
        "benchmarks._scale",
        ("--calls", "100000", "--sessions", "10000", "--label", "100k"),
    ),
    Job(
        "scale, a million calls in flight",
        "benchmarks._scale",
        ("--calls", "1000000", "--sessions", "10000", "--label", "1m", "--memory"),
    ),
    Job("raw anyio memory", "benchmarks._scale", ("--raw-anyio", "--calls", "100000")),
    Job("status", "benchmarks._status"),
    Job("idle", "benchmarks._idle"),
    Job("sessions", "benchmarks._sessions", ("--rounds", "3")),
    Job(
        "sessions, light load",
        "benchmarks._sessions",
        ("--sessions", "10", "--turns", "20", "--prefix", "sessions.light."),
    ),
    Job(
        "sessions, SQLite store", "benchmarks._sessions", ("--store", "--prefix", "sessions.store.")
    ),
    Job(
        "sessions, what 40 turns hold in memory",
        "benchmarks._sessions",
        ("--sessions", "200", "--turns", "40", "--memory"),
    ),
    Job(
        "sessions, what 40 turns hold in the store",
        "benchmarks._sessions",
        ("--sessions", "200", "--turns", "40", "--memory", "--store"),
    ),
    Job(
        "sessions, what a kept turn leaves the collector",
        "benchmarks._sessions",
        ("--sessions", "200", "--turns", "10", "--tracked"),
    ),
    Job(
        "10,000 sessions in one process",
        "benchmarks._sessions",
        ("--sessions", "10000", "--turns", "2", "--prefix", "scale.sessions_10k_"),
    ),
    Job("faults, progress flood", "benchmarks._faults", ("--flood",)),
    Job("faults, cancel 100k", "benchmarks._faults", ("--cancel",)),
    Job("faults, burst of 100k submits", "benchmarks._faults", ("--burst",)),
    Job("waiting on a slow call, in model requests", "benchmarks._overdue"),
    Job("board", "benchmarks._board"),
    Job("board, prompt-cache prefix", "benchmarks._board_cache"),
    Job("web page, progress to the DOM", "benchmarks._web", ("--dom",)),
    Job("web page, 500 pages open", "benchmarks._web", ("--clients", "500")),
    Job(
        "web page, 500 pages that never read a 200 KB chat",
        "benchmarks._web",
        ("--stalled", "500", "--chat-kb", "200"),
    ),
    Job("terminal UI, 200 running calls", "benchmarks._tui"),
    Job("streamed answers to the screen", "benchmarks._stream"),
    Job("OpenTelemetry spans, a turn's cost", "benchmarks._otel"),
    Job("MCP server calls", "benchmarks._mcp"),
    Job("A2A agents as calls", "benchmarks._a2a"),
    Job("sub-agents as calls", "benchmarks._subagents"),
    Job("tool calls on Ray", "benchmarks._ray"),
    Job("sessions on PostgreSQL, across hosts", "benchmarks._postgres"),
    Job("PostgreSQL, a paused holder taken over", "benchmarks._postgres", ("--paused-holder",)),
    Job("soak (GC tuned, as the CLI runs)", "benchmarks._soak", ("--tune-gc",)),
    Job("soak, default GC", "benchmarks._soak", ("--prefix", "soak.default_gc.")),
)


@dataclass(frozen=True)
class Target:
    symbol: str
    limit: float
    check: Callable[[float, float], bool]


def at_most(limit: float) -> Target:
    return Target("<=", limit, operator.le)


def at_least(limit: float) -> Target:
    return Target(">=", limit, operator.ge)


TARGETS: dict[str, Target] = {
    "lifecycle.ratio_vs_anyio": at_most(2.5),
    "turn.one_call_vs_bare_task": at_most(20),
    "turn.per_call_vs_bare_gather": at_most(8),
    "turn.ticks_per_one_call_turn": at_most(2),
    "turn.cancel_scopes_per_one_call_turn": at_most(4),
    "sessions.cpu_us_per_turn": at_most(400),
    "sessions.rss_bytes_per_session_40_turns": at_most(100_000),
    "sessions.store_bytes_per_session_40_turns": at_most(20_000),
    "gc.tracked_objects_per_kept_turn": at_most(8),
    "scale.rss_bytes_per_call": at_most(5_000),
    "scale.sessions_10k_event_to_request_p99_ms": at_most(5),
    "faults.cancel_100k_max_tick_ms": at_most(50),
    "scale.tick_ratio_100k_vs_1k": at_most(3),
    "status.p99_us": at_most(30),
    "status.capability_p99_us": at_most(60),
    "idle.cpu_percent": at_most(2),
    "sessions.event_to_request_p99_ms": at_most(2),
    "sessions.store.event_to_request_p99_ms": at_most(2),
    "sessions.rss_bytes_per_session": at_most(100_000),
    "faults.progress_flood_max_tick_ms": at_most(50),
    "faults.cancel_100k_seconds": at_most(2),
    "faults.burst_100k_max_tick_ms": at_most(50),
    "soak.max_tick_ms": at_most(100),
    "soak.default_gc.max_tick_ms": at_most(100),
    "soak.fds_leaked": at_most(0),
    "soak.threads_leaked": at_most(0),
    "soak.tasks_leaked": at_most(0),
    "overdue.requests_12s_call_1s_estimate": at_most(6),
    "overdue.requests_600s_call_1s_estimate": at_most(12),
    "board.cached_prefix_ratio": at_least(0.8),
    "board.cache_read_ratio": at_least(0.8),
    "web.event_to_dom_p99_ms": at_most(100),
    "web.sse_clients": at_least(500),
    "web.loop_lag_p99_ms": at_most(10),
    "web.stalled_streams_rss_growth_mb": at_most(50),
    "web.stalled_streams_api_p99_ms": at_most(50),
    "tui.key_p99_ms": at_most(100),
    "stream.first_token_to_screen_ms": at_most(50),
    "otel.turn_overhead_ratio": at_most(1.3),
    "mcp.cancel_to_server_ms_p99": at_most(20),
    "mcp.concurrent_calls_progress": at_least(50),
    "mcp.elicitation_round_trip_ms_p99": at_most(20),
    "a2a.cancel_ms_p99": at_most(20),
    "a2a.progress_lag_ms_p99": at_most(20),
    "subagent.cancel_tree_ms_p99": at_most(100),
    "subagent.progress_lag_ms_p99": at_most(50),
    "subagent.concurrent_children": at_least(100),
    "subagent.turn_vs_one_call_turn": at_most(2),
    "pg.cross_host_cancel_ms_p99": at_most(100),
    "pg.cross_host_complete_ms_p99": at_most(100),
    "pg.failover_seconds": at_most(3.0),  # the bench's lease expiry (2 s) + 1 s
    "pg.turns_lost": at_most(0),
    "pg.takeover_seconds_paused_holder": at_most(4.0),  # 2 x the bench's lease expiry (2 s)
    "pg.bytes_ratio_vs_sqlite": at_most(2),
}

HEADLINE = (
    "lifecycle.per_call_us",
    "lifecycle.raw_anyio_per_call_us",
    "lifecycle.ratio_vs_anyio",
    "turn.one_call_us",
    "turn.bare_task_us",
    "turn.one_call_vs_bare_task",
    "turn.per_call_vs_bare_gather",
    "turn.ticks_per_one_call_turn",
    "turn.cancel_scopes_per_one_call_turn",
    "scale.inflight_calls",
    "scale.rss_bytes_per_call",
    "scale.raw_anyio_rss_bytes_per_task",
    "scale.tick_us_1k",
    "scale.tick_us_100k",
    "scale.tick_ratio_100k_vs_1k",
    "status.p99_us",
    "status.capability_p99_us",
    "idle.cpu_percent",
    "sessions.turns_per_s",
    "sessions.cpu_us_per_turn",
    "sessions.event_to_request_p50_ms",
    "sessions.event_to_request_p99_ms",
    "sessions.light.event_to_request_p99_ms",
    "sessions.rss_bytes_per_session",
    "gc.tracked_objects_per_kept_turn",
    "sessions.store.turns_per_s",
    "sessions.store.event_to_request_p99_ms",
    "faults.progress_flood_max_tick_ms",
    "faults.cancel_100k_seconds",
    "faults.cancel_100k_unwind_seconds",
    "faults.cancel_100k_raw_anyio_unwind_seconds",
    "faults.burst_100k_max_tick_ms",
    "faults.burst_100k_default_gc_max_tick_ms",
    "overdue.requests_12s_call_1s_estimate",
    "overdue.requests_600s_call_1s_estimate",
    "board.render_us",
    "board.first_render_us",
    "board.cached_prefix_ratio",
    "board.board_prefix_ratio",
    "board.cache_read_ratio",
    "web.event_to_dom_p50_ms",
    "web.event_to_dom_p99_ms",
    "web.sse_clients",
    "web.loop_lag_p99_ms_no_pages",
    "web.loop_lag_p99_ms",
    "web.stalled_streams_rss_growth_mb",
    "web.stalled_streams_api_p99_ms",
    "tui.key_p99_ms",
    "tui.key_p99_ms_idle",
    "tui.loop_lag_p99_ms",
    "tui.events_per_s",
    "tui.redraws_per_s",
    "stream.first_token_to_tui_ms_p99",
    "stream.first_token_to_page_ms_p99",
    "stream.first_token_to_screen_ms",
    "otel.turn_us",
    "otel.traced_turn_us",
    "otel.turn_overhead_ratio",
    "otel.noop_tracer_ratio",
    "otel.sdk_span_us",
    "otel.sdk_turn_spans_us",
    "otel.floor_ratio",
    "otel.overhead_vs_sdk_floor",
    "mcp.echo_call_us",
    "mcp.inprocess_echo_call_us",
    "mcp.call_overhead_us",
    "mcp.call_overhead_ratio",
    "mcp.cancel_to_server_ms_p99",
    "mcp.concurrent_calls_progress",
    "mcp.elicitation_round_trip_ms",
    "mcp.elicitation_round_trip_ms_p99",
    "mcp.task_resume_s",
    "a2a.call_ms",
    "a2a.sdk_call_ms",
    "a2a.inprocess_call_ms",
    "a2a.call_overhead_ms",
    "a2a.cancel_ms_p99",
    "a2a.progress_lag_ms_p99",
    "subagent.call_ms",
    "subagent.plain_call_ms",
    "subagent.call_overhead_ms",
    "subagent.cancel_tree_ms_p99",
    "subagent.progress_lag_ms_p99",
    "subagent.concurrent_children",
    "subagent.turn_us",
    "subagent.one_call_turn_us",
    "subagent.turn_vs_one_call_turn",
    "ray.call_ms",
    "ray.inprocess_call_ms",
    "ray.call_overhead_ms",
    "ray.cancel_ms_p99",
    "ray.progress_lag_ms_p99",
    "pg.hosts_4_sessions_1000_turns_per_s",
    "sqlite.hosts_1_sessions_1000_turns_per_s",
    "pg.cross_host_cancel_ms_p99",
    "pg.cross_host_complete_ms_p99",
    "pg.failover_seconds",
    "pg.turns_lost",
    "pg.takeover_seconds_paused_holder",
    "pg.bytes_per_session_40_turns",
    "sqlite.bytes_per_session_40_turns",
    "pg.bytes_ratio_vs_sqlite",
    "soak.max_tick_ms",
    "soak.max_loop_stall_ms",
    "soak.turn_p99_ms",
    "soak.rss_growth_bytes_per_turn",
    "soak.gc_max_pause_ms",
    "soak.default_gc.max_tick_ms",
    "soak.default_gc.gc_max_pause_ms",
    "soak.gc_max_pause_ratio_default_vs_tuned",
    "soak.fds_leaked",
    "soak.threads_leaked",
    "soak.tasks_leaked",
)
"""Printed first, in this order; every other figure follows, sorted."""


def run_job(job: Job) -> tuple[Figures, str | None]:
    """Run one benchmark process; its figures are the last line of stdout."""
    command = [sys.executable, "-m", job.module, *job.args]
    try:
        done = subprocess.run(
            command,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=JOB_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {}, f"timed out after {JOB_TIMEOUT_SECONDS}s"
    lines = done.stdout.strip().splitlines()
    figures = _last_json_object(lines)
    if done.returncode != 0 or figures is None:
        # A benchmark whose own checks fail still prints its figures first: keep them.
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        return figures or {}, f"exit status {done.returncode}\n{tail}"
    return figures, None


def _last_json_object(lines: list[str]) -> Figures | None:
    if not lines:
        return None
    try:
        figures = json.loads(lines[-1])
    except json.JSONDecodeError:
        return None
    return figures if isinstance(figures, dict) else None


def derive(results: Figures) -> None:
    """Figures computed from two processes' figures."""
    ratio(results, "scale.tick_ratio_100k_vs_1k", "scale.tick_us_100k", "scale.tick_us_1k", 3)
    ratio(
        results,
        "soak.gc_max_pause_ratio_default_vs_tuned",
        "soak.default_gc.gc_max_pause_ms",
        "soak.gc_max_pause_ms",
        2,
    )


def ratio(results: Figures, name: str, numerator: str, denominator: str, digits: int) -> None:
    """``results[name] = numerator / denominator`` when both were measured."""
    large = results.get(numerator)
    small = results.get(denominator)
    if isinstance(small, int | float) and isinstance(large, int | float) and small > 0:
        results[name] = round(large / small, digits)


def meta() -> Figures:
    figures: Figures = {
        "meta.python": platform.python_version(),
        "meta.implementation": platform.python_implementation(),
        "meta.platform": platform.platform(),
        "meta.cpu_count": os.cpu_count() or 0,
        "meta.timestamp": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    for package in ("agentos", "anyio", "esper", "pydantic", "structlog"):
        try:
            figures[f"meta.{package}"] = metadata.version(package)
        except metadata.PackageNotFoundError:
            figures[f"meta.{package}"] = "unknown"
    return figures


def verdict(name: str, value: float | int | str) -> str:
    target = TARGETS.get(name)
    if target is None:
        return ""
    if not isinstance(value, int | float):
        return f"target {target.symbol} {target.limit:g}   ?"
    ok = target.check(value, target.limit)
    return f"target {target.symbol} {target.limit:g}   {'ok' if ok else 'MISSED'}"


def format_value(value: float | int | str) -> str:
    if isinstance(value, float):
        return f"{value:.2f}" if abs(value) < 1e6 else f"{value:.4g}"
    return str(value)


def print_table(results: Figures) -> None:
    names = [name for name in HEADLINE if name in results]
    names += sorted(
        name for name in results if name not in HEADLINE and not name.startswith("meta.")
    )
    width = max(len(name) for name in names) + 2
    for name in names:
        value = results[name]
        line = f"{name:<{width}}{format_value(value):>12}   {verdict(name, value)}"
        print(line.rstrip())
    for name in TARGETS:
        if name not in results:
            print(f"{name:<{width}}{'-':>12}   {verdict(name, '-')} (not measured)")


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--strict", action="store_true", help="exit 1 if a target is missed")
    options = parser.parse_args()

    results: Figures = meta()
    failures: list[str] = []
    began = time.perf_counter()
    for job in JOBS:
        print(f"running {job.title} ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        figures, error = run_job(job)
        results[f"meta.seconds.{job.title.replace(' ', '_')}"] = round(
            time.perf_counter() - started, 2
        )
        if error is not None:
            failures.append(job.title)
            print(f"  {job.title} failed: {error}", file=sys.stderr, flush=True)
        results |= figures
    derive(results)
    results["meta.seconds.total"] = round(time.perf_counter() - began, 2)

    options.output.parent.mkdir(parents=True, exist_ok=True)
    options.output.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print_table(results)
    print(f"\nwrote {options.output}")

    missed = [
        name
        for name, target in TARGETS.items()
        if not (
            isinstance(results.get(name), int | float)
            and target.check(float(results[name]), target.limit)
        )
    ]
    if missed:
        print(f"targets missed: {', '.join(missed)}")
    if failures:
        print(f"benchmarks that failed: {', '.join(failures)}")
        return 1
    return 1 if options.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main())
