"""Capability answers name a call by the id the model used; the runtime's id comes second.

The model knows its calls by their ``tool_use`` ids (``toolu_...``), so an
answer's ``tool_call_id`` is that id when the call has one, and the runtime's
id when it has none; ``internal_id`` is always the runtime's id, as in a
placeholder. A call only the history knows (``orphaned``) is named the same
way round.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from agentos import AgentConfig
from agentos import CallStatus
from agentos import Host
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import SessionLineage
from agentos import YieldOnAnyProgress
from agentos.testing import Puppet
from agentos.testing import settle
from agentos.turns import PLACEHOLDER_KEY
from agentos.turns import Caller
from agentos.turns import MessageHistory
from agentos.turns import Scope
from agentos.turns import SystemToolbox

pytestmark = pytest.mark.anyio

ALICE = Caller("alice", conversation_id="alice")


async def answer(
    toolbox: SystemToolbox, name: str, caller: Caller, **arguments: Any
) -> dict[str, Any]:
    """A capability's answer as the model reads it (its JSON text, parsed)."""
    result = await toolbox.invoke(name, arguments, caller)
    assert not result.is_error, result.content
    return json.loads(result.to_json())  # type: ignore[no-any-return]


async def test_a_status_answer_names_the_call_by_its_tool_use_id(
    runtime: Runtime,
    puppet: Puppet,
) -> None:
    toolbox = SystemToolbox(runtime)
    call = runtime.submit(
        "puppet", {}, session_id="alice", conversation_id="alice", provider_call_id="toolu_a"
    )
    await settle(runtime)
    for asked in ("toolu_a", call):
        status = await answer(toolbox, "get_tool_call_status", ALICE, tool_call_id=asked)
        assert (status["tool_call_id"], status["internal_id"]) == ("toolu_a", call)
    puppet.complete(call, "done")
    await settle(runtime)
    waited = await answer(
        toolbox, "get_tool_call_status", ALICE, tool_call_id=call, wait_for_completion=True
    )
    assert (waited["tool_call_id"], waited["internal_id"], waited["status"]) == (
        "toolu_a",
        call,
        "completed",
    )


async def test_a_call_without_a_provider_id_is_named_by_its_internal_id_twice(
    runtime: Runtime,
) -> None:
    toolbox = SystemToolbox(runtime)
    call = runtime.submit("puppet", {}, session_id="alice")
    await settle(runtime)
    status = await answer(toolbox, "get_tool_call_status", ALICE, tool_call_id=call)
    assert (status["tool_call_id"], status["internal_id"]) == (call, call)
    (listed,) = (await answer(toolbox, "list_running_tool_calls", ALICE))["tool_calls"]
    assert (listed["tool_call_id"], listed["internal_id"]) == (call, call)


async def test_listed_and_cancelled_calls_are_named_by_their_tool_use_ids(
    runtime: Runtime,
) -> None:
    toolbox = SystemToolbox(runtime)
    calls = {
        use: runtime.submit(
            "puppet", {}, session_id="alice", conversation_id="alice", provider_call_id=use
        )
        for use in ("toolu_a", "toolu_b")
    }
    await settle(runtime)
    listed = (await answer(toolbox, "list_running_tool_calls", ALICE))["tool_calls"]
    assert {(c["tool_call_id"], c["internal_id"]) for c in listed} == set(calls.items())
    cancelled = await answer(
        toolbox, "cancel_tool_call", ALICE, tool_call_id=calls["toolu_b"], reason="enough"
    )
    assert cancelled == {
        "tool_call_id": "toolu_b",
        "internal_id": calls["toolu_b"],
        "cancelled": True,
        "previous_status": "running",
    }
    again = await answer(toolbox, "cancel_tool_call", ALICE, tool_call_id="toolu_b")
    assert (again["tool_call_id"], again["internal_id"], again["cancelled"]) == (
        "toolu_b",
        calls["toolu_b"],
        False,
    )


async def test_another_sessions_call_is_named_by_the_id_that_finds_it_from_here(
    runtime: Runtime,
) -> None:
    """A child's provider id does not resolve in its parent's session; its internal id does."""
    lineage = SessionLineage()
    lineage.add("child", "alice")
    toolbox = SystemToolbox(runtime, lineage=lineage)
    call = runtime.submit(
        "puppet", {}, session_id="child", conversation_id="child", provider_call_id="toolu_c"
    )
    await settle(runtime)
    parent = Caller("alice", conversation_id="alice", scope=Scope.CHILDREN)
    (listed,) = (await answer(toolbox, "list_running_tool_calls", parent))["tool_calls"]
    assert (listed["tool_call_id"], listed["internal_id"]) == (call, call)
    status = await answer(
        toolbox, "get_tool_call_status", parent, tool_call_id=listed["tool_call_id"]
    )
    assert (status["tool_call_id"], status["internal_id"]) == (call, call)
    child = Caller("child", conversation_id="child")
    own = await answer(toolbox, "get_tool_call_status", child, tool_call_id=call)
    assert (own["tool_call_id"], own["internal_id"]) == ("toolu_c", call)


def lost_call_history() -> list[dict[str, Any]]:
    """A history whose call ``toolu_gone`` (internal ``gone-1``) got only a placeholder."""
    note = {
        PLACEHOLDER_KEY: True,
        "tool_call_id": "toolu_gone",
        "internal_id": "gone-1",
        "status": "running",
    }
    return [
        {"role": "user", "content": "look something up"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_gone", "name": "puppet", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_gone", "content": json.dumps(note)}
            ],
        },
    ]


async def test_an_orphaned_call_is_named_the_same_way_round_as_a_live_one(
    runtime: Runtime,
) -> None:
    history = MessageHistory()
    history.load("alice", lost_call_history())
    toolbox = SystemToolbox(runtime, history=history)
    for asked in ("gone-1", "toolu_gone"):
        status = await answer(toolbox, "get_tool_call_status", ALICE, tool_call_id=asked)
        assert (status["tool_call_id"], status["internal_id"], status["status"]) == (
            "toolu_gone",
            "gone-1",
            "orphaned",
        )
        cancelled = await answer(toolbox, "cancel_tool_call", ALICE, tool_call_id=asked)
        assert cancelled == {
            "tool_call_id": "toolu_gone",
            "internal_id": "gone-1",
            "cancelled": False,
            "previous_status": "orphaned",
        }


def tool_use(use_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": use_id, "name": name, "input": arguments}


def results(request: ModelRequest) -> dict[str, Any]:
    """The last user message's tool results, by tool_use id: JSON parsed, text as is."""
    content = request.messages[-1]["content"]
    found: dict[str, Any] = {}
    for block in content if isinstance(content, list) else []:
        if block.get("type") == "tool_result":
            try:
                found[block["tool_use_id"]] = json.loads(block["content"])
            except ValueError:
                found[block["tool_use_id"]] = block["content"]
    return found


async def test_a_status_read_through_the_toolbox_tells_the_model_the_outcome_once(
    runtime: Runtime, puppet: Puppet
) -> None:
    """The model waits for a placeholder's call by its tool_use id: the answer is the
    outcome, names that id, and no late outcome message repeats it."""
    seen: list[dict[str, Any]] = []

    def first(request: ModelRequest) -> bool:
        return not results(request) and "lookups" in str(request.messages[-1]["content"])

    def read_b(request: ModelRequest) -> ModelResponse:
        use = tool_use(
            "toolu_status",
            "get_tool_call_status",
            tool_call_id="toolu_b",
            wait_for_completion=True,
            timeout_seconds=60.0,
        )
        return ModelResponse([use], "tool_use")

    def report(request: ModelRequest) -> ModelResponse:
        seen.append(results(request)["toolu_status"])
        return ModelResponse([{"type": "text", "text": "b is done"}])

    provider = ScriptedProvider(
        (
            first,
            lambda r: ModelResponse(
                [tool_use("toolu_a", "puppet"), tool_use("toolu_b", "puppet")], "tool_use"
            ),
        ),
        (lambda r: "toolu_a" in results(r), read_b),
        (lambda r: "toolu_status" in results(r), report),
    )
    config = AgentConfig(async_yield_strategy=YieldOnAnyProgress())
    async with Host(runtime, provider) as host:
        session = await host.create_session(config)
        session.post("two lookups")
        with anyio.fail_after(5):
            while len(puppet.calls) < 2 or runtime.statistics().running < 2:
                await settle(runtime)
            call_a, call_b = list(puppet.calls)
            puppet.complete(call_a, "a said yes")
            while runtime.statistics().waiters == 0:  # the model waits for b now
                await settle(runtime)
            puppet.complete(call_b, "b said no")
            while not seen or not session.idle:
                await settle(runtime)
                await anyio.lowlevel.checkpoint()
        await settle(runtime)
        assert runtime.status(call_b).status is CallStatus.COMPLETED
        assert provider.answered == 3, "no late outcome of b grants the model another turn"
        told = [m for m in session.history if m["role"] == "user" and "b said no" in str(m)]
        assert len(told) == 1, "b's outcome reaches the model once: in the status answer"
        assert (seen[0]["tool_call_id"], seen[0]["internal_id"], seen[0]["result"]) == (
            "toolu_b",
            call_b,
            "b said no",
        )
