"""A model you script as a Python function (issue 47): ``agentos.FunctionModel(reply)``, or
``model = "module:reply"`` in an agent configuration, asks ``reply(request)`` every turn.

The function reads the conversation as entries (a person's words, its own calls, the
runtime's placeholders, late outcomes, overdue notes and capability answers) and the tools
it may call; it replies with text, tool calls or both, sync or async. What goes wrong is
said in one line naming the function: an import path that finds nothing, something that is
not a function of one argument, a function that raises or returns what is not a reply (that
turn fails; other sessions go on).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import ValidationError

from agentos import AgentConfig
from agentos import CallStatus
from agentos import FunctionModel
from agentos import Host
from agentos import ManualClock
from agentos import ModelResponse
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import SqliteStore
from agentos import SubAgent
from agentos import ToolFailure
from agentos import UsageError
from agentos import tool
from agentos.testing import FunctionRequest
from agentos.testing import Puppet
from agentos.testing import Said
from agentos.testing import ToolCall
from agentos.testing import ToolResult
from agentos.testing import board_turn
from agentos.testing import settle
from agentos.testing import text
from tests.support.backends import running
from tests.support.scripting import until

pytestmark = pytest.mark.anyio


def entries(request: FunctionRequest) -> list[tuple[Any, ...]]:
    """The request's entries as tuples, ids and notes left out (ids are fresh each run)."""
    shown: list[tuple[Any, ...]] = []
    for entry in request.messages:
        if isinstance(entry, Said):
            shown.append(("said", entry.who, entry.text))
        elif isinstance(entry, ToolCall):
            shown.append(("call", entry.tool, dict(entry.input)))
        else:
            shown.append(("result", entry.tool, entry.status.value, entry.late))
    return shown


class Download:
    """A script: a download on request, an answer while it runs, a cancel when asked."""

    def __init__(self) -> None:
        self.seen: list[FunctionRequest] = []

    def __call__(self, request: FunctionRequest) -> str | ToolCall | list[str | ToolCall]:
        self.seen.append(request)
        asked = request.user_text.lower()
        if "cancel" in asked:
            (running,) = request.running("puppet")
            return ToolCall("cancel_tool_call", {"tool_call_id": running.call_id})
        if "download" in asked:
            return ["Starting it.", ToolCall("puppet", {"label": "archive"})]
        if "2+2" in asked:
            still = len(request.running())
            return f"4. ({still} call still running.)"
        said = []
        for entry in request.new:
            if isinstance(entry, ToolResult) and entry.tool == "cancel_tool_call":
                assert isinstance(entry.value, dict)
                said.append(f"Cancelled: {entry.value['cancelled']}.")
            elif isinstance(entry, ToolResult) and entry.late:
                said.append(f"The {entry.tool} call is {entry.status}: {entry.value}.")
        return " ".join(said) or "ok"


async def test_a_function_scripts_a_call_a_question_while_it_runs_and_a_cancel(
    clock: ManualClock,
) -> None:
    puppet = Puppet()
    script = Download()
    async with running(FunctionModel(script), puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session()
        session.post("Download the archive, please.")
        await until(lambda: len(puppet.calls) == 1 and session.status == "waiting", runtime)
        (call_id,) = puppet.calls
        session.post("While it runs: what is 2+2?")  # cuts the wait: the call gets a placeholder
        with anyio.fail_after(5):
            await session.wait_idle()
        assert runtime.status(call_id).status is CallStatus.RUNNING
        session.post("Cancel the download.")
        with anyio.fail_after(5):
            await session.wait_idle()
        assert runtime.status(call_id).status is CallStatus.CANCELLED
        assert runtime.status(call_id).cancel_reason == "cancelled by the model"
    assert session.replies == [
        "Starting it.",
        "4. (1 call still running.)",
        "",
        "Cancelled: True.",
    ]
    first, meanwhile, cancel, cancelled = script.seen
    assert entries(first) == [("said", "user", "Download the archive, please.")]
    assert entries(meanwhile)[1:] == [
        ("said", "model", "Starting it."),
        ("call", "puppet", {"label": "archive"}),
        ("result", "puppet", "running", False),
        ("said", "user", "While it runs: what is 2+2?"),
    ]
    placeholder = meanwhile.messages[3]
    assert isinstance(placeholder, ToolResult)
    assert "cancel_tool_call" in placeholder.note and placeholder.token is None
    assert [call.tool for call in cancel.running()] == ["puppet"]
    assert entries(cancelled)[-2:] == [
        ("call", "cancel_tool_call", {"tool_call_id": meanwhile.calls()[0].call_id}),
        ("result", "cancel_tool_call", "completed", False),
    ]
    assert cancelled.running() == [], "the capability's answer said the call ended"
    assert {"puppet", "cancel_tool_call", "get_tool_call_status"} <= set(first.tools)
    schema = first.tools["puppet"].input_schema
    assert "label" in schema["properties"]


async def test_a_late_outcome_and_an_overdue_call_are_entries_of_their_own(
    clock: ManualClock,
) -> None:
    """A result told after its placeholder is a ``ToolResult`` with ``late``; the runtime's
    nudge about a call past its time is ``Said("runtime", ..., call_id)``."""
    puppet = Puppet()
    script = Download()
    config = AgentConfig(call_overdue_after=10)
    async with running(FunctionModel(script), puppet.tool, clock=clock) as (runtime, host):
        session = await host.create_session(config)
        session.post("Download the archive.")
        await until(lambda: len(puppet.calls) == 1 and session.status == "waiting", runtime)
        (call_id,) = puppet.calls
        clock.advance(11)  # overdue: a turn with a placeholder and the runtime's note
        await until(lambda: len(script.seen) == 2, runtime)
        with anyio.fail_after(5):
            await session.wait_idle()
        puppet.complete(call_id, {"bytes": 1024})
        with anyio.fail_after(5):
            await session.wait_settled()
    overdue, late = script.seen[1:]
    (note,) = [e for e in overdue.new if isinstance(e, Said)]
    assert (note.who, note.call_id) == ("runtime", overdue.calls()[0].call_id)
    assert "overdue" in note.text
    (told,) = late.new
    assert told == ToolResult(
        overdue.calls()[0].call_id, "puppet", CallStatus.COMPLETED, {"bytes": 1024}, late=True
    )
    assert late.running() == []
    assert session.replies[-1] == "The puppet call is completed: {'bytes': 1024}."


async def test_a_call_that_failed_saying_cancelled_is_failed_not_cancelled(
    clock: ManualClock,
) -> None:
    """A tool's own failure whose words begin with 'cancelled' is told the model as failed
    (the runtime writes 'failed: ...'), so the script reads it as ``failed``."""

    @tool
    def vendor() -> ToolFailure:
        """An order the vendor called off."""
        return ToolFailure("cancelled by the vendor")

    seen: list[FunctionRequest] = []

    def reply(request: FunctionRequest) -> str | ToolCall:
        seen.append(request)
        return "ok" if len(seen) > 1 else ToolCall("vendor")

    async with running(FunctionModel(reply), vendor, clock=clock) as (_, host):
        session = await host.create_session()
        session.post("Order it.")
        with anyio.fail_after(5):
            await session.wait_settled()
    (told,) = [entry for entry in seen[-1].messages if isinstance(entry, ToolResult)]
    assert (told.status, told.error) == (CallStatus.FAILED, "failed: cancelled by the vendor")


async def test_an_async_function_and_a_whole_model_response_are_replies(
    clock: ManualClock,
) -> None:
    async def reply(request: FunctionRequest) -> ModelResponse:
        await anyio.lowlevel.checkpoint()
        return text(f"heard {request.user_text!r} in {request.session_id}")

    async with running(FunctionModel(reply), clock=clock) as (_, host):
        session = await host.create_session(session_id="s1")
        session.post("hello")
        with anyio.fail_after(5):
            await session.wait_idle()
    assert session.replies == ["heard 'hello' in s1"]


def test_a_function_can_be_tried_on_a_request_built_by_hand() -> None:
    """A script is a plain function: a test can call it with the entries it should answer."""
    request = FunctionRequest(
        (
            Said("user", "Download the archive."),
            Said("model", "Starting it."),
            ToolCall("puppet", {"label": "archive"}, "toolu_1"),
            ToolResult("toolu_1", "puppet", CallStatus.RUNNING, note="Still running"),
            Said("user", "Cancel it."),
        )
    )
    assert request.new == request.messages[3:]
    assert request.user_text == "Cancel it."
    assert request.running() == [request.messages[2]]
    assert Download()(request) == ToolCall("cancel_tool_call", {"tool_call_id": "toolu_1"})


# ---------------------------------------------------------------- by import path


@pytest.fixture
def scripts(tmp_path: Path) -> Iterator[Path]:
    """A folder with a module of model functions, ``fm_replies``; forgotten afterwards."""
    (tmp_path / "fm_replies.py").write_text(
        "from agentos.testing import FunctionRequest\n"
        "GREETING = 'hello'\n"
        "def reply(request: FunctionRequest) -> str:\n"
        "    last = request.user_text.splitlines()[-1]\n"
        "    if last == 'boom':\n"
        "        raise ValueError('no boom today')\n"
        "    return f'scripted: {last}'\n"
        "def two(request, extra):\n"
        "    return 'never'\n"
    )
    yield tmp_path
    sys.modules.pop("fm_replies", None)
    if str(tmp_path) in sys.path:
        sys.path.remove(str(tmp_path))


async def test_an_agent_file_names_the_function_and_the_host_asks_it(
    scripts: Path, clock: ManualClock
) -> None:
    """The file's folder is searched first; the host's own model is not asked, and a
    session resumed from the store (in a new host) is answered by the function again."""
    agent = scripts / "agent.toml"
    agent.write_text('name = "scripted"\nmodel = "fm_replies:reply"\n')
    config = AgentConfig.from_file(agent)
    assert config.model == "fm_replies:reply"
    other = ScriptedProvider((lambda r: True, lambda r: text("the host's model")))
    async with (
        await SqliteStore.open(scripts / "a.db") as store,
        Runtime([], clock=clock) as runtime,
    ):
        async with Host(runtime, other, store=store) as host:
            session = await host.create_session(config, session_id="s")
            session.post("hi")
            with anyio.fail_after(5):
                await session.wait_idle()
            assert session.replies == ["scripted: hi"]
        sys.modules.pop("fm_replies")
        sys.path.remove(str(scripts))
        async with Host(runtime, other, store=store) as host:
            session = await host.resume("s")
            session.post("again")
            with anyio.fail_after(5):
                await session.wait_idle()
            assert session.replies[-1] == "scripted: again"
    assert other.answered == 0


async def test_a_config_takes_the_function_itself_and_keeps_its_import_path(
    scripts: Path, clock: ManualClock
) -> None:
    sys.path.insert(0, str(scripts))
    import fm_replies  # type: ignore[import-not-found]

    config = AgentConfig(model=fm_replies.reply)
    assert config.model == "fm_replies:reply"
    assert AgentConfig.model_validate(config.model_dump(mode="json")).model == "fm_replies:reply"
    other = ScriptedProvider()
    async with running(other, clock=clock) as (_, host):
        session = await host.create_session(config)
        session.post("hi")
        with anyio.fail_after(5):
            await session.wait_idle()
    assert session.replies == ["scripted: hi"]
    with pytest.raises(ValidationError, match="has no import path"):
        AgentConfig(model=lambda request: "hi")


async def test_a_function_of_the_script_being_run_is_refused_by_a_config_not_by_a_host(
    clock: ManualClock,
) -> None:
    """A function a script defines (``__main__``) has no import path another process (a
    later ``agentos say``, the web server) could follow: a config refuses it saying what to
    do, as it refuses a lambda; the script's host takes ``FunctionModel(reply)`` as ever."""
    script: dict[str, Any] = {"__name__": "__main__"}
    exec("def reply(request):\n    return 'from the script'\n", script)
    reply = script["reply"]
    assert reply.__module__ == "__main__"
    with pytest.raises(ValidationError) as refused:
        AgentConfig(model=reply)
    said = str(refused.value)
    assert "defined in the script being run (__main__)" in said, said
    assert "define reply in a module and name it 'module:reply'" in said, said
    assert "FunctionModel(reply)" in said, said
    async with running(FunctionModel(reply), clock=clock) as (_, host):
        session = await host.create_session(AgentConfig())
        session.post("hi")
        with anyio.fail_after(5):
            await session.wait_idle()
    assert session.replies == ["from the script"]


@pytest.fixture
def twins(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """Two agents' folders, each with its own ``fm_twin.py``; forgotten afterwards."""
    folders = (tmp_path / "first", tmp_path / "second")
    for folder in folders:
        folder.mkdir()
        (folder / "fm_twin.py").write_text(f"def reply(request):\n    return {folder.name!r}\n")
    yield folders
    sys.modules.pop("fm_twin", None)
    sys.path[:] = [entry for entry in sys.path if entry not in map(str, folders)]


def test_two_agents_folders_with_a_module_of_one_name_fail_naming_both_files(
    twins: tuple[Path, Path],
) -> None:
    """The second agent would silently get the first one's module (Python keeps one module
    of a name): it fails instead, naming both files; the first still gets its own."""
    first, second = twins
    assert (
        FunctionModel.from_path("fm_twin:reply", [first]).function(FunctionRequest(())) == "first"
    )
    with pytest.raises(UsageError) as refused:
        FunctionModel.from_path("fm_twin:reply", [second])
    said = str(refused.value)
    assert said.startswith("'fm_twin:reply': this process already imported the module fm_twin"), (
        said
    )
    assert f"from {first / 'fm_twin.py'}, so it cannot import {second / 'fm_twin.py'} too" in said
    assert "rename one of them" in said
    assert (
        FunctionModel.from_path("fm_twin:reply", [first]).function(FunctionRequest(())) == "first"
    )


def test_an_agents_folder_goes_on_sys_path_once_however_often_and_however_spelled(
    twins: tuple[Path, Path],
) -> None:
    """A long-lived server resumes many sessions of one agent file: its folder is put on
    ``sys.path`` once, whether named ``first``, ``first/.`` or ``second/../first``."""
    first, second = twins
    before = len(sys.path)
    for spelled in [first, first / ".", second / ".." / "first", first] * 3:
        FunctionModel.from_path("fm_twin:reply", [spelled])
    assert len(sys.path) == before + 1
    assert sys.path[0] == str(first)


async def test_a_sub_agent_is_answered_by_the_function_its_own_config_names(
    scripts: Path, clock: ManualClock
) -> None:
    def lead(request: FunctionRequest) -> str | ToolCall:
        for entry in request.new:
            if isinstance(entry, ToolResult):
                return f"the helper said: {entry.value}"
        return ToolCall("helper", {"task": "ping"})

    helper = AgentConfig(name="helper", model="fm_replies:reply", import_path=[str(scripts)])
    config = AgentConfig(model="claude-sonnet-4-5", agents={"helper": SubAgent(agent=helper)})
    async with running(FunctionModel(lead), clock=clock) as (_, host):
        session = await host.create_session(config)
        session.post("go")
        with anyio.fail_after(5):
            await session.wait_settled()
    assert session.replies[-1] == "the helper said: scripted: ping", session.errors


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("fm_nowhere:reply", ["'fm_nowhere:reply'", "no module named 'fm_nowhere'", "looked in"]),
        ("fm_replies:rply", ["the module fm_replies has no attribute 'rply'", "'reply'?"]),
        ("fm_replies:GREETING", ["'fm_replies:GREETING' is a str, not a function"]),
        ("fm_replies:two", ["'fm_replies:two' takes (request, extra)", "one argument"]),
        ("fm_replies", ["'fm_replies' is not an import path 'module:function'"]),
    ],
)
def test_an_import_path_that_names_no_model_function_says_what_is_wrong(
    scripts: Path, path: str, words: list[str]
) -> None:
    with pytest.raises(UsageError) as raised:
        FunctionModel.from_path(path, [scripts])
    for word in words:
        assert word in str(raised.value), (word, str(raised.value))


def test_a_name_is_no_import_path() -> None:
    assert FunctionModel.named("claude-sonnet-4-5") is None
    assert FunctionModel.named("anthropic.claude-3-5-sonnet-20241022-v2:0") is None


async def test_a_host_refuses_a_session_whose_model_function_is_not_there(
    scripts: Path, clock: ManualClock
) -> None:
    config = AgentConfig(name="mine", model="fm_replies:rply", import_path=[str(scripts)])
    async with running(ScriptedProvider(), clock=clock) as (runtime, host):
        with pytest.raises(UsageError, match=r"agent 'mine': model: 'fm_replies:rply': the mod"):
            await host.create_session(config)
        assert runtime.sessions() == []


# ---------------------------------------------------------------- what goes wrong in a turn


async def test_a_function_that_raises_fails_that_turn_only(
    scripts: Path, clock: ManualClock
) -> None:
    """The error names the function and what it raised; the same host's other session goes
    on, and so does this one with its next message."""
    config = AgentConfig(model="fm_replies:reply", import_path=[str(scripts)])
    async with running(ScriptedProvider(), clock=clock) as (runtime, host):
        failing = await host.create_session(config, session_id="failing")
        other = await host.create_session(config, session_id="other")
        failing.post("boom")
        other.post("hi")
        with anyio.fail_after(5):
            await failing.wait_idle()
            await other.wait_idle()
        (error,) = failing.errors
        assert error.kind == "model_function"
        assert error.message == "'fm_replies:reply' raised ValueError: no boom today"
        assert other.replies == ["scripted: hi"] and other.errors == []
        assert failing.status == "failed"
        failing.post("still there?")  # a failed turn's session takes the next message
        await until(lambda: failing.replies == ["scripted: still there?"], runtime)


@pytest.mark.parametrize(
    ("returned", "words"),
    [
        (42, "returned 42, an int: a reply is text (a str), an agentos.testing.ToolCall"),
        (None, "returned None, None: a reply is text"),
        ("", "returned '', an empty reply: a reply says something, or calls a tool"),
        ([], "returned [], an empty reply"),
        (["hi", 7], "returned ['hi', 7], a list holding 7 (an int): a reply is text"),
        (ToolCall("x", {"when": object()}), "a ToolCall's input must be JSON"),
        (ToolCall("", {}), "a ToolCall names its tool"),
    ],
)
async def test_a_function_that_returns_no_reply_fails_that_turn_naming_what_it_returned(
    clock: ManualClock, returned: object, words: str
) -> None:
    def reply(request: FunctionRequest) -> Any:
        return returned

    async with running(FunctionModel(reply), clock=clock) as (_, host):
        session = await host.create_session()
        session.post("hi")
        with anyio.fail_after(5):
            await session.wait_idle()
    (error,) = session.errors
    assert error.kind == "model_function"
    assert error.message.startswith(f"'{__name__}:"), error.message
    assert words in error.message, error.message


def test_a_function_that_cannot_take_the_request_is_refused_at_once() -> None:
    def none() -> str:
        return "hi"

    with pytest.raises(UsageError, match=r"takes \(\): a model function takes one argument"):
        FunctionModel(none)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="is an int, not a function"):
        FunctionModel(5)  # type: ignore[arg-type]


async def test_a_board_session_asks_the_function_with_the_board_drawn(
    clock: ManualClock,
) -> None:
    """A board agent's request is one user message drawing the board: ``board_turn``
    reads it from ``model_request``."""
    seen: list[FunctionRequest] = []

    def reply(request: FunctionRequest) -> str:
        seen.append(request)
        assert request.model_request is not None
        turn = board_turn(request.model_request)
        assert turn is not None
        return f"node {turn.node} said {turn.text!r}"

    config = AgentConfig(context_view="board")
    async with running(FunctionModel(reply), clock=clock) as (runtime, host):
        session = await host.create_session(config)
        session.post("hello board")
        with anyio.fail_after(5):
            await session.wait_idle()
        await settle(runtime)
    ((said,),) = [request.messages for request in seen]
    assert isinstance(said, Said) and "hello board" in said.text
    assert session.replies == ["node 1 said 'hello board'"]
