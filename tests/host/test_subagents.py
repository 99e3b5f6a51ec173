"""Sub-agents as calls (issue 26): a child agent runs as a call of its parent, with its words
as the call's progress, its answer as the result, and cancel going down the tree.

Every agent here is scripted by a function of its requests, keyed on the system prompt;
the tests assert on calls, statuses and what the tools saw, never on wording.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentos import AgentConfig
from agentos import CallSnapshot
from agentos import CallStatus
from agentos import Decorate
from agentos import Decorator
from agentos import Host
from agentos import ManualClock
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import ProviderError
from agentos import Runtime
from agentos import Session
from agentos import SubAgent
from agentos import Tool
from agentos import ToolPolicy
from agentos import UsageError
from agentos import YieldOnAnyProgress
from agentos.testing import Puppet
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.turns import Caller
from agentos.turns import CapabilityResult
from agentos.turns import Scope
from tests.support.backends import hosted
from tests.support.backends import running
from tests.support.scripting import DEFER
from tests.support.scripting import until

pytestmark = pytest.mark.anyio

Script = Callable[[ModelRequest], ModelResponse]


class Agents:
    """A model that answers each agent (by its system prompt) with that agent's script."""

    name = "agents"

    def __init__(self, **scripts: Script) -> None:
        self.scripts = scripts
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return self.scripts[request.system](request)


def uses(request: ModelRequest, name: str) -> list[dict[str, Any]]:
    """The tool_use blocks calling ``name`` in every assistant message so far."""
    found = []
    for message in request.messages:
        if message["role"] == "assistant" and isinstance(message["content"], list):
            found += [b for b in message["content"] if b.get("name") == name]
    return found


def researcher_script(request: ModelRequest) -> ModelResponse:
    """Says what it looks up, calls the puppet with the task, then answers with its result."""
    results = last_tool_results(request)
    if results:
        return text(f"found {results[0]['content']}")
    task = last_user_text(request)
    return tool_calls(("puppet", {"label": task}), say=f"looking up {task}")


def researcher(**settings: Any) -> AgentConfig:
    return AgentConfig(name="researcher", system_prompt="researcher", tools=["puppet"], **settings)


def lead(children: dict[str, AgentConfig], **settings: Any) -> AgentConfig:
    settings.setdefault("tools", [])
    return AgentConfig(
        name="lead",
        system_prompt="lead",
        agents={name: SubAgent(agent=c, description=f"the {name}") for name, c in children.items()},
        **settings,
    )


async def child_started(
    host: Host, runtime: Runtime, config: AgentConfig, puppet: Puppet
) -> tuple[Session, CallSnapshot, Session]:
    """A session of ``config`` told "go": its one call, once its child's puppet call runs,
    and that child."""
    session = await host.create_session(config)
    session.post("go")
    await until(lambda: len(puppet.calls) == 1, runtime)
    (call,) = runtime.list_calls(session.session_id)
    child = host.child_of(call.call_id)
    assert child is not None
    return session, call, child


def puppet_calls(runtime: Runtime, session: Session) -> list[str]:
    return [c.call_id for c in runtime.list_calls(session.session_id) if c.tool_name == "puppet"]


async def test_two_researchers_one_read_and_cancelled_the_other_answers() -> None:
    puppet = Puppet()
    seen: list[str] = []

    def lead_script(request: ModelRequest) -> ModelResponse:
        asked = last_user_text(request)
        results = last_tool_results(request)
        if asked == "plan the trip":
            return tool_calls(
                ("researcher", {"task": "flights", "expected_seconds": 60}),
                ("researcher", {"task": "hotels", "expected_seconds": 60}),
            )
        flights = next(
            u["id"] for u in uses(request, "researcher") if u["input"]["task"] == "flights"
        )
        if asked == "how is it going?":
            return tool_calls(("get_tool_call_status", {"tool_call_id": flights}))
        if results and '"changed_since_last_look"' in str(results[0]["content"]):
            seen.append(str(results[0]["content"]))
            return tool_calls(("cancel_tool_call", {"tool_call_id": flights}))
        if results and '"cancelled":true' in str(results[0]["content"]):
            return text("stopped the flights; the hotels are still being looked up")
        return text(f"answer: {asked}")

    model = Agents(lead=lead_script, researcher=researcher_script)
    config = lead({"researcher": researcher()})
    async with running(model, puppet.tool) as (runtime, host):
        session = await host.create_session(config)
        session.post("plan the trip")
        await until(lambda: len(puppet.calls) == 2, runtime)
        calls = {c.tool_input["task"]: c for c in runtime.list_calls(session.session_id)}
        children = {task: host.child_of(c.call_id) for task, c in calls.items()}
        assert all(child is not None for child in children.values())
        flights_child, hotels_child = children["flights"], children["hotels"]
        assert flights_child is not None and hotels_child is not None
        assert flights_child.parent_call == calls["flights"].call_id
        assert flights_child.session_id != hotels_child.session_id
        (flights_work,) = puppet_calls(runtime, flights_child)
        (hotels_work,) = puppet_calls(runtime, hotels_child)
        assert runtime.status(flights_work).parent_call_id == calls["flights"].call_id

        session.post("how is it going?")  # the parent answers while its children run
        await until(lambda: session.replies[-1].startswith("stopped the flights"), runtime)
        status = json.loads(seen[0])
        payloads = [entry["payload"] for entry in status["progress"]]
        assert {"said": "looking up flights"} in payloads  # the child's own words
        assert {"tool_name": "puppet", "call_id": flights_work, "status": "running"} in payloads
        await until(lambda: puppet.calls[flights_work].cleaned_up, runtime)
        assert puppet.calls[flights_work].cancelled  # cancel reached the child's own call
        assert runtime.status(calls["flights"].call_id).status is CallStatus.CANCELLED
        assert flights_child.ended
        assert not puppet.calls[hotels_work].cleaned_up  # the other child goes on

        puppet.complete(hotels_work, "Hotel Astoria")
        with anyio.fail_after(10):
            await session.wait_settled()
        hotels = runtime.status(calls["hotels"].call_id)
        assert (hotels.status, hotels.result) == (CallStatus.COMPLETED, "found Hotel Astoria")
        assert "found Hotel Astoria" in session.replies[-1]  # answered from the child
        progress = [entry.payload for entry in hotels.progress]
        assert progress[-1] == {"said": "found Hotel Astoria"}


def calls_twice(task_prefix: str, tool_name: str) -> Script:
    """An agent that calls ``tool_name`` twice, then answers with what came back."""

    def script(request: ModelRequest) -> ModelResponse:
        results = last_tool_results(request)
        if results:
            return text(" ".join(str(r["content"]) for r in results))
        task = last_user_text(request)
        return tool_calls(
            (tool_name, {"task": f"{task_prefix}1"} if tool_name != "puppet" else {"label": task}),
            (tool_name, {"task": f"{task_prefix}2"} if tool_name != "puppet" else {"label": task}),
        )

    return script


def three_levels() -> tuple[Agents, AgentConfig]:
    """Lead calls mid twice, each mid calls leaf twice, each leaf calls the puppet twice."""
    model = Agents(
        lead=calls_twice("mid", "mid"),
        mid=calls_twice("leaf", "leaf"),
        leaf=calls_twice("", "puppet"),
    )
    leaf = AgentConfig(name="leaf", system_prompt="leaf", tools=["puppet"])
    mid = AgentConfig(
        name="mid", system_prompt="mid", tools=[], agents={"leaf": SubAgent(agent=leaf)}
    )
    return model, mid


async def test_cancelling_the_top_of_a_three_level_tree_cancels_every_descendant_call() -> None:
    puppet = Puppet()
    model, mid = three_levels()
    config = lead({"mid": mid})
    async with running(model, puppet.tool) as (runtime, host):
        session = await host.create_session(config)
        session.post("go")
        await until(lambda: len(puppet.calls) == 8, runtime)  # 2 mids x 2 leaves x 2 calls
        tree = [c.call_id for c in runtime.list_calls(session.session_id)]
        for call_id in tree:
            runtime.cancel(call_id, "the user changed their mind")
        await until(lambda: all(c.cleaned_up for c in puppet.calls.values()), runtime)
        assert all(c.cancelled for c in puppet.calls.values())
        for summary in host.list():
            for call in runtime.list_calls(summary.session_id):
                assert call.status is CallStatus.CANCELLED, call
        assert len(host.list()) == 1 + 2 + 4
        assert all(
            host.get(s.session_id).ended for s in host.list() if s.session_id != session.session_id
        )


async def test_depth_and_concurrency_limits_refuse_at_once_saying_which() -> None:
    puppet = Puppet()
    model, mid = three_levels()
    config = lead({"mid": mid}, max_agent_depth=1, max_children_running=1)
    async with running(model, puppet.tool) as (runtime, host):
        session = await host.create_session(config)
        session.post("go")
        await until(lambda: len(host.list()) == 2 and _final_leaves(host, runtime) == 2, runtime)
        mids = runtime.list_calls(session.session_id)
        refused = [c for c in mids if c.status is CallStatus.FAILED]
        assert len(refused) == 1 and refused[0].error is not None
        assert "max_children_running" in refused[0].error.message
        (child,) = [host.get(s.session_id) for s in host.list() if s.session_id.startswith("mid-")]
        for leaf_call in runtime.list_calls(child.session_id):
            assert leaf_call.status is CallStatus.FAILED and leaf_call.error is not None
            assert "max_agent_depth" in leaf_call.error.message
        with anyio.fail_after(10):
            await session.wait_settled()
        assert not puppet.calls  # nothing ran below the limit


def _final_leaves(host: Host, runtime: Runtime) -> int:
    return sum(
        1
        for summary in host.list()
        for call in runtime.list_calls(summary.session_id)
        if call.tool_name == "leaf" and call.status.is_final
    )


async def test_a_message_to_a_running_child_is_read_at_its_next_turn_its_call_goes_on() -> None:
    puppet = Puppet()
    heard: list[str] = []

    def lead_script(request: ModelRequest) -> ModelResponse:
        asked = last_user_text(request)
        if asked == "research":
            return tool_calls(("researcher", {"task": "flights", "expected_seconds": 60}))
        if asked == "tell it":
            (use,) = uses(request, "researcher")
            return tool_calls(("message_agent", {"tool_call_id": use["id"], "text": "no red-eyes"}))
        results = last_tool_results(request)
        return text(f"ok {results[0]['content'] if results else asked}")

    def child_script(request: ModelRequest) -> ModelResponse:
        asked = last_user_text(request)
        if "no red-eyes" in asked:
            heard.append(asked)
            return text("noted: no red-eyes")
        if asked.startswith("[tool call"):  # the late outcome of its puppet call
            return text(f"found {asked.split(']', 1)[1].strip()}")
        return researcher_script(request)

    model = Agents(lead=lead_script, researcher=child_script)
    child_config = researcher(async_yield_strategy=YieldOnAnyProgress())
    async with running(model, puppet.tool) as (runtime, host):
        session = await host.create_session(lead({"researcher": child_config}))
        session.post("research")
        await until(lambda: len(puppet.calls) == 1, runtime)
        (call,) = runtime.list_calls(session.session_id)
        child = host.child_of(call.call_id)
        assert child is not None
        session.post("tell it")
        await until(lambda: bool(heard), runtime)
        (work,) = puppet_calls(runtime, child)
        assert not puppet.calls[work].cleaned_up  # its own call was not interrupted
        assert runtime.status(call.call_id).status is CallStatus.RUNNING
        await until(
            lambda: {"said": "noted: no red-eyes"} in _payloads(runtime, call.call_id), runtime
        )
        (answer,) = [
            json.loads(str(result["content"]))
            for request in model.requests
            if request.system == "lead"
            for result in last_tool_results(request)
            if "posted" in str(result["content"])
        ]
        assert answer["posted"] is True and answer["session_id"] == child.session_id
        puppet.complete(work, "KL 1234")
        with anyio.fail_after(10):
            await session.wait_settled()
        assert "KL 1234" in str(runtime.status(call.call_id).result)


def error_code(answer: CapabilityResult) -> object:
    error = answer.content["error"]
    assert isinstance(error, dict)
    return error["code"]


def _payloads(runtime: Runtime, call_id: str) -> list[object]:
    return [entry.payload for entry in runtime.status(call_id).progress]


async def test_message_agent_refuses_a_call_that_is_no_running_sub_agent() -> None:
    puppet = Puppet()
    model = Agents(lead=lambda r: text("-"), researcher=researcher_script)
    config = lead({"researcher": researcher()}, tools=["puppet"])
    async with running(model, puppet.tool) as (runtime, host):
        session = await host.create_session(config)
        plain = runtime.submit("puppet", {}, session_id=session.session_id)
        await until(lambda: puppet.started(plain), runtime)
        caller = Caller(session.session_id)
        answer = await host.toolbox.invoke(
            "message_agent", {"tool_call_id": plain, "text": "hi"}, caller
        )
        assert answer.is_error and error_code(answer) == "not_an_agent"
        runtime.cancel(plain)
        await settle(runtime)
        answer = await host.toolbox.invoke(
            "message_agent", {"tool_call_id": plain, "text": "hi"}, caller
        )
        assert answer.is_error and error_code(answer) == "not_running"
        answer = await host.toolbox.invoke(
            "message_agent", {"tool_call_id": "nope", "text": "hi"}, caller
        )
        assert answer.is_error and error_code(answer) == "unknown_tool_call"
        answer = await host.toolbox.invoke("message_agent", {"tool_call_id": plain}, caller)
        assert answer.is_error and error_code(answer) == "invalid_input"


async def test_a_failing_child_or_one_out_of_steps_fails_the_call_with_what_it_said() -> None:
    puppet = Puppet()

    def failing(request: ModelRequest) -> ModelResponse:
        raise ProviderError("overloaded", "the API is overloaded")

    def looping(request: ModelRequest) -> ModelResponse:
        return tool_calls(("puppet", {"label": "again"}), say="one more try")

    def lead_script(request: ModelRequest) -> ModelResponse:
        if last_user_text(request) == "go":
            return tool_calls(("broken", {"task": "x"}), ("stubborn", {"task": "y"}))
        return text("done")

    model = Agents(lead=lead_script, broken=failing, stubborn=looping)
    broken = AgentConfig(name="broken", system_prompt="broken", tools=[])
    stubborn = AgentConfig(
        name="stubborn", system_prompt="stubborn", tools=["puppet"], max_steps_per_turn=2
    )
    config = lead({"broken": broken, "stubborn": stubborn})
    async with running(model, puppet.tool) as (runtime, host):
        session = await host.create_session(config)
        session.post("go")
        await until(lambda: len(puppet.calls) == 1, runtime)
        puppet.complete(next(iter(puppet.calls)), "nothing")
        await until(lambda: len(puppet.calls) == 2, runtime)
        puppet.complete(list(puppet.calls)[1], "nothing")
        with anyio.fail_after(10):
            await session.wait_settled()
        calls = {c.tool_name: c for c in runtime.list_calls(session.session_id)}
        failed = calls["broken"]
        assert failed.status is CallStatus.FAILED and failed.error is not None
        assert "overloaded" in failed.error.message
        out = calls["stubborn"]
        assert out.status is CallStatus.FAILED and out.error is not None
        assert "step limit" in out.error.message and "one more try" in out.error.message


async def test_the_parent_sees_its_childrens_calls_the_child_never_sees_the_parents() -> None:
    puppet = Puppet()
    model = Agents(
        lead=lambda r: tool_calls(("researcher", {"task": "t"})), researcher=researcher_script
    )
    config = lead({"researcher": researcher()}, tools=["puppet"])
    async with running(model, puppet.tool) as (runtime, host):
        session = await host.create_session(config, scope=Scope.CHILDREN)
        own = runtime.submit("puppet", {}, session_id=session.session_id)
        session.post("go")
        await until(lambda: len(puppet.calls) == 2, runtime)
        listing = await host.toolbox.list_running_tool_calls(
            Caller(session.session_id, scope=Scope.CHILDREN)
        )
        listed = listing["tool_calls"]
        assert isinstance(listed, list)
        sessions = {call["session_id"] for call in listed if isinstance(call, dict)}
        assert len(sessions) == 2  # its own and its child's
        (agent_call,) = [
            c for c in runtime.list_calls(session.session_id) if c.tool_name == "researcher"
        ]
        child = host.child_of(agent_call.call_id)
        assert child is not None
        answer = await host.toolbox.invoke(
            "get_tool_call_status", {"tool_call_id": own}, Caller(child.session_id)
        )
        assert error_code(answer) == "unknown_tool_call"


async def test_a_sub_agent_named_like_another_tool_is_refused() -> None:
    researcher_tool = Tool.from_schema(
        lambda args: "not an agent", name="researcher", input_schema={"type": "object"}
    )
    model = Agents()
    async with running(model, researcher_tool) as (_, host):
        with pytest.raises(UsageError, match=r"agents\.researcher"):
            await host.create_session(lead({"researcher": researcher()}))


def test_an_agent_file_names_its_children_by_file_and_a_cycle_is_refused(tmp_path: Path) -> None:
    (tmp_path / "kids").mkdir()
    (tmp_path / "lead.toml").write_text(
        'name = "lead"\n[agents.researcher]\nagent = "kids/researcher.toml"\n'
        'description = "Looks things up."\n'
    )
    (tmp_path / "kids" / "researcher.toml").write_text(
        'name = "researcher"\nimport_path = ["lib"]\n[mcp_servers.files]\ncommand = "python"\n'
    )
    config = AgentConfig.from_file(tmp_path / "lead.toml")
    child = config.agents["researcher"]
    assert (child.agent.name, child.description) == ("researcher", "Looks things up.")
    kids = str(tmp_path / "kids")
    assert child.agent.import_path == [kids, str(tmp_path / "kids" / "lib")]
    assert child.agent.mcp_servers["files"].cwd == str(tmp_path / "kids" / ".")
    assert AgentConfig.model_validate(config.model_dump(mode="json")) == config  # as stored

    (tmp_path / "kids" / "researcher.toml").write_text('[agents.back]\nagent = "../lead.toml"\n')
    with pytest.raises(ValueError, match="leads back"):
        AgentConfig.from_file(tmp_path / "lead.toml")
    (tmp_path / "kids" / "researcher.toml").write_text("max_agent_depth = 0\n")
    with pytest.raises(ValueError, match=r"agents\.researcher\.agent: .*max_agent_depth"):
        AgentConfig.from_file(tmp_path / "lead.toml")
    (tmp_path / "kids" / "researcher.toml").unlink()
    with pytest.raises(ValueError, match=r"agents\.researcher\.agent: .*researcher\.toml"):
        AgentConfig.from_file(tmp_path / "lead.toml")


async def test_after_a_restart_the_parents_call_and_the_childs_are_told_how_they_ended_once(
    tmp_path: Path,
) -> None:
    """The host closing stopped the child, so the parent's call failed, and the child's own
    call was cancelled, before the process ended: the store kept both ends, and each session
    is told its call's end once, as it was (not as lost)."""
    path = tmp_path / "agentos.db"

    def lead_script(request: ModelRequest) -> ModelResponse:
        results = last_tool_results(request)
        if results:
            return text(f"heard: {results[0]['content']}")
        return tool_calls(("researcher", {"task": "flights", "expected_seconds": 60}))

    model = Agents(lead=lead_script, researcher=researcher_script)
    puppet = Puppet()
    async with hosted(path, model, puppet.tool) as (store, runtime, host):
        session = await host.create_session(lead({"researcher": researcher()}), session_id="lead")
        session.post("go")
        await until(lambda: len(puppet.calls) == 1, runtime)
        (call,) = runtime.list_calls("lead")
        child = host.child_of(call.call_id)
        assert child is not None
        child_id = child.session_id
    async with hosted(path, model, puppet.tool) as (store, runtime, host):
        stored = await store.load_session(child_id)
        assert stored is not None and stored.parent_session_id == "lead"
        ended = {"lead": "failed", child_id: "cancelled"}
        for session_id in ("lead", child_id):
            resumed = await host.resume(session_id)
            with anyio.fail_after(10):
                await resumed.wait_settled()
            use = resumed.history[1]["content"][-1]
            assert isinstance(use, dict)
            told = json.dumps(resumed.history)
            assert "lost in a restart" not in told, session_id
            assert told.count(f"{use['id']} ({use['name']}) finished: ") == 1, session_id
            answer = await host.toolbox.get_tool_call_status(Caller(session_id), use["id"])
            assert answer["status"] == ended[session_id]


async def test_a_child_stopped_from_outside_fails_its_call_and_reads_no_more_messages() -> None:
    puppet = Puppet()

    def lead_script(request: ModelRequest) -> ModelResponse:
        if last_user_text(request) == "go":
            return tool_calls(("researcher", {"task": "flights", "expected_seconds": 60}))
        return text("ok")

    model = Agents(lead=lead_script, researcher=researcher_script)
    async with running(model, puppet.tool) as (runtime, host):
        session = await host.create_session(lead({"researcher": researcher()}))
        session.post("go")
        await until(lambda: len(puppet.calls) == 1, runtime)
        (call,) = runtime.list_calls(session.session_id)
        child = host.child_of(call.call_id)
        assert child is not None
        child.stop()  # someone else stops it: it is stopping, not ended yet
        answer = await host.toolbox.invoke(
            "message_agent",
            {"tool_call_id": call.call_id, "text": "hello?"},
            Caller(session.session_id),
        )
        assert error_code(answer) == "not_running"
        ended = await runtime.wait(call.call_id, 10)
        assert ended.status is CallStatus.FAILED and ended.error is not None
        assert "was stopped before it answered" in ended.error.message
        assert all(c.cancelled for c in puppet.calls.values())


async def test_a_child_inherits_the_parents_retry_budget_when_it_is_lower() -> None:
    puppet = Puppet()
    model = Agents(
        lead=lambda r: tool_calls(("researcher", {"task": "t"})), researcher=researcher_script
    )
    config = lead({"researcher": researcher(retry_budget=5)}, retry_budget=1)
    async with running(model, puppet.tool) as (runtime, host):
        _, _, child = await child_started(host, runtime, config, puppet)
        assert child.config.retry_budget == 1  # what the parent has left, not its own 5


async def test_a_child_waiting_on_a_deferred_call_goes_on_after_a_restart(
    tmp_path: Path,
) -> None:
    path = tmp_path / "agentos.db"
    approve = Puppet(name="approve")

    def lead_script(request: ModelRequest) -> ModelResponse:
        asked = last_user_text(request)
        if asked == "go":
            return tool_calls(("researcher", {"task": "book it", "expected_seconds": 60}))
        return text(f"lead heard: {asked}")

    def child_script(request: ModelRequest) -> ModelResponse:
        asked = last_user_text(request)
        if asked == "book it":
            return tool_calls(("approve", {"label": "book?"}), say="asking for approval")
        return text(f"booked, {asked}")

    model = Agents(lead=lead_script, researcher=child_script)
    child_config = AgentConfig(
        name="researcher",
        system_prompt="researcher",
        tools=["approve"],
        policy=DEFER,
    )
    config = lead({"researcher": child_config})
    async with hosted(path, model, approve.tool) as (store, runtime, host):
        session = await host.create_session(config, session_id="lead")
        session.post("go")
        await until(lambda: len(runtime.list_calls("lead")) == 1, runtime)
        (call,) = runtime.list_calls("lead")
        await until(lambda: _child_waits(host, call.call_id), runtime)
        child = host.child_of(call.call_id)
        assert child is not None
        child_id = child.session_id
    async with hosted(path, model, approve.tool) as (store, runtime, host):
        resumed = await host.resume("lead")
        (again,) = runtime.list_calls("lead")  # made again: nothing the child did was lost
        assert again.tool_name == "researcher" and again.provider_call_id == call.provider_call_id
        await until(lambda: host.child_of(again.call_id) is not None, runtime)
        (token,) = await store.tokens_of(child_id)
        await host.complete(token.token, "yes")
        with anyio.fail_after(10):
            while not runtime.status(again.call_id).is_final:
                await settle(runtime)
            await resumed.wait_settled()
        done = runtime.status(again.call_id)
        assert done.status is CallStatus.COMPLETED and "booked" in str(done.result)
        assert "lost in a restart" not in json.dumps(resumed.history)
        assert "booked" in resumed.replies[-1]


def _child_waits(host: Host, call_id: str) -> bool:
    child = host.child_of(call_id)
    return child is not None and child.external_only


async def test_cancelling_a_sub_agent_call_cancels_its_childs_deferred_calls_too() -> None:
    approve = Puppet(name="approve")

    def child_script(request: ModelRequest) -> ModelResponse:
        return tool_calls(("approve", {"label": "book?"}))

    model = Agents(
        lead=lambda r: tool_calls(("researcher", {"task": "t"})), researcher=child_script
    )
    child_config = researcher(policy=DEFER)
    config = lead({"researcher": child_config.model_copy(update={"tools": ["approve"]})})
    async with running(model, approve.tool) as (runtime, host):
        session = await host.create_session(config)
        session.post("go")
        await until(lambda: len(runtime.list_calls(session.session_id)) == 1, runtime)
        (call,) = runtime.list_calls(session.session_id)
        await until(lambda: _child_waits(host, call.call_id), runtime)
        child = host.child_of(call.call_id)
        assert child is not None
        (deferred,) = runtime.list_calls(child.session_id)
        assert deferred.deferred and deferred.status is CallStatus.PENDING
        runtime.cancel(call.call_id, "never mind")
        await until(lambda: runtime.status(deferred.call_id).is_final, runtime)
        assert runtime.status(deferred.call_id).status is CallStatus.CANCELLED


async def test_a_sub_agent_call_that_times_out_stops_its_child_and_the_childs_call(
    clock: ManualClock,
) -> None:
    puppet = Puppet()
    model = Agents(
        lead=lambda r: (
            tool_calls(("researcher", {"task": "t"}))
            if last_user_text(r) == "go"
            else text("too slow")
        ),
        researcher=researcher_script,
    )
    timed = Decorate(decorate=[Decorator(timeout=30)])
    config = lead({"researcher": researcher()}, policy=ToolPolicy(rules={"researcher": timed}))
    async with running(model, puppet.tool, clock=clock) as (runtime, host):
        _, call, child = await child_started(host, runtime, config, puppet)
        clock.advance(31)
        await until(lambda: all(c.cleaned_up for c in puppet.calls.values()), runtime)
        ended = runtime.status(call.call_id)
        assert ended.status is CallStatus.FAILED and ended.error is not None
        assert ended.error.kind.value == "timed_out"
        assert all(c.cancelled for c in puppet.calls.values())  # the child's own call
        assert child.ended


async def test_a_sub_agent_turn_costs_the_runtime_no_more_ticks_than_a_plain_call() -> None:
    """Opening the child, its reply relayed as progress and its ending ride on the ticks the
    call's own start and end take: a child's turn is two ticks, as a plain 1-call turn is."""

    def once(tool_name: str) -> Script:
        def script(request: ModelRequest) -> ModelResponse:
            if last_tool_results(request):
                return text("done")
            return tool_calls((tool_name, {"task": "hi"} if tool_name == "quick" else {}))

        return script

    quick = AgentConfig(name="quick", system_prompt="quick")
    via_child = lead({"quick": quick})
    via_tool = AgentConfig(name="via_tool", system_prompt="via_tool", tools=["noop"])
    agents = Agents(lead=once("quick"), via_tool=once("noop"), quick=lambda _: text("hi"))
    noop = Tool.from_schema(lambda args: None, name="noop", input_schema={"type": "object"})
    async with Runtime([noop]) as runtime, Host(runtime, agents) as host:
        ticks = {}
        for config in (via_child, via_tool):
            session = await host.create_session(config)
            session.post("warm up")
            await session.wait_idle()
            before = runtime.statistics().ticks
            for turn in range(3):
                session.post(f"turn {turn}")
                await session.wait_idle()
            ticks[config.name] = (runtime.statistics().ticks - before) / 3
            assert session.replies[-1] == "done"
    assert ticks == {"lead": 2, "via_tool": 2}


async def test_an_ended_child_leaves_few_objects_for_the_collector() -> None:
    """An ended child stays loaded (its page, its history), but not its running parts: no
    task record, no cancel scope, no wake-up event, no subscriptions. Each object it keeps
    is walked at every full collection: 46 tracked objects a sub-agent turn here before, 25
    now (the child's session and what its history and status need). Over 100 turns: asyncio
    keeps up to 100 cancelled timers (a model request's timeout each) before it clears them."""
    quick = AgentConfig(name="quick", system_prompt="quick")

    def once(request: ModelRequest) -> ModelResponse:
        return text("done") if last_tool_results(request) else tool_calls(("quick", {"task": "hi"}))

    turns = 150

    class KeepsNothing:  # unlike Agents, which keeps every request
        name = "keeps-nothing"

        async def complete(self, request: ModelRequest) -> ModelResponse:
            return once(request) if request.system == "lead" else text("hi")

    async with Runtime([]) as runtime, Host(runtime, KeepsNothing()) as host:
        session = await host.create_session(lead({"quick": quick}))
        for turn in range(3):  # warm-up: whatever a first turn makes once
            session.post(f"warm-up {turn}")
            await session.wait_idle()
        gc.collect()
        before = len(gc.get_objects())
        for turn in range(turns):
            session.post(f"turn {turn}")
            await session.wait_idle()
        gc.collect()
        grown = len(gc.get_objects()) - before
        children = [host.get(s.session_id) for s in host.list() if s.agent == "quick"]
        assert len(children) == turns + 3 and all(child.ended for child in children)
        assert children[-1].replies == ["hi"] and session.replies[-1] == "done"
    assert grown / turns <= 29, f"{grown / turns:.1f} tracked objects a sub-agent turn"


async def test_a_sub_agent_turn_leaves_nothing_only_the_collector_can_free() -> None:
    """What a sub-agent's call made (its task, its context, what followed the child's words)
    is freed as soon as the call ends, not at the collector's next pass: a cycle left behind
    would hold the call's task and coroutine, and make the collector run more often."""
    quick = AgentConfig(name="quick", system_prompt="quick")

    class Answers:
        name = "answers"

        async def complete(self, request: ModelRequest) -> ModelResponse:
            if request.system != "lead":
                return text("hi")
            if last_tool_results(request):
                return text("done")
            return tool_calls(("quick", {"task": "hi"}))

    async with Runtime([]) as runtime, Host(runtime, Answers()) as host:
        session = await host.create_session(lead({"quick": quick}))
        session.post("warm-up")
        await session.wait_idle()
        gc.collect()
        gc.disable()
        try:
            for turn in range(5):
                session.post(f"turn {turn}")
                await session.wait_idle()
            unreachable = gc.collect()
        finally:
            gc.enable()
        assert session.replies[-1] == "done"
    assert unreachable == 0, f"{unreachable} objects in cycles after 5 sub-agent turns"


async def test_cancelling_a_sub_agent_call_while_its_child_asks_its_model_stops_the_child() -> None:
    """The child's first request runs in its call's task: cancelling the call cuts the
    request there, and the child still stops, asking its model nothing more."""
    asked = anyio.Event()
    cut: list[str] = []

    class Slow:
        name = "slow"

        async def complete(self, request: ModelRequest) -> ModelResponse:
            if request.system == "lead":
                if last_user_text(request) == "go":
                    return tool_calls(("quick", {"task": "hi"}))
                return text("ok")
            asked.set()
            try:
                await anyio.sleep_forever()
            finally:
                cut.append(request.system)
            raise AssertionError("unreachable")

    quick = AgentConfig(name="quick", system_prompt="quick")
    async with Runtime([]) as runtime, Host(runtime, Slow()) as host:
        session = await host.create_session(lead({"quick": quick}))
        session.post("go")
        with anyio.fail_after(10):
            await asked.wait()
        (call,) = runtime.list_calls(session.session_id)
        child = host.child_of(call.call_id)
        assert child is not None
        runtime.cancel(call.call_id, "no longer needed")
        ended = await runtime.wait(call.call_id, 10)
        assert ended.status is CallStatus.CANCELLED
        with anyio.fail_after(10):
            await until(lambda: child.ended, runtime)
            await session.wait_idle()
        assert cut == ["quick"]  # asked once, and that request was cut
        assert session.replies[-1] == "ok"


async def test_closing_the_host_during_a_childs_first_request_ends_its_call() -> None:
    """The child's first request, running in its call's task, is cut by the child's end as
    the host closes; the call then ends saying so, instead of waiting on the child."""
    asked = anyio.Event()

    class Hangs:
        name = "hangs"

        async def complete(self, request: ModelRequest) -> ModelResponse:
            if request.system == "lead":
                return tool_calls(("quick", {"task": "hi"}))
            asked.set()
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

    quick = AgentConfig(name="quick", system_prompt="quick")
    async with Runtime([]) as runtime:
        async with Host(runtime, Hangs()) as host:
            session = await host.create_session(lead({"quick": quick}))
            session.post("go")
            with anyio.fail_after(10):
                await asked.wait()
            (call,) = runtime.list_calls(session.session_id)
        ended = await runtime.wait(call.call_id, 10)
        assert ended.status is CallStatus.FAILED and ended.error is not None
        assert "stopped before it answered" in ended.error.message


async def test_cancelling_a_sub_agent_call_while_its_child_submits_calls_stops_the_child() -> None:
    """The child submits its calls in its own task, not its call's: a cancel of the call
    while a submit waits (here on a status look that waits for the child's other call)
    cuts nothing half-done, and the child stops."""
    puppet = Puppet()

    def lead_script(request: ModelRequest) -> ModelResponse:
        return text("ok") if last_tool_results(request) else tool_calls(("quick", {"task": "t"}))

    def child_script(request: ModelRequest) -> ModelResponse:
        if last_tool_results(request):
            return text("done")
        look = {"tool_call_id": "toolu_1", "wait_for_completion": True}
        return ModelResponse(
            [
                {"type": "tool_use", "id": "toolu_1", "name": "puppet", "input": {"label": "x"}},
                {
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "get_tool_call_status",
                    "input": look,
                },
            ],
            "tool_use",
        )

    model = Agents(lead=lead_script, quick=child_script)
    quick = AgentConfig(name="quick", system_prompt="quick", tools=["puppet"])
    async with running(model, puppet.tool) as (runtime, host):
        session = await host.create_session(lead({"quick": quick}))
        session.post("go")
        await until(lambda: len(puppet.calls) == 1, runtime)
        (call,) = [c for c in runtime.list_calls(session.session_id) if c.tool_name == "quick"]
        child = host.child_of(call.call_id)
        assert child is not None
        runtime.cancel(call.call_id, "no longer needed")
        assert (await runtime.wait(call.call_id, 10)).status is CallStatus.CANCELLED
        await until(lambda: child.ended, runtime)
        assert all(c.cancelled for c in puppet.calls.values())


class _AnswersWhenLetGo:
    """The lead calls ``quick`` once; the child's model, asked, waits for ``gate``, then
    calls the puppet."""

    name = "answers-when-let-go"

    def __init__(self) -> None:
        self.asked, self.gate = anyio.Event(), anyio.Event()

    async def child_asked(
        self, host: Host, runtime: Runtime, quick: AgentConfig
    ) -> tuple[CallSnapshot, Session]:
        """A lead session told "go": its call of ``quick`` and that call's child, once the
        child has asked its model."""
        session = await host.create_session(lead({"quick": quick}))
        session.post("go")
        await self.asked.wait()
        (call,) = runtime.list_calls(session.session_id)
        child = host.child_of(call.call_id)
        assert child is not None
        return call, child

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if request.system == "lead":
            return (
                text("ok") if last_tool_results(request) else tool_calls(("quick", {"task": "t"}))
            )
        self.asked.set()
        await self.gate.wait()
        return tool_calls(("puppet", {"label": "x"}))


async def test_a_childs_reply_that_calls_tools_as_the_host_closes_ends_its_call() -> None:
    """The reply comes back to the call's task just as the host's close ends the child's
    task, which the child's calls were left to: the call still ends, and the child too."""
    puppet, model = Puppet(), _AnswersWhenLetGo()
    quick = AgentConfig(name="quick", system_prompt="quick", tools=["puppet"])
    async with Runtime([puppet.tool]) as runtime:
        async with Host(runtime, model) as host:
            call, child = await model.child_asked(host, runtime, quick)
            model.gate.set()  # the reply is ready as the host closes
        assert (await runtime.wait(call.call_id, 10)).status is CallStatus.FAILED
        with anyio.fail_after(10):
            await child.wait_idle()
        assert child.ended and not puppet.calls


async def test_a_call_cancelled_just_before_the_host_closes_leaves_its_child_settled() -> None:
    """The cancel cuts the child's request in the call's task, which puts it back for the
    child's task; the host's close ends that task first: the child ends with nothing
    waiting to be performed."""
    model = _AnswersWhenLetGo()
    quick = AgentConfig(name="quick", system_prompt="quick")
    async with Runtime([]) as runtime:
        async with Host(runtime, model) as host:
            call, child = await model.child_asked(host, runtime, quick)
            runtime.cancel(call.call_id, "no longer needed")
            await anyio.lowlevel.checkpoint()  # the cancel reaches the call's task first
        assert (await runtime.wait(call.call_id, 10)).status is CallStatus.CANCELLED
        with anyio.fail_after(10):
            await child.wait_idle()
        assert child.ended
