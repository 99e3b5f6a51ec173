"""The demo behind ``make run``: one host, four sessions, a restart in the middle.

Alice asks for three calendars at once (slow tools with progress; Joe's
stalls), asks something else while they run and is answered at once, checks
on Joe's call and cancels it. Carol's weather question is answered meanwhile.
Dana's session is a board session (``context_view="board"``): the model reads
one rendered message board, not a transcript. She asks for two calendars at
once, asks the weather while they run and is answered, and gets the meeting
time when both lookups have landed (one turn for the two); her board is
printed once, as the model reads it. Bob starts a long report; then the
process is killed (SIGKILL) while it runs. A fresh process opens the same
SQLite file: Bob's report shows as ``orphaned``, Joe's lookup stays
``cancelled``. Each call's start and end is
printed as it happens, and each capability the model used (a dim line), so
the concurrency shows. The tools are ``agentos.demo_tools.TOOLS``, the ones
``agentos run`` offers. The model is scripted and offline unless
``ANTHROPIC_API_KEY`` is set; the demo says which. It uses the public API only.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import structlog
from anyio.abc import TaskStatus

from agentos import AgentConfig
from agentos import CallEvent
from agentos import CallEventKind
from agentos import Host
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import ProgressKind
from agentos import Provider
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import Session
from agentos import SqliteStore
from agentos import YieldOnTimeout
from agentos import tune_gc
from agentos.board import ChatEntry
from agentos.demo.board import BOARD_AGENT
from agentos.demo.board import board_model
from agentos.demo.tools import TOOLS
from agentos.demo.tools import answer_of
from agentos.demo.tools import brief
from agentos.demo.tools import describe_call
from agentos.testing import blocks_of
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.turns import CAPABILITIES
from agentos.turns import Caller
from agentos.turns import Message

TOOL_NAMES = {tool.name for tool in TOOLS}
AGENT = AgentConfig(
    name="demo",
    system_prompt="You help people plan. Tools are slow; keep talking while they run.",
    async_yield_strategy=YieldOnTimeout(milliseconds=300),
)


# ------------------------------------------------------------------ the scripted model


def _asked(phrase: str) -> Callable[[ModelRequest], bool]:
    return lambda r: phrase in last_user_text(r).lower() and not last_tool_results(r)


def _tool_uses(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [
        block
        for message in messages
        for block in blocks_of(message)
        if block.get("type") == "tool_use"
    ]


def _call_of(request: ModelRequest, person: str) -> str:
    for block in _tool_uses(request.messages):
        if block["input"].get("person") == person:
            return str(block["id"])
    return "unknown"


def _results_said(request: ModelRequest) -> ModelResponse:
    said = []
    running = 0
    for block in last_tool_results(request):
        value = answer_of(block)
        if isinstance(value, dict) and value.get("agentos_placeholder"):
            running += 1
        elif isinstance(value, dict) and "cancelled" in value:
            was = value.get("previous_status")
            said.append(
                f"Cancelled Joe's lookup (it was {was})."
                if value["cancelled"]
                else f"Joe's lookup could not be cancelled: it was already {was}."
            )
        elif isinstance(value, dict) and "status" in value:
            latest = _latest(value, quoted=False)
            said.append(
                f"Joe's lookup is {value['status']}"
                + (f"; the latest news: {latest}." if latest else ".")
            )
        else:
            said.append(brief(value))
    if running:
        said.append(f"{running} still running; I will tell you as they finish.")
    return text(" ".join(said))


def _outcomes_said(request: ModelRequest) -> ModelResponse:
    said = []
    for line in last_user_text(request).split("[tool call ")[1:]:
        if "finished: completed] result: " in line:
            said.append(brief(json.loads(line.split("result: ", 1)[1])))
        elif "finished:" in line:
            said.append(line.split("] ", 1)[0].split("finished: ")[1] + ".")
    return text(" ".join(said))


def scripted_model() -> ScriptedProvider:
    """Rules that play the model's part offline, the same way every time."""
    return ScriptedProvider(
        (
            _asked("jane, jack and joe"),
            lambda r: tool_calls(
                ("fetch_calendar", {"person": "Jane", "seconds": 1.5}),
                ("fetch_calendar", {"person": "Jack", "seconds": 1.0}),
                ("fetch_calendar", {"person": "Joe", "stall_at": 40}),
                say="Checking all three calendars at once.",
            ),
        ),
        (_asked("2+2"), lambda r: text("4. The calendars are still being read.")),
        (_asked("weather"), lambda r: tool_calls(("weather", {"city": "Oslo"}))),
        (
            _asked("how is joe"),
            lambda r: tool_calls(("get_tool_call_status", {"tool_call_id": _call_of(r, "Joe")})),
        ),
        (
            _asked("cancel joe"),
            lambda r: tool_calls(
                ("cancel_tool_call", {"tool_call_id": _call_of(r, "Joe"), "reason": "stalled"})
            ),
        ),
        (
            lambda r: "lost in a restart" in last_user_text(r),
            lambda r: text("The report was lost in the restart. Shall I start it again?"),
        ),
        (_asked("report"), lambda r: tool_calls(("write_report", {"pages": 60}))),
        (lambda r: bool(last_tool_results(r)), _results_said),
        (lambda r: "finished:" in last_user_text(r), _outcomes_said),
        (lambda r: True, lambda r: text("Noted.")),
        keep_requests=False,
    )


def which_model(environ: Mapping[str, str] = os.environ) -> str:
    """The sentence that says which model answers: the Anthropic API when a key is set."""
    if not environ.get("ANTHROPIC_API_KEY"):
        return "the scripted model (offline; set ANTHROPIC_API_KEY for Claude)"
    base_url = environ.get("ANTHROPIC_BASE_URL")
    if base_url:
        return f"Anthropic API at {base_url} (ANTHROPIC_BASE_URL), {AGENT.model}"
    return f"Claude, {AGENT.model} (ANTHROPIC_API_KEY is set)"


def choose_model() -> Provider:
    """Claude when ``ANTHROPIC_API_KEY`` is set (the SDK is imported only then), else the script."""
    if os.environ.get("ANTHROPIC_API_KEY"):
        from agentos import AnthropicProvider  # imported on first use: the SDK is slow to import

        return AnthropicProvider()
    return scripted_model()


def choose_board_model(provider: Provider) -> Provider:
    """A board session's model: ``provider`` (Claude) when a key is set, else its own script."""
    return provider if os.environ.get("ANTHROPIC_API_KEY") else board_model()


# ------------------------------------------------------------------ what the demo prints

START = time.monotonic()
DIM = sys.stdout.isatty()


def say(who: str, line: str, *, dim: bool = False) -> None:
    if dim and DIM:
        line = f"\x1b[2m{line}\x1b[0m"
    print(f"{time.monotonic() - START:5.1f}s  {who:<6} {line}", flush=True)


def _latest(status: Mapping[str, Any], *, quoted: bool = True) -> str:
    """The newest progress of a status answer, in words ('' when there is none)."""
    progress = status.get("progress") or []
    if not progress:
        return ""
    payload = progress[-1].get("payload")
    return payload if isinstance(payload, str) and not quoted else _plain(payload)


def _plain(value: object) -> str:
    """A JSON value as a line of text: strings quoted, objects as ``key=value``."""
    if isinstance(value, dict):
        return ", ".join(f"{key}={_plain(item)}" for key, item in value.items())
    if isinstance(value, list):
        return ", ".join(map(_plain, value))
    return json.dumps(value, ensure_ascii=False)


def _capability_answer(name: str, answer: Any) -> str:
    """A capability's answer in brief: ``running, latest: "..."``, ``cancelled (was running)``."""
    if not isinstance(answer, dict):
        return _plain(answer)
    error = answer.get("error")
    if isinstance(error, dict):  # a refusal; a status answer's "error" is the call's (or None)
        return f"error {error.get('code')}: {error.get('message')}"
    if name == "cancel_tool_call":
        done = "cancelled" if answer.get("cancelled") else "not cancelled"
        return f"{done} (was {answer.get('previous_status')})"
    if name == "list_running_tool_calls":
        calls = answer.get("tool_calls") or []
        return f"{len(calls)} running" + "".join(f", {call['tool_name']}" for call in calls)
    latest = _latest(answer)
    return str(answer.get("status")) + (f", latest: {latest}" if latest else "")


def _describe_capability(name: str, arguments: Mapping[str, Any]) -> str:
    """``cancel_tool_call(tool_call_id=toolu_..., reason="stalled")``: ids bare, the rest JSON."""
    parts = (
        f"{key}={value if key == 'tool_call_id' else json.dumps(value, ensure_ascii=False)}"
        for key, value in arguments.items()
    )
    return f"{name}({', '.join(parts)})"


def show_capabilities(who: str, session: Session, shown: set[str]) -> None:
    """A dim line for each capability call in the history not shown yet, with its answer."""
    answers = {
        str(block.get("tool_use_id")): answer_of(block)
        for message in session.history
        for block in blocks_of(message)
        if block.get("type") == "tool_result"
    }
    for use in _tool_uses(session.history):
        if use["name"] not in CAPABILITIES or use["id"] in shown or use["id"] not in answers:
            continue
        shown.add(use["id"])
        said = _capability_answer(use["name"], answers[use["id"]])
        say(who, f"· {_describe_capability(use['name'], use['input'])} -> {said}", dim=True)


async def _show_calls(runtime: Runtime, who: str, events: AsyncIterator[CallEvent]) -> None:
    """A line when one of the session's calls starts, logs a line, or ends."""
    names: dict[str, str] = {}
    async for event in events:
        if event.call_id not in names:
            call = runtime.status(event.call_id)
            names[event.call_id] = describe_call(call.tool_name, call.tool_input)
        if event.kind is CallEventKind.STARTED or event.status.is_final:
            say(who, f"· {names[event.call_id]} {event.kind.value}")
        elif event.progress is not None and event.progress.kind is ProgressKind.LOG:
            say(who, f"· {names[event.call_id]} logged: {event.progress.payload}")


@asynccontextmanager
async def watching(runtime: Runtime, *sessions: Session) -> AsyncIterator[None]:
    """Print the sessions' call events while the body runs."""
    async with anyio.create_task_group() as group:
        for session in sessions:
            await group.start(_watch, runtime, session.session_id)
        yield
        group.cancel_scope.cancel()


async def _watch(runtime: Runtime, session_id: str, *, task_status: TaskStatus[None]) -> None:
    async with runtime.subscribe(session_id) as events:
        task_status.started()
        await _show_calls(runtime, session_id, events)


async def talk(
    session: Session, who: str, message: str, shown: set[str], seconds: float = 30
) -> None:
    say(who, f"> {message}")
    before = len(session.replies)
    session.post(message)
    with anyio.move_on_after(seconds):
        await session.wait_idle()
    show_capabilities(who, session, shown)
    for reply in session.replies[before:]:
        if reply:
            say(who, f"< {reply}")


async def board_talk(session: Session, who: str, message: str, shown: set[int]) -> None:
    """Post to a board session and print its answer (a board turn may say nothing at first)."""
    say(who, f"> {message}")
    session.post(message)
    await board_answers(session, who, shown)


async def board_answers(session: Session, who: str, shown: set[int], seconds: float = 10) -> None:
    """Wait for the next thing the agent says in the session's chat, and print it."""
    new: list[ChatEntry] = []
    with anyio.move_on_after(seconds):
        while not new:
            await session.wait_idle()
            new = [
                entry
                for entry in session.chat
                if entry.role == "agent" and entry.text and entry.node_id not in shown
            ]
            if not new:
                await anyio.sleep(0.05)  # a background call's end wakes the board
    for entry in new:
        shown.add(entry.node_id)
        say(who, f"< {entry.text}")


def show_board(who: str, session: Session) -> None:
    """The board as the model reads it, once, under a heading."""
    board = session.board
    if board is None:
        return
    say("demo", f"{who}'s board (what the model reads):")
    for line in board.render().text.rstrip().split("\n"):
        print(f"{'':15}{line}", flush=True)


# ------------------------------------------------------------------ the two processes


async def first_process(path: Path) -> None:
    """Everything up to the crash; never returns (the process kills itself)."""
    provider = choose_model()
    say("demo", f"model: {which_model()}; database: {path}")
    shown: set[str] = set()
    async with (
        await SqliteStore.open(path) as store,
        Runtime(TOOLS) as runtime,
        Host(runtime, provider, store=store) as host,
    ):
        alice = await host.create_session(AGENT, session_id="alice")
        bob = await host.create_session(AGENT, session_id="bob")
        carol = await host.create_session(AGENT, session_id="carol")
        dana = await host.create_session(
            BOARD_AGENT, session_id="dana", provider=choose_board_model(provider)
        )
        async with watching(runtime, alice, bob, carol, dana):
            await talk(alice, "alice", "When can Jane, Jack and Joe meet?", shown)
            await talk(carol, "carol", "What's the weather in Oslo?", shown)
            await talk(alice, "alice", "While that runs: what is 2+2?", shown)
            before = len(alice.replies)
            with anyio.move_on_after(5):
                while len(alice.outstanding()) > 1 or not alice.idle:
                    await alice.wait_idle()
                    await anyio.sleep(0.05)
            for reply in alice.replies[before:]:
                say("alice", f"< {reply}")
            await talk(alice, "alice", "How is Joe's lookup going?", shown)
            await talk(alice, "alice", "Cancel Joe's lookup, it is stuck.", shown)
            said: set[int] = set()
            await board_talk(dana, "dana", "When can Ann and Ben meet?", said)
            await board_talk(dana, "dana", "While they run: what's the weather in Bergen?", said)
            await board_answers(dana, "dana", said)  # both lookups landed: one turn
            show_board("dana", dana)
            await talk(bob, "bob", "Write the quarterly report.", shown)
            await anyio.wait_all_tasks_blocked()  # the call lines are printed
            report = [call for call in bob.outstanding() if call.tool_name == "write_report"]
            say(
                "demo",
                f"bob's report is {report[0].status.value if report else '?'}; "
                "stopping the process now (SIGKILL)",
            )
            os.kill(os.getpid(), signal.SIGKILL)


async def second_process(path: Path) -> None:
    """A fresh process on the same file: what each call is now, and Bob's question."""
    provider = choose_model()
    say("demo", "a new process opens the same database")
    shown: set[str] = set()
    async with (
        await SqliteStore.open(path) as store,
        Runtime(TOOLS) as runtime,
        Host(runtime, provider, store=store) as host,
    ):
        alice = await host.resume("alice")
        bob = await host.resume("bob")
        async with watching(runtime, alice, bob):
            for who, session in (("alice", alice), ("bob", bob)):
                shown.update(use["id"] for use in _tool_uses(session.history))
                caller = Caller(session.session_id, conversation_id=session.session_id)
                for use in _tool_uses(session.history):
                    if use["name"] in TOOL_NAMES:
                        status = await host.toolbox.get_tool_call_status(caller, use["id"])
                        say(
                            who, f"  {describe_call(use['name'], use['input'])}: {status['status']}"
                        )
            await talk(bob, "bob", "Where is my report?", shown)


def main(argv: list[str] | None = None) -> None:
    """Run the first process as a child, then the second here; the temp folder goes either way."""
    argv = sys.argv[1:] if argv is None else argv
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    tune_gc()
    if argv[:1] == ["--first-process"]:
        anyio.run(first_process, Path(argv[1]))
        return
    with tempfile.TemporaryDirectory(prefix="agentos-demo-") as folder:
        path = Path(folder) / "agentos.db"
        command = [sys.executable, "-m", "agentos.demo", "--first-process", str(path)]
        child = subprocess.run(command, check=False)
        if child.returncode != -signal.SIGKILL:
            raise SystemExit(f"the first process ended with {child.returncode}, not SIGKILL")
        anyio.run(second_process, path)


if __name__ == "__main__":
    main()
