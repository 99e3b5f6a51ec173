"""The system toolbox: status, list and cancel, as the model and a host call them."""

from __future__ import annotations

import json
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import cast

import anyio
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentos import Answer
from agentos import AnswerAction
from agentos import Asked
from agentos import ManualClock
from agentos import Runtime
from agentos import SessionLineage
from agentos import ToolboxError
from agentos import ToolContext
from agentos import tool
from agentos.testing import Puppet
from agentos.testing import settle
from agentos.turns import MAX_WAIT_SECONDS
from agentos.turns import PLACEHOLDER_KEY
from agentos.turns import Caller
from agentos.turns import CapabilityResult
from agentos.turns import HistoryCall
from agentos.turns import Message
from agentos.turns import MessageHistory
from agentos.turns import Scope
from agentos.turns import SystemToolbox
from tests.support.arguments import Empty

pytestmark = pytest.mark.anyio

ALICE = Caller("alice")


def error_of(result: CapabilityResult) -> dict[str, Any]:
    assert result.is_error
    return cast(dict[str, Any], result.content["error"])


async def status(toolbox: SystemToolbox, caller: Caller, **arguments: Any) -> dict[str, Any]:
    result = await toolbox.invoke("get_tool_call_status", arguments, caller)
    assert not result.is_error, result.content
    return json.loads(result.to_json())  # type: ignore[no-any-return]


@pytest.mark.runtime(max_running=1)
async def test_status_through_every_state(puppet: Puppet, runtime: Runtime) -> None:
    toolbox = SystemToolbox(runtime)
    first = runtime.submit("puppet", {}, session_id="alice")
    queued = runtime.submit("puppet", {}, session_id="alice")
    assert (await status(toolbox, ALICE, tool_call_id=queued))["status"] == "pending"
    await settle(runtime)
    puppet.progress(first, {"percent": 30})
    await settle(runtime)
    running = await status(toolbox, ALICE, tool_call_id=first)
    assert running["status"] == "running"
    assert running["is_final"] is False
    assert running["started_at"] is not None
    assert running["completed_at"] is None
    assert [entry["payload"] for entry in running["progress"]] == [None, {"percent": 30}]
    assert [entry["kind"] for entry in running["progress"]] == ["started", "partial"]
    quiet = await status(toolbox, ALICE, tool_call_id=first, include_progress=False)
    assert quiet["progress"] is None
    puppet.complete(first, {"free": "10:00"})
    await settle(runtime)
    done = await status(toolbox, ALICE, tool_call_id=first)
    assert (done["status"], done["result"], done["is_final"]) == (
        "completed",
        {"free": "10:00"},
        True,
    )
    await settle(runtime)
    puppet.fail(queued, "calendar offline")
    await settle(runtime)
    failed = await status(toolbox, ALICE, tool_call_id=queued)
    assert failed["status"] == "failed"
    assert failed["error"]["message"] == "RuntimeError: calendar offline"
    third = runtime.submit("puppet", {}, session_id="alice")
    runtime.cancel(third)
    assert (await status(toolbox, ALICE, tool_call_id=third))["status"] == "cancelled"


async def test_changed_since_last_look_is_per_calling_session(
    puppet: Puppet, runtime: Runtime
) -> None:
    toolbox = SystemToolbox(runtime)
    operator = Caller("ops", scope=Scope.ALL)
    call = runtime.submit("puppet", {}, session_id="alice")
    await settle(runtime)
    looks = [(await status(toolbox, ALICE, tool_call_id=call))["changed_since_last_look"]]
    looks.append((await status(toolbox, ALICE, tool_call_id=call))["changed_since_last_look"])
    puppet.progress(call, {"step": 1})
    await settle(runtime)
    looks.append((await status(toolbox, ALICE, tool_call_id=call))["changed_since_last_look"])
    looks.append((await status(toolbox, ALICE, tool_call_id=call))["changed_since_last_look"])
    assert looks == [True, False, True, False]
    assert (await status(toolbox, operator, tool_call_id=call))["changed_since_last_look"]


async def test_wait_for_completion_returns_on_completion(puppet: Puppet, runtime: Runtime) -> None:
    toolbox = SystemToolbox(runtime)
    call = runtime.submit("puppet", {}, session_id="alice")
    answers: list[dict[str, Any]] = []

    async def ask() -> None:
        answers.append(await status(toolbox, ALICE, tool_call_id=call, wait_for_completion=True))

    async with anyio.create_task_group() as group:
        group.start_soon(ask)
        await settle(runtime)
        assert answers == []
        other = runtime.submit("puppet", {}, session_id="bob")
        await settle(runtime)
        assert runtime.status(other).status == "running", "others keep running meanwhile"
        puppet.complete(call, 7)
    assert answers[0]["status"] == "completed"
    assert answers[0]["result"] == 7


async def test_wait_for_completion_returns_the_snapshot_when_time_runs_out(
    clock: ManualClock,
    runtime: Runtime,
) -> None:
    toolbox = SystemToolbox(runtime)
    call = runtime.submit("puppet", {}, session_id="alice")
    answers: list[dict[str, Any]] = []

    async def ask(seconds: float) -> None:
        answers.append(
            await status(
                toolbox,
                ALICE,
                tool_call_id=call,
                wait_for_completion=True,
                timeout_seconds=seconds,
            )
        )

    async with anyio.create_task_group() as group:
        group.start_soon(ask, 2.0)
        group.start_soon(ask, 10_000.0)
        await settle(runtime)
        clock.advance(2)
        await settle(runtime)
        assert [answer["status"] for answer in answers] == ["running"]
        clock.advance(MAX_WAIT_SECONDS - 2)
    assert [answer["status"] for answer in answers] == ["running", "running"]


@pytest.mark.runtime(max_running=1)
async def test_cancel_running_pending_and_final_calls(puppet: Puppet, runtime: Runtime) -> None:
    toolbox = SystemToolbox(runtime)
    running = runtime.submit("puppet", {}, session_id="alice")
    pending = runtime.submit("puppet", {}, session_id="alice")
    await settle(runtime)
    answers = []
    for call in (pending, running, running):
        result = await toolbox.invoke(
            "cancel_tool_call", {"tool_call_id": call, "reason": "user asked"}, ALICE
        )
        answers.append(result.content)
    assert [(a["tool_call_id"], a["internal_id"]) for a in answers] == [
        (pending, pending),  # no provider id: the internal id is the id the model knows
        (running, running),
        (running, running),
    ]
    assert [(a["cancelled"], a["previous_status"]) for a in answers] == [
        (True, "pending"),
        (True, "running"),
        (False, "cancelled"),
    ]
    assert runtime.status(running).cancel_reason == "user asked"
    await settle(runtime)
    assert puppet.calls[running].cleaned_up


async def test_list_shows_only_the_callers_live_calls(puppet: Puppet, runtime: Runtime) -> None:
    toolbox = SystemToolbox(runtime)
    done = runtime.submit("puppet", {}, session_id="alice")
    live = runtime.submit("puppet", {}, session_id="alice", provider_call_id="toolu_live")
    runtime.submit("puppet", {}, session_id="bob")
    await settle(runtime)
    puppet.complete(done)
    puppet.progress(live, {"percent": 80})
    await settle(runtime)
    result = await toolbox.invoke("list_running_tool_calls", {}, ALICE)
    calls = cast(list[dict[str, Any]], result.content["tool_calls"])
    assert len(calls) == 1
    assert calls[0] == {
        "tool_call_id": "toolu_live",
        "internal_id": live,
        "session_id": "alice",
        "tool_name": "puppet",
        "label": None,
        "status": "running",
        "started_at": calls[0]["started_at"],
        "latest_progress": {
            "seq": 2,  # after the runtime's ``started``
            "at": calls[0]["latest_progress"]["at"],
            "kind": "partial",
            "payload": {"percent": 80},
        },
    }


async def test_provider_ids_resolve_within_the_session_in_flight_first(
    clock: ManualClock,
    puppet: Puppet,
    runtime: Runtime,
) -> None:
    toolbox = SystemToolbox(runtime)

    def submit(session: str, conversation: str = "c1") -> str:
        return runtime.submit(
            "puppet",
            {},
            session_id=session,
            conversation_id=conversation,
            provider_call_id="toolu_1",
        )

    older = submit("alice")
    await settle(runtime)
    clock.advance(1)
    newer = submit("alice")
    elsewhere = submit("bob")
    await settle(runtime)
    puppet.complete(newer)
    await settle(runtime)
    caller = Caller("alice", conversation_id="c1")
    assert (await status(toolbox, caller, tool_call_id="toolu_1"))["internal_id"] == older
    puppet.complete(older)
    await settle(runtime)
    assert (await status(toolbox, caller, tool_call_id="toolu_1"))["internal_id"] == newer
    bob = Caller("bob", conversation_id="c1")
    assert (await status(toolbox, bob, tool_call_id="toolu_1"))["internal_id"] == elsewhere
    other_conversation = Caller("alice", conversation_id="c2")
    result = await toolbox.invoke(
        "get_tool_call_status", {"tool_call_id": "toolu_1"}, other_conversation
    )
    assert error_of(result)["code"] == "unknown_tool_call"


async def test_a_reused_provider_id_follows_its_calls_as_they_are_forgotten(
    clock: ManualClock,
) -> None:
    """One id, used by one call, then two, then one again as retention forgets them."""
    puppet = Puppet()
    async with Runtime([puppet.tool], clock=clock, retention_seconds=10) as runtime:
        toolbox = SystemToolbox(runtime)
        caller = Caller("alice", conversation_id="c1")

        async def ended(call_id: str) -> str:
            puppet.complete(call_id)
            await settle(runtime)
            return call_id

        async def resolved() -> Any:
            result = await toolbox.invoke(
                "get_tool_call_status", {"tool_call_id": "toolu_1"}, caller
            )
            return (
                error_of(result)["code"]
                if result.is_error
                else json.loads(result.to_json())["internal_id"]
            )

        def submit() -> str:
            return runtime.submit(
                "puppet", {}, session_id="alice", conversation_id="c1", provider_call_id="toolu_1"
            )

        first = submit()
        await settle(runtime)
        await ended(first)
        clock.advance(5)
        second = submit()
        await settle(runtime)
        await ended(second)
        assert await resolved() == second
        clock.advance(6)  # the first is forgotten
        await settle(runtime)
        assert await resolved() == second
        third = submit()
        await settle(runtime)
        assert await resolved() == third  # in flight first
        await ended(third)
        clock.advance(5)  # the second is forgotten
        await settle(runtime)
        assert await resolved() == third
        clock.advance(10)
        await settle(runtime)
        assert await resolved() == "unknown_tool_call"


async def test_a_call_without_a_conversation_belongs_to_all_of_its_session(
    runtime: Runtime,
) -> None:
    """A Host's sessions submit no conversation: every caller of the session finds the call
    by its provider id, and the answer names it by that id; another session's caller does not."""
    toolbox = SystemToolbox(runtime)
    call = runtime.submit("puppet", {}, session_id="alice", provider_call_id="toolu_9")
    await settle(runtime)
    for caller in (Caller("alice"), Caller("alice", conversation_id="c1")):
        answer = await status(toolbox, caller, tool_call_id="toolu_9")
        assert (answer["internal_id"], answer["tool_call_id"]) == (call, "toolu_9")
    result = await toolbox.invoke(
        "get_tool_call_status", {"tool_call_id": "toolu_9"}, Caller("bob")
    )
    assert error_of(result)["code"] == "unknown_tool_call"


def calendar_calls(*tool_use_ids: str) -> Message:
    """The model's message calling ``calendar`` once for each of ``tool_use_ids``."""
    return {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": tool_use_id, "name": "calendar", "input": {}}
            for tool_use_id in tool_use_ids
        ],
    }


async def test_calls_the_world_forgot_are_orphaned_unless_the_history_has_the_result(
    clock: ManualClock,
) -> None:
    history = MessageHistory()
    history.load(
        "alice",
        [
            {"role": "user", "content": "when can we meet?"},
            calendar_calls("toolu_lost", "toolu_done", "toolu_bad", "toolu_wait"),
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_done", "content": '{"free": 9}'},
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_bad",
                        "content": [{"type": "text", "text": "service down"}],
                        "is_error": True,
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_wait",
                        "content": json.dumps({PLACEHOLDER_KEY: True, "tool_call_id": "abc-1"}),
                    },
                ],
            },
        ],
    )
    async with Runtime([], clock=clock) as runtime:
        toolbox = SystemToolbox(runtime, history=history)
        seen = {}
        for call_id in ("toolu_lost", "toolu_done", "toolu_bad", "toolu_wait", "abc-1"):
            answer = await status(toolbox, ALICE, tool_call_id=call_id)
            seen[call_id] = (answer["status"], answer["is_final"], answer["result"])
        assert seen == {
            "toolu_lost": ("orphaned", True, None),
            "toolu_done": ("completed", True, {"free": 9}),
            "toolu_bad": ("failed", True, "service down"),
            "toolu_wait": ("orphaned", True, None),
            "abc-1": ("orphaned", True, None),
        }
        again = await status(toolbox, ALICE, tool_call_id="toolu_lost")
        assert again["changed_since_last_look"] is False
        cancel = await toolbox.invoke("cancel_tool_call", {"tool_call_id": "toolu_lost"}, ALICE)
        assert cancel.content == {
            "tool_call_id": "toolu_lost",
            "internal_id": None,
            "cancelled": False,
            "previous_status": "orphaned",
        }
        bob = await toolbox.invoke(
            "get_tool_call_status", {"tool_call_id": "toolu_lost"}, Caller("bob")
        )
        assert error_of(bob)["code"] == "unknown_tool_call"


async def test_a_running_call_wins_over_the_history(clock: ManualClock) -> None:
    history = MessageHistory()
    puppet = Puppet()
    async with Runtime([puppet.tool], clock=clock) as runtime:
        call = runtime.submit("puppet", {}, session_id="alice", provider_call_id="toolu_7")
        history.record("alice", HistoryCall("toolu_7", "puppet", internal_id=call))
        toolbox = SystemToolbox(runtime, history=history)
        assert (await status(toolbox, ALICE, tool_call_id="toolu_7"))["status"] == "running"


async def test_other_sessions_calls_answer_exactly_like_missing_ones(runtime: Runtime) -> None:
    toolbox = SystemToolbox(runtime)
    foreign = runtime.submit("puppet", {}, session_id="bob", provider_call_id="toolu_b")
    missing = "0d9c8a52-0c1e-4c8e-9f0b-5d7f4c3b2a10"
    for name, arguments in [
        ("get_tool_call_status", {"tool_call_id": "{}"}),
        ("cancel_tool_call", {"tool_call_id": "{}", "reason": "x"}),
    ]:
        answers = []
        for call_id in (foreign, missing, "toolu_b"):
            filled = {
                k: v.format() if k != "tool_call_id" else call_id for k, v in arguments.items()
            }
            result = await toolbox.invoke(name, filled, ALICE)
            answers.append(json.dumps(result.content).replace(call_id, "<id>"))
            assert result.is_error
        assert len(set(answers)) == 1, answers
    assert runtime.status(foreign).status == "running"


async def test_scopes_widen_to_children_and_all(clock: ManualClock) -> None:
    puppet = Puppet()
    lineage = SessionLineage()
    lineage.add("child", parent="alice")
    lineage.add("grandchild", parent="child")
    async with Runtime([puppet.tool], clock=clock) as runtime:
        toolbox = SystemToolbox(runtime, lineage=lineage)
        calls = {
            session: runtime.submit("puppet", {}, session_id=session)
            for session in ("alice", "child", "grandchild", "stranger")
        }

        async def visible(caller: Caller) -> set[str]:
            shown = set()
            for session, call in calls.items():
                result = await toolbox.invoke(
                    "get_tool_call_status", {"tool_call_id": call}, caller
                )
                if not result.is_error:
                    shown.add(session)
            listed = cast(
                list[dict[str, Any]], (await toolbox.list_running_tool_calls(caller))["tool_calls"]
            )
            assert {c["tool_call_id"] for c in listed} == {calls[s] for s in shown}
            return shown

        assert await visible(ALICE) == {"alice"}
        assert await visible(Caller("alice", scope=Scope.CHILDREN)) == {
            "alice",
            "child",
            "grandchild",
        }
        assert await visible(Caller("child", scope=Scope.CHILDREN)) == {"child", "grandchild"}
        assert await visible(Caller("ops", scope=Scope.ALL)) == set(calls)
        child_cancel = await toolbox.invoke(
            "cancel_tool_call",
            {"tool_call_id": calls["child"]},
            Caller("alice", scope=Scope.CHILDREN),
        )
        assert child_cancel.content["cancelled"] is True


async def test_each_listed_call_says_whose_it_is(clock: ManualClock) -> None:
    """Seed 000, issue 24: under ``children`` and ``all`` a listing mixes sessions, so each
    item carries its session id."""
    puppet = Puppet()
    lineage = SessionLineage()
    lineage.add("child", parent="alice")
    async with Runtime([puppet.tool], clock=clock) as runtime:
        toolbox = SystemToolbox(runtime, lineage=lineage)
        calls = {
            session: runtime.submit("puppet", {}, session_id=session)
            for session in ("alice", "child", "stranger")
        }
        await settle(runtime)
        for caller, expected in (
            (ALICE, {"alice"}),
            (Caller("alice", scope=Scope.CHILDREN), {"alice", "child"}),
            (Caller("ops", scope=Scope.ALL), {"alice", "child", "stranger"}),
        ):
            result = await toolbox.invoke("list_running_tool_calls", {}, caller)
            listed = cast(list[dict[str, Any]], result.content["tool_calls"])
            assert {item["internal_id"]: item["session_id"] for item in listed} == {
                calls[session]: session for session in expected
            }


def test_lineage_refuses_cycles() -> None:
    lineage = SessionLineage()
    lineage.add("b", parent="a")
    with pytest.raises(ValueError, match="cannot descend from itself"):
        lineage.add("a", parent="b")
    with pytest.raises(ValueError, match="cannot descend from itself"):
        lineage.add("a", parent="a")


STATUS, CANCEL, LIST = "get_tool_call_status", "cancel_tool_call", "list_running_tool_calls"


@pytest.mark.parametrize(
    ("name", "arguments", "code", "message"),
    [
        (STATUS, {}, "invalid_input", "tool_call_id: Field required"),
        (STATUS, {"tool_call_id": 12}, "invalid_input", "Input should be a valid string"),
        (
            STATUS,
            {"tool_call_id": "a", "include_progress": "yes"},
            "invalid_input",
            "include_progress: Input should be a valid boolean",
        ),
        (
            STATUS,
            {"tool_call_id": "a", "timeout_seconds": -1},
            "invalid_input",
            "timeout_seconds must be between 0 and 300",
        ),
        (
            STATUS,
            '{"tool_call_id": "a", "timeout_seconds": Infinity}',
            "invalid_input",
            "timeout_seconds",
        ),
        (
            STATUS,
            {"tool_call_id": "a", "x": 1},
            "invalid_input",
            "x: Extra inputs are not permitted",
        ),
        (STATUS, '{"tool_call_id": ', "invalid_input", "Invalid JSON"),
        (STATUS, [1, 2], "invalid_input", "Input should be a valid dictionary"),
        (STATUS, {"tool_call_id": "../etc/passwd"}, "malformed_id", "is not a tool call id"),
        (STATUS, {"tool_call_id": ""}, "malformed_id", "is not a tool call id"),
        (STATUS, {"tool_call_id": "x" * 129}, "malformed_id", "is not a tool call id"),
        (
            STATUS,
            {"tool_call_id": "toolu_nothing"},
            "unknown_tool_call",
            "no tool call with id 'toolu_nothing' in this session",
        ),
        (CANCEL, {"reason": "x"}, "invalid_input", "tool_call_id: Field required"),
        (
            CANCEL,
            {"tool_call_id": "a", "reason": "x" * 1001},
            "invalid_input",
            "reason: String should have at most 1000 characters",
        ),
        (LIST, {"all": True}, "invalid_input", "all: Extra inputs are not permitted"),
        ("drop_tables", {}, "unknown_capability", "no capability named 'drop_tables'"),
        (None, {}, "unknown_capability", "no capability named None"),
    ],
)
async def test_bad_arguments_get_a_specific_error(
    clock: ManualClock, name: Any, arguments: Any, code: str, message: str
) -> None:
    async with Runtime([], clock=clock) as runtime:
        result = await SystemToolbox(runtime).invoke(name, arguments, ALICE)
    assert result.is_error
    assert error_of(result)["code"] == code
    assert message in error_of(result)["message"]


async def test_direct_calls_raise_toolbox_errors(clock: ManualClock) -> None:
    async with Runtime([], clock=clock) as runtime:
        toolbox = SystemToolbox(runtime)
        with pytest.raises(ToolboxError, match="no tool call with id") as error:
            await toolbox.cancel_tool_call(ALICE, "toolu_x")
        assert error.value.code == "unknown_tool_call"


def test_definitions_carry_the_seed_field_names() -> None:
    definitions = {d["name"]: d for d in SystemToolbox.definitions()}
    status_schema = definitions["get_tool_call_status"]["input_schema"]
    assert set(status_schema["properties"]) == {
        "tool_call_id",
        "include_progress",
        "wait_for_completion",
        "timeout_seconds",
    }
    assert status_schema["required"] == ["tool_call_id"]
    assert set(definitions["cancel_tool_call"]["input_schema"]["properties"]) == {
        "tool_call_id",
        "reason",
    }
    assert [d["name"] for d in SystemToolbox.definitions(["cancel_tool_call"])] == [
        "cancel_tool_call"
    ]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=15), children, max_size=4)
    ),
    max_leaves=12,
)
FIELDS = st.sampled_from(
    ["tool_call_id", "include_progress", "wait_for_completion", "timeout_seconds", "reason"]
)
ARGUMENTS = (
    JSON | st.dictionaries(FIELDS, JSON, max_size=5) | st.text(max_size=40) | st.binary(max_size=20)
)
NAMES = st.sampled_from(
    ["get_tool_call_status", "list_running_tool_calls", "cancel_tool_call", "nope"]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(st.tuples(NAMES, ARGUMENTS), min_size=1, max_size=10))
def test_fuzzed_arguments_never_raise_and_never_change_a_call(
    batch: list[tuple[str, object]],
) -> None:
    async def main() -> None:
        puppet = Puppet()
        async with Runtime([puppet.tool], clock=ManualClock()) as runtime:
            toolbox = SystemToolbox(runtime)
            calls = [runtime.submit("puppet", {}, session_id=s) for s in ("alice", "bob")]
            await settle(runtime)
            before = [runtime.status(call) for call in calls]
            for name, arguments in batch:
                if isinstance(arguments, dict) and arguments.get("wait_for_completion"):
                    arguments["wait_for_completion"] = False
                result = await toolbox.invoke(name, arguments, ALICE)
                json.dumps(result.content)
            after = [runtime.status(call) for call in calls]
            assert after == before

    anyio.run(main)


def test_late_outcomes_and_cancellations_are_read_back_from_text() -> None:
    history = MessageHistory()
    history.load(
        "s",
        [
            calendar_calls("toolu_a", "toolu_b", "toolu_c"),
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_a", "content": "x"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_b",
                        "content": "cancelled: stalled",
                        "is_error": True,
                    },
                    {"type": "tool_result", "tool_use_id": "toolu_c", "content": "{}"},
                    {
                        "type": "text",
                        "text": "[tool call toolu_a (calendar) finished: completed] "
                        'result: {"n": 1}',
                    },
                ],
            },
        ],
    )
    a, b = history.find_call("s", "toolu_a"), history.find_call("s", "toolu_b")
    assert a is not None
    assert b is not None
    assert (a.status, a.result) == ("completed", {"n": 1})
    assert (b.status, b.result) == ("cancelled", "cancelled: stalled")


class StampClock(ManualClock):
    """A manual clock whose wall time is set outright: it stamps progress reports."""

    stamp = 0.0

    def wall(self) -> float:
        return self.stamp


@given(
    st.lists(
        st.floats(min_value=0, max_value=4e9)
        | st.integers(0, 4 * 10**15).map(lambda micros: micros / 1e6)
        | st.integers(0, 4 * 10**9).map(lambda whole: whole + 0.9999995),
        min_size=1,
        max_size=20,
    )
)
@settings(max_examples=50, deadline=None)
def test_timestamps_read_exactly_as_isoformat_writes_them(values: list[float]) -> None:
    async def stamps() -> list[str]:
        clock, puppet = StampClock(), Puppet()
        async with Runtime([puppet.tool], clock=clock) as runtime:
            call = runtime.submit("puppet", {}, session_id="alice")
            await settle(runtime)
            for value in values:
                clock.stamp = value
                puppet.progress(call, {})
                await settle(runtime)
            answer = await status(SystemToolbox(runtime), ALICE, tool_call_id=call)
            return [entry["at"] for entry in answer["progress"][1:]]  # after ``started``

    assert anyio.run(stamps) == [datetime.fromtimestamp(v, UTC).isoformat() for v in values]


async def test_status_says_a_call_waits_for_the_persons_answer(clock: ManualClock) -> None:
    @tool
    async def asking(args: Empty, ctx: ToolContext) -> str:
        answer = await ctx.ask("Which city?", source="test")
        return answer.action.value

    async def held(asked: Asked) -> None:
        return None

    async with Runtime([asking], clock=clock) as runtime:
        runtime.ask_person = held
        toolbox = SystemToolbox(runtime)
        call = runtime.submit("asking", {}, session_id="alice")
        await settle(runtime)
        waiting = await status(toolbox, ALICE, tool_call_id=call)
        assert waiting["status"] == "running"
        assert waiting["waiting_for_person"]["message"] == "Which city?"
        runtime.answer(call, Answer(AnswerAction.DECLINE))
        await settle(runtime)
        done = await status(toolbox, ALICE, tool_call_id=call)
        assert done["result"] == "decline" and "waiting_for_person" not in done
