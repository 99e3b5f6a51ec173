"""The demo behind ``make run``: one host, three sessions, a restart in the middle.

Alice asks for three calendars at once (slow tools with progress; Joe's
stalls), asks something else while they run and is answered at once, checks
on Joe's call and cancels it. Carol's weather question is answered meanwhile.
Bob starts a long report; then the process is killed (SIGKILL) while it
runs. A fresh process opens the same SQLite file: Bob's report shows as
``orphaned``, Joe's lookup stays ``cancelled``. The model is scripted and
offline unless ``ANTHROPIC_API_KEY`` is set; the demo says which.
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
from collections.abc import Callable
from pathlib import Path

import anyio
import structlog
from pydantic import BaseModel, Field

from agentos._agent_config import AgentConfig, YieldOnTimeout
from agentos._context import ToolContext
from agentos._gc import tune_gc
from agentos._host import Host
from agentos._provider import (
    ModelRequest,
    ModelResponse,
    Provider,
    ScriptedProvider,
    last_tool_results,
    last_user_text,
    text,
    tool_calls,
)
from agentos._runtime import Runtime
from agentos._scope import Caller
from agentos._session import Session
from agentos._sqlite_store import SqliteStore
from agentos._tools import tool
from agentos.demo_tools import weather


class CalendarRequest(BaseModel):
    person: str = Field(description="Whose calendar to read")
    seconds: float = Field(default=1.5, gt=0, le=60, description="How long the lookup takes")
    stall_at: int | None = Field(default=None, description="Percent at which the lookup hangs")


class ReportRequest(BaseModel):
    pages: int = Field(default=60, gt=0, le=1000)


@tool
async def fetch_calendar(args: CalendarRequest, ctx: ToolContext) -> dict[str, object]:
    """Read someone's calendar (slowly), reporting progress as it goes."""
    for step in range(1, 6):
        percent = step * 20
        if args.stall_at is not None and percent >= args.stall_at:
            ctx.log(f"{args.person}'s calendar server stopped answering")
            await anyio.sleep_forever()
        await anyio.sleep(args.seconds / 5)
        ctx.progress({"percent": percent})
    return {"person": args.person, "free": ["10:00-11:00", "15:00-16:00"]}


@tool
def write_report(args: ReportRequest, ctx: ToolContext) -> str:
    """Write a long report page by page, in a worker thread."""
    for page in range(1, args.pages + 1):
        if ctx.wait_cancelled(1.0):
            return "stopped early"
        ctx.progress({"page": page, "of": args.pages})
    return f"{args.pages} pages written"


TOOL_NAMES = {"fetch_calendar", "write_report", "weather"}
AGENT = AgentConfig(
    name="demo",
    system_prompt="You help people plan. Tools are slow; keep talking while they run.",
    async_yield_strategy=YieldOnTimeout(milliseconds=300),
)


# ------------------------------------------------------------------ the scripted model


def _asked(phrase: str) -> Callable[[ModelRequest], bool]:
    return lambda r: phrase in last_user_text(r).lower() and not last_tool_results(r)


def _call_of(request: ModelRequest, person: str) -> str:
    for message in request.messages:
        for block in message["content"] if isinstance(message["content"], list) else ():
            if block.get("type") == "tool_use" and block["input"].get("person") == person:
                return str(block["id"])
    return "unknown"


def _results_said(request: ModelRequest) -> ModelResponse:
    said = []
    running = 0
    for block in last_tool_results(request):
        content = str(block.get("content"))
        if "agentos_placeholder" in content:
            running += 1
        elif content.startswith("{") and '"status"' in content:
            status = json.loads(content)
            latest = status["progress"][-1]["payload"] if status.get("progress") else None
            said.append(f"that call is {status['status']} (latest: {latest})")
        elif content.startswith("{") and '"cancelled"' in content:
            said.append(f"cancel took: {json.loads(content)['cancelled']}")
        else:
            said.append(content)
    if running:
        said.append(f"{running} still running; I will tell you as they finish")
    return text("; ".join(said))


def _outcomes_said(request: ModelRequest) -> ModelResponse:
    said = []
    for line in last_user_text(request).split("[tool call ")[1:]:
        if "finished: completed] result: " in line:
            result = json.loads(line.split("result: ", 1)[1])
            if isinstance(result, dict) and "person" in result:
                said.append(f"{result['person']} is free {' and '.join(result['free'])}")
            else:
                said.append(str(result))
        elif "finished:" in line:
            said.append(line.split("] ", 1)[0].split("finished: ")[1])
    return text("; ".join(said) + ".")


def scripted_model() -> ScriptedProvider:
    """Rules that play the model's part offline, the same way every time."""
    return ScriptedProvider(
        (
            _asked("jane, jack and joe"),
            lambda r: tool_calls(
                ("fetch_calendar", {"person": "Jane"}),
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


def choose_model() -> tuple[Provider, str]:
    if os.environ.get("ANTHROPIC_API_KEY"):
        from agentos._anthropic import AnthropicProvider  # the SDK is slow to import

        return AnthropicProvider(), "Claude (ANTHROPIC_API_KEY is set)"
    return scripted_model(), "the scripted model (offline; set ANTHROPIC_API_KEY for Claude)"


# ------------------------------------------------------------------ the two processes

START = time.monotonic()


def say(who: str, line: str) -> None:
    print(f"{time.monotonic() - START:5.1f}s  {who:<6} {line}", flush=True)


async def talk(session: Session, who: str, message: str, seconds: float = 30) -> None:
    say(who, f"> {message}")
    before = len(session.replies)
    session.post(message)
    with anyio.move_on_after(seconds):
        await session.wait_idle()
    for reply in session.replies[before:]:
        if reply:
            say(who, f"< {reply}")


async def first_process(path: Path) -> None:
    """Everything up to the crash; never returns (the process kills itself)."""
    provider, which = choose_model()
    say("demo", f"model: {which}; database: {path}")
    async with (
        await SqliteStore.open(path) as store,
        Runtime([fetch_calendar, write_report, weather]) as runtime,
        Host(runtime, provider, store=store) as host,
    ):
        alice = await host.create_session(AGENT, session_id="alice")
        bob = await host.create_session(AGENT, session_id="bob")
        carol = await host.create_session(AGENT, session_id="carol")
        await talk(alice, "alice", "When can Jane, Jack and Joe meet?")
        await talk(carol, "carol", "What's the weather in Oslo?")
        await talk(alice, "alice", "While that runs: what is 2+2?")
        before = len(alice.replies)
        with anyio.move_on_after(5):
            while len(alice.outstanding()) > 1 or not alice.idle:
                await alice.wait_idle()
                await anyio.sleep(0.05)
        for reply in alice.replies[before:]:
            say("alice", f"< {reply}")
        await talk(alice, "alice", "How is Joe's lookup going?")
        await talk(alice, "alice", "Cancel Joe's lookup, it is stuck.")
        await talk(bob, "bob", "Write the quarterly report.")
        report = [call for call in bob.outstanding() if call.tool_name == "write_report"]
        say(
            "demo",
            f"bob's report is {report[0].status.value if report else '?'}; "
            "stopping the process now (SIGKILL)",
        )
        os.kill(os.getpid(), signal.SIGKILL)


async def second_process(path: Path) -> None:
    provider, _ = choose_model()
    say("demo", "a new process opens the same database")
    async with (
        await SqliteStore.open(path) as store,
        Runtime([fetch_calendar, write_report, weather]) as runtime,
        Host(runtime, provider, store=store) as host,
    ):
        alice = await host.resume("alice")
        bob = await host.resume("bob")
        for who, session in (("alice", alice), ("bob", bob)):
            caller = Caller(session.session_id, conversation_id=session.session_id)
            for message in session.history:
                for block in message["content"] if isinstance(message["content"], list) else ():
                    if block.get("type") != "tool_use" or block["name"] not in TOOL_NAMES:
                        continue
                    status = await host.toolbox.get_tool_call_status(caller, block["id"])
                    detail = block["input"].get("person") or block["name"]
                    say(who, f"  call {block['name']}({detail}): {status['status']}")
        await talk(bob, "bob", "Where is my report?")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    tune_gc()
    if argv[:1] == ["--first-process"]:
        anyio.run(first_process, Path(argv[1]))
        return
    folder = Path(tempfile.mkdtemp(prefix="agentos-demo-"))
    path = folder / "agentos.db"
    child = subprocess.run([sys.executable, "-m", "agentos.demo", "--first-process", str(path)])
    if child.returncode != -signal.SIGKILL:
        raise SystemExit(f"the first process ended with {child.returncode}, not SIGKILL")
    anyio.run(second_process, path)


if __name__ == "__main__":
    main()
