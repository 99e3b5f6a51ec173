"""The shared demo tools (``agentos.demo.tools``): what they do and how they are described."""

from __future__ import annotations

import json

import anyio
import pytest

from agentos import CallEventKind
from agentos import CallStatus
from agentos import Host
from agentos import ModelRequest
from agentos import ProgressKind
from agentos import Runtime
from agentos.demo.tools import DEFAULT_AGENT
from agentos.demo.tools import TOOLS
from agentos.demo.tools import brief
from agentos.demo.tools import describe_call
from agentos.demo.tools import scripted_model
from agentos.turns import Message

pytestmark = pytest.mark.anyio


def test_calls_and_results_read_as_plain_words() -> None:
    assert describe_call("fetch_calendar", {"person": "Jane"}) == "fetch_calendar(Jane)"
    assert (
        describe_call("fetch_calendar", {"seconds": 1.5, "person": "Joe", "stall_at": 40})
        == "fetch_calendar(Joe, seconds=1.5, stall_at=40)"
    )
    assert describe_call("write_report", {"pages": 60}) == "write_report(pages=60)"
    assert describe_call("weather", {"city": "Oslo"}) == "weather(Oslo)"
    assert describe_call("x", {"flag": True, "note": "a b"}) == 'x(flag=true, note="a b")'
    assert brief({"city": "Oslo", "sky": "clear", "celsius": 20}) == "Oslo: clear, 20 °C."
    assert brief({"person": "Jo", "free": ["10:00-11:00"]}) == "Jo is free 10:00-11:00."
    assert brief("3 pages written") == "3 pages written"


async def test_the_scripted_model_writes_a_report_when_asked() -> None:
    def asked(prompt: str) -> ModelRequest:
        return ModelRequest("m", "", [{"role": "user", "content": prompt}])

    model = scripted_model()
    report = await model.complete(asked("Please write the quarterly report, 5 pages"))
    uses = [b for b in report.content if b["type"] == "tool_use"]
    assert [(u["name"], u["input"]) for u in uses] == [("write_report", {"pages": 5})]
    weather = await model.complete(asked("What is the weather in Oslo? Report back."))
    assert [b["name"] for b in weather.content if b["type"] == "tool_use"] == ["weather"]


async def test_the_scripted_model_tells_the_news_and_still_does_what_was_asked() -> None:
    """A message that arrives with news (here: the result of a call lost in a restart) is
    answered with the news first, then what the person asked for, not the news alone."""
    lost = {"type": "tool_use", "id": "toolu_lost", "name": "fetch_calendar", "input": {}}
    history: list[Message] = [
        {"role": "user", "content": "When can Jane meet?"},
        {"role": "assistant", "content": [lost]},
    ]
    async with Runtime(TOOLS) as runtime, Host(runtime, scripted_model()) as host:
        session = await host.create_session(DEFAULT_AGENT, history=history)
        session.post("Write a 3 page report please")
        with anyio.fail_after(10):
            await session.wait_idle()
        (call,) = session.calls_after(0)
        assert (call.tool_name, call.tool_input) == ("write_report", {"pages": 3})
        assert session.replies[1] == (
            "fetch_calendar failed: lost in a restart: the call no longer exists. "
            "On it: write_report(pages=3)."
        )


async def test_a_calendar_that_stalls_logs_why_and_waits_to_be_cancelled() -> None:
    async with Runtime(TOOLS) as runtime, runtime.subscribe("s") as events:
        call = runtime.submit(
            "fetch_calendar", {"person": "Joe", "seconds": 0.05, "stall_at": 40}, session_id="s"
        )
        with anyio.fail_after(10):
            async for event in events:
                if event.progress is not None and event.progress.kind is ProgressKind.LOG:
                    break
        status = runtime.status(call)
        assert status.status is CallStatus.RUNNING
        assert [p.payload for p in status.progress[1:]] == [
            {"percent": 20, "person": "Joe"},
            "Joe's calendar server stopped answering",
        ]
        assert runtime.cancel(call, "stalled").cancelled
        assert runtime.status(call).status is CallStatus.CANCELLED


async def test_a_report_is_written_in_a_thread_and_stops_when_cancelled() -> None:
    async with Runtime(TOOLS) as runtime, runtime.subscribe("s") as events:
        long = runtime.submit("write_report", {"pages": 600}, session_id="s")
        short = runtime.submit("write_report", {"pages": 1}, session_id="s")
        with anyio.fail_after(10):
            async for event in events:
                if event.call_id == long and event.kind is CallEventKind.STARTED:
                    break
        assert runtime.cancel(long, "enough").cancelled
        done = await runtime.wait(short, timeout=10)
    assert (done.status, done.result) == (CallStatus.COMPLETED, "1 page written")
    assert done.progress[-1].payload == {"page": 1, "of": 1}


def test_the_default_agent_defers_approvals_only() -> None:
    assert {tool.name for tool in TOOLS} == {"fetch_calendar", "write_report", "approve", "weather"}
    assert DEFAULT_AGENT.policy.rules == {"approve": "defer"}


async def test_the_scripted_model_says_a_call_still_runs_without_its_id() -> None:
    """The chat shows the model's words to the person: a call still running is named by its
    tool, not by a tool_use id nobody can type back."""
    use = {"type": "tool_use", "id": "toolu_0572a352", "name": "fetch_calendar", "input": {}}
    placeholder = {"agentos_placeholder": True, "tool_call_id": "toolu_0572a352"}
    result = {"type": "tool_result", "tool_use_id": "toolu_0572a352", "content": ""}
    result["content"] = json.dumps(placeholder)
    request = ModelRequest(
        "m",
        "",
        [
            {"role": "user", "content": "When is Jane free?"},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [result]},
        ],
    )
    reply = await scripted_model().complete(request)
    said = " ".join(b["text"] for b in reply.content if b["type"] == "text")
    assert "fetch_calendar is still running" in said
    assert "toolu_" not in said


async def test_the_scripted_model_tells_a_tools_running_calls_in_one_line() -> None:
    """Three calendars still running read as one sentence, not the same one three times."""
    uses, results = [], []
    for number in range(3):
        tool_use_id = f"toolu_{number}"
        uses.append({"type": "tool_use", "id": tool_use_id, "name": "fetch_calendar", "input": {}})
        placeholder = {"agentos_placeholder": True, "tool_call_id": tool_use_id}
        results.append(
            {"type": "tool_result", "tool_use_id": tool_use_id, "content": json.dumps(placeholder)}
        )
    request = ModelRequest(
        "m",
        "",
        [
            {"role": "user", "content": "When are they free?"},
            {"role": "assistant", "content": uses},
            {"role": "user", "content": results},
        ],
    )
    reply = await scripted_model().complete(request)
    said = " ".join(b["text"] for b in reply.content if b["type"] == "text")
    assert said.count("still running") == 1, said
    assert "3 calls of fetch_calendar are still running." in said
