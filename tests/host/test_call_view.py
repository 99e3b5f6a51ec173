"""Issue 45: what a person sees of a call has one shape (``agentos.stores.CallView``): its
newest progress payload (and percent) and its newest log line apart, a log line never
replacing a percent, and how its session runs it (its disposition) wherever a call is read."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agentos import AgentConfig
from agentos import CallEvent
from agentos import Decorate
from agentos import Decorator
from agentos import Disposition
from agentos import ManualClock
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import ToolContext
from agentos import ToolPolicy
from agentos import tool
from agentos.stores import CallView
from agentos.testing import Puppet
from agentos.testing import last_tool_results
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.turns import Caller
from agentos.turns import SystemToolbox
from tests.support.backends import running

pytestmark = pytest.mark.anyio


async def test_a_log_line_never_replaces_the_percent(puppet: Puppet, runtime: Runtime) -> None:
    call_id = runtime.submit("puppet", {}, session_id="s")
    await settle(runtime)
    puppet.progress(call_id, {"percent": 40, "page": 4})
    puppet.log(call_id, "fetched page 4")
    await settle(runtime)
    view = CallView.of(runtime.status(call_id))
    assert (view.progress, view.percent, view.log) == (
        {"percent": 40, "page": 4},
        40,
        "fetched page 4",
    )
    assert view.progress_text() == "40% · fetched page 4"
    assert (view.status, view.tool_name, view.session_id) == ("running", "puppet", "s")

    for line in range(60):  # more lines than the log keeps: the percent stays
        puppet.log(call_id, f"line {line}")
    await settle(runtime)
    view = CallView.of(runtime.status(call_id))
    assert (view.percent, view.log) == (40, "line 59")
    for percent in range(41, 101):  # and more payloads: the last line stays
        puppet.progress(call_id, {"percent": percent})
    await settle(runtime)
    view = CallView.of(runtime.status(call_id))
    assert (view.percent, view.log) == (100, "line 59")
    puppet.complete(call_id, "done")
    await settle(runtime)
    ended = CallView.of(runtime.status(call_id))
    assert (ended.status, ended.final, ended.percent) == ("completed", True, 100)


class Lines(BaseModel):
    lines: int


@tool
async def crawl(args: Lines, ctx: ToolContext) -> None:
    """One payload, then many lines at once (one tick gets them all), then a heartbeat."""
    ctx.progress({"page": 3, "of": 10})
    for line in range(args.lines):
        ctx.log(f"line {line}")
    ctx.heartbeat()
    await anyio.sleep_forever()


async def test_a_flood_in_one_tick_keeps_the_newest_percent_and_line(clock: ManualClock) -> None:
    """Reports of one tick past what the log keeps are counted, not kept: the newest payload
    and the newest line among them are still what the view shows."""
    async with Runtime([crawl], clock=clock) as runtime:
        call_id = runtime.submit("crawl", {"lines": 99}, session_id="s")
        await settle(runtime)
        snapshot = runtime.status(call_id)
        assert snapshot.progress_seq == 102, "started, the payload, 99 lines, a heartbeat"
        assert all(entry.kind != "partial" for entry in snapshot.progress)
        view = CallView.of(snapshot)
        assert (view.percent, view.log) == (30, "line 98")
        assert snapshot.newest_progress is not None
        assert (snapshot.newest_progress.seq, snapshot.newest_progress.kind) == (2, "partial")
        runtime.cancel(call_id)
        await settle(runtime)


def decorated_and_plain() -> AgentConfig:
    labelled = Decorate(decorate=[Decorator(label="slow one")], then=Disposition.RUN_ASYNC)
    return AgentConfig(policy=ToolPolicy(rules={"puppet": labelled, "other": Disposition.RUN_SYNC}))


async def test_a_calls_disposition_is_in_its_snapshot_events_and_status_answer() -> None:
    puppet, other = Puppet(), Puppet(name="other")
    model = ScriptedProvider(
        (
            lambda request: not last_tool_results(request),
            lambda request: tool_calls(("puppet", {}), ("other", {})),
        ),
        (lambda request: True, lambda request: text("noted")),
    )
    heard: list[CallEvent] = []
    async with running(model, puppet.tool, other.tool) as (runtime, host):
        session = await host.create_session(decorated_and_plain())
        async with runtime.subscribe(session.session_id) as events:
            session.post("go")
            with anyio.fail_after(5):
                while len(puppet.calls) + len(other.calls) < 2 or not all(
                    call.started for call in [*puppet.calls.values(), *other.calls.values()]
                ):
                    await settle(runtime)
            (slow,), (quick,) = puppet.calls, other.calls
            puppet.progress(slow, {"percent": 10})
            await settle(runtime)
            while True:
                try:
                    heard.append(events.receive_nowait())
                except anyio.WouldBlock:
                    break
        assert runtime.status(slow).disposition == "decorated:run_async"
        assert runtime.status(quick).disposition == "run_sync"
        assert CallView.of(runtime.status(slow)).disposition == "decorated:run_async"
        told = {(str(event.call_id), event.kind.value): event.disposition for event in heard}
        assert told[(slow, "started")] == told[(slow, "progressed")] == "decorated:run_async"
        assert told[(quick, "started")] == "run_sync"

        toolbox = SystemToolbox(runtime)
        answer = await toolbox.invoke(
            "get_tool_call_status", {"tool_call_id": slow}, Caller(session.session_id)
        )
        shown: dict[str, Any] = json.loads(answer.to_json())
        assert (shown["disposition"], shown["status"]) == ("decorated:run_async", "running")
        puppet.complete(slow, "done")
        other.complete(quick, "done")
        with anyio.fail_after(5):
            await session.wait_settled()


def test_a_view_built_with_the_status_as_text_reads_as_before() -> None:
    """``status`` was text before it was a ``CallStatus``: a program that builds a view
    with the word still gets a view whose JSON, finality and token wait read right."""
    view = CallView("c1", "s1", "toolu_1", "crawl", {}, "running")  # type: ignore[arg-type]
    assert view.to_json()["status"] == "running"
    assert not view.final
    assert CallView("c2", "s1", None, "crawl", {}, "completed").final  # type: ignore[arg-type]
