"""Issue 9, the session items: unloading sessions from a long-lived host, repeated tool_use ids."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from agentos import (
    AgentConfig,
    Host,
    ManualClock,
    ModelRequest,
    ModelResponse,
    Runtime,
    ScriptedProvider,
    YieldOnAnyProgress,
)
from agentos.testing import Puppet, settle

pytestmark = pytest.mark.anyio


def _last_user_blocks(request: ModelRequest) -> list[dict[str, Any]]:
    last = request.messages[-1]
    content = last["content"]
    if last["role"] != "user" or isinstance(content, str):
        return []
    return list(content)


def _results(request: ModelRequest) -> list[dict[str, Any]]:
    return [b for b in _last_user_blocks(request) if b["type"] == "tool_result"]


def _said(request: ModelRequest) -> str:
    return "".join(b.get("text", "") for b in _last_user_blocks(request) if b["type"] == "text")


def _text(value: str) -> ModelResponse:
    return ModelResponse([{"type": "text", "text": value}])


def _assert_valid_messages(history: list[dict[str, Any]]) -> None:
    """Roles alternate; each tool_use id is unique and answered once, next, in order."""
    for earlier, later in itertools.pairwise(history):
        assert earlier["role"] != later["role"]
    for index, message in enumerate(history):
        uses = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        if message["role"] != "assistant" or not uses:
            continue
        assert len(set(uses)) == len(uses), f"repeated tool_use ids: {uses}"
        answers = [b["tool_use_id"] for b in history[index + 1]["content"]]
        assert answers[: len(uses)] == uses


async def _until(condition: Callable[[], bool], runtime: Runtime) -> None:
    with anyio.fail_after(5):
        while not condition():
            await settle(runtime)
            await anyio.lowlevel.checkpoint()


async def test_item_11_a_repeated_tool_use_id_keeps_each_calls_result(clock: ManualClock) -> None:
    """Issue 9 item 11: two calls with one tool_use id in one answer keep their own results."""
    same_id = [
        {"type": "tool_use", "id": "toolu_same", "name": "puppet", "input": {"label": label}}
        for label in ("a", "b")
    ]
    provider = ScriptedProvider(
        (lambda r: _said(r) == "go", lambda r: ModelResponse(same_id, "tool_use")),
        (lambda r: bool(_results(r)), lambda r: _text("one is back")),
        (lambda r: "finished" in _said(r), lambda r: _text("both are back")),
    )
    puppet = Puppet()
    config = AgentConfig(async_yield_strategy=YieldOnAnyProgress())
    async with Runtime([puppet.tool], clock=clock) as runtime, Host(runtime, provider) as host:
        session = await host.create_session(config)
        session.post("go")
        await _until(lambda: len(puppet.calls) == 2, runtime)
        calls = {c.tool_input["label"]: c for c in runtime.list_calls(session.session_id)}
        assert calls["a"].provider_call_id == "toolu_same"
        assert calls["b"].provider_call_id == "toolu_same_2"
        puppet.complete(calls["a"].call_id, "first")
        await _until(lambda: session.idle and len(provider.requests) == 2, runtime)
        result, placeholder = _results(provider.requests[1])
        assert (result["tool_use_id"], result["content"]) == ("toolu_same", "first")
        assert placeholder["tool_use_id"] == "toolu_same_2"
        assert json.loads(placeholder["content"])["tool_call_id"] == calls["b"].call_id
        puppet.complete(calls["b"].call_id, "second")
        await _until(lambda: session.idle and len(provider.requests) == 3, runtime)
        assert "[tool call toolu_same_2 (puppet) finished: completed] result: second" in _said(
            provider.requests[2]
        )
        second = runtime.resolve("toolu_same_2", session_id=session.session_id)
        assert runtime.status(second).result == "second"
    assert session.replies == ["", "one is back", "both are back"]
    _assert_valid_messages(session.history)
