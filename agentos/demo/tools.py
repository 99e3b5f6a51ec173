"""The tools and the offline model shared by ``make run`` (``agentos.demo``) and the CLI.

One set of tools, so what the demo shows can be typed at ``agentos run``.
Importing this module only defines things: ``TOOLS`` (``fetch_calendar``, a
slow calendar lookup that reports progress and, with ``stall_at``, hangs
like a server that stopped answering; ``write_report``, a sync tool that
writes a page a second in a worker thread until cancelled; ``approve``, an
approval meant to be deferred; ``weather``, a quick made-up report),
``DEFAULT_AGENT`` (``approve`` deferred; the turn yields after half a
second), ``describe_call`` and ``brief`` (a call and a result in plain
words) and ``scripted_model()``, the rules that stand in for Claude when no
API key is set. The rules read the prompt: "calendar", "meet" or "free" calls
``fetch_calendar`` for every person named (a duration such as "0.3s" in the
prompt sets how long each lookup takes), "approve"/"approval" calls
``approve``, "weather in <City>" calls ``weather``, "write a report" calls
``write_report`` ("5 pages" sets its length); anything else gets a text
answer. Results and late outcomes are summed up in plain words.
"""

from __future__ import annotations

import ast
import json
import re
import uuid
from collections import Counter
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

import anyio
from pydantic import BaseModel
from pydantic import Field

from agentos._board.reading import BoardTurn
from agentos._board.reading import read_turn
from agentos._kernel.context import ToolContext
from agentos._kernel.tools import Tool
from agentos._kernel.tools import tool
from agentos._model.messages import Block
from agentos._model.messages import content_value
from agentos._model.messages import text_of
from agentos._model.provider import ModelRequest
from agentos._model.provider import ModelResponse
from agentos._model.provider import ScriptedProvider
from agentos._model.provider import last_tool_results
from agentos._model.provider import last_user_blocks
from agentos._model.provider import text
from agentos._turns.agent_config import AgentConfig
from agentos._turns.tool_policy import Disposition
from agentos._turns.tool_policy import ToolPolicy
from agentos._turns.tool_policy import YieldOnTimeout
from agentos._turns.transcript import PLACEHOLDER_KEY
from agentos._turns.transcript import Outcome
from agentos._turns.transcript import read_outcome
from agentos._turns.transcript import read_overdue
from components import CallStatus


class CalendarRequest(BaseModel):
    person: str = Field(min_length=1, description="Whose calendar to read")
    seconds: float = Field(default=3.0, gt=0, le=60, description="How long the lookup takes")
    stall_at: int | None = Field(
        default=None,
        gt=0,
        le=100,
        description="Percent at which the lookup hangs, like a server that stopped answering",
    )


class ReportRequest(BaseModel):
    pages: int = Field(default=60, gt=0, le=1000, description="How many pages (a second each)")


class ApprovalRequest(BaseModel):
    request: str = Field(min_length=1, description="What needs a human's approval")


class WeatherRequest(BaseModel):
    city: str = Field(min_length=1, description="The city")


@tool
async def fetch_calendar(args: CalendarRequest, ctx: ToolContext) -> dict[str, object]:
    """Read someone's calendar (slowly), reporting percent progress as it goes.

    With ``stall_at``, the lookup logs that the server stopped answering once it
    would reach that percent, and hangs until it is cancelled.
    """
    steps = 5
    for step in range(1, steps + 1):
        percent = step * 100 // steps
        if args.stall_at is not None and percent >= args.stall_at:
            ctx.log(f"{args.person}'s calendar server stopped answering")
            await anyio.sleep_forever()
        await anyio.sleep(args.seconds / steps)
        ctx.progress({"percent": percent, "person": args.person})
    return {"person": args.person, "free": ["10:00-11:00", "15:00-16:00"]}


@tool
def write_report(args: ReportRequest, ctx: ToolContext) -> str:
    """Write a long report, a page a second, in a worker thread; stops early when cancelled."""
    for page in range(1, args.pages + 1):
        if ctx.wait_cancelled(1.0):
            return f"stopped after {page - 1} of {args.pages} pages"
        ctx.progress({"page": page, "of": args.pages})
    return f"{args.pages} {'page' if args.pages == 1 else 'pages'} written"


@tool
def approve(args: ApprovalRequest) -> dict[str, object]:
    """Ask a human to approve a request. Meant for the ``defer`` disposition: a person
    completes it later with its continuation token (``agentos complete TOKEN``).
    Run directly, it approves nothing."""
    return {"approved": False, "request": args.request, "note": "nobody was asked (not deferred)"}


@tool
def weather(args: WeatherRequest) -> dict[str, object]:
    """Today's weather for a city (made up, but always the same for one city)."""
    skies = ("clear", "cloudy", "rain", "snow", "fog")
    seed = sum(map(ord, args.city.lower()))
    return {"city": args.city, "sky": skies[seed % len(skies)], "celsius": seed % 30 - 5}


TOOLS: tuple[Tool[Any], ...] = (fetch_calendar, write_report, approve, weather)

DEFAULT_AGENT = AgentConfig(
    name="demo",
    system_prompt=(
        "You are a helpful assistant. Calendar lookups and reports are slow and run in the "
        "background; approvals wait for a human."
    ),
    policy=ToolPolicy(rules={"approve": Disposition.DEFER}),
    async_yield_strategy=YieldOnTimeout(milliseconds=500),
)
"""``approve`` is deferred; a turn waits at most half a second for its calls."""


# ---------------------------------------------------------------------- the scripted model

_NOT_NAMES = frozenset(
    """a about and approval approve ask calendar calendars can check compare could do does
    fetch find for free get how i in is it let look me meet my of on our please read see show
    tell the
    their then to weather what when where which who will would you""".split()  # noqa: SIM905
)
_BOARD_SYSTEM = "comes to you as a message board"
"""Words of the board's notation in a board request's system prompt."""
_NAME = re.compile(r"\b([A-Z][a-z]+)(?:'s)?\b")
_SECONDS = re.compile(r"(\d+(?:\.\d+)?)\s*(?:s|secs?|seconds?)\b")
_CITY = re.compile(r"weather (?:in|for|at) ([A-Z][\w-]*(?: [A-Z][\w-]*)*)")
_REPORT = re.compile(r"\b(?:write|draft|prepare)\b.*\breport\b", re.IGNORECASE)
_PAGES = re.compile(r"(\d+)\s*pages?\b")
_SUBJECTS = ("person", "city", "request")
"""Arguments ``describe_call`` shows bare: they name what the call is about."""


def scripted_model() -> ScriptedProvider:
    """The offline stand-in for Claude that the command line uses without an API key."""
    return ScriptedProvider(
        (lambda r: _board_turn(r) is not None, _answer_on_the_board),
        (lambda r: bool(last_tool_results(r)), _then_what_was_asked(_sum_up_results)),
        (lambda r: bool(_notices(r)), _then_what_was_asked(_sum_up_notices)),
        (lambda r: bool(_plan(_user_text(r))), lambda r: _call_tools(_user_text(r))),
        (lambda r: True, _chat),
        keep_requests=False,
    )


def _user_text(request: ModelRequest) -> str:
    """What the person wrote in the last message: its text, less the news it brings."""
    texts = [str(b.get("text", "")) for b in last_user_blocks(request) if b.get("type") == "text"]
    return " ".join(t for t in texts if read_outcome(t) is None and read_overdue(t) is None)


def _notices(request: ModelRequest) -> list[Outcome]:
    texts = [str(b.get("text", "")) for b in last_user_blocks(request) if b.get("type") == "text"]
    return [found for found in map(read_outcome, texts) if found is not None]


def _plan(prompt: str) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls a prompt asks for."""
    calls: list[tuple[str, dict[str, Any]]] = []
    lowered = prompt.lower()
    if "calendar" in lowered or re.search(r"\b(?:meet|free)\b", lowered):
        seconds = _SECONDS.search(prompt)
        timing = {"seconds": min(60.0, float(seconds.group(1)))} if seconds else {}
        cities = {m.group(1) for m in _CITY.finditer(prompt)}
        people = [
            name
            for name in dict.fromkeys(_NAME.findall(prompt))
            if name.lower() not in _NOT_NAMES and name not in cities
        ]
        for person in people or ["me"]:
            calls.append(("fetch_calendar", {"person": person, **timing}))
    if "approv" in lowered:
        calls.append(("approve", {"request": prompt.strip()}))
    for match in _CITY.finditer(prompt):
        calls.append(("weather", {"city": match.group(1)}))
    if _REPORT.search(prompt):
        pages = _PAGES.search(prompt)
        calls.append(("write_report", {"pages": min(1000, int(pages.group(1)))} if pages else {}))
    return calls


def _call_tools(prompt: str) -> ModelResponse:
    calls = _plan(prompt)
    content: list[Block] = [
        {"type": "text", "text": "On it: " + ", ".join(describe_call(n, a) for n, a in calls) + "."}
    ]
    content.extend(
        {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:24]}", "name": name, "input": args}
        for name, args in calls
    )
    return ModelResponse(content, "tool_use")


def describe_call(name: str, arguments: Mapping[str, Any]) -> str:
    """A call as a person reads it: ``fetch_calendar(Jane, seconds=1.5)``, ``weather(Oslo)``.

    What the call is about (a person, a city, a request) comes first and bare;
    the rest are ``key=value`` with JSON values, so nothing prints as a Python repr.
    """
    parts = [str(arguments[key]) for key in _SUBJECTS if isinstance(arguments.get(key), str)]
    parts.extend(
        f"{key}={json.dumps(value, ensure_ascii=False)}"
        for key, value in arguments.items()
        if not (key in _SUBJECTS and isinstance(value, str))
    )
    return f"{name}({', '.join(parts)})"


def _sum_up_results(request: ModelRequest) -> ModelResponse:
    names: dict[str, str] = {}
    for message in request.messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_use":
                names[str(block.get("id"))] = str(block.get("name"))
    lines = []
    running: Counter[str] = Counter()  # a tool's calls still running, told in one line
    for block in last_user_blocks(request):
        if block.get("type") != "tool_result":
            continue
        name = names.get(str(block.get("tool_use_id")), "a tool")
        value = content_value(block.get("content"))
        if isinstance(value, dict) and value.get(PLACEHOLDER_KEY) is True:
            token = value.get("continuation_token")
            if token is not None:
                lines.append(f"{name} waits for a human: continuation token {token}.")
            else:
                running[name] += 1
        elif block.get("is_error"):
            lines.append(f"{name} failed: {value}")
        else:
            lines.append(f"{name}: {brief(value)}")
    lines.extend(
        f"{name} is still running." if count == 1 else f"{count} calls of {name} are still running."
        for name, count in running.items()
    )
    return text(" ".join(lines))


def _sum_up_notices(request: ModelRequest) -> ModelResponse:
    lines = []
    for notice in _notices(request):
        if notice.status is CallStatus.ORPHANED:
            lines.append(f"{notice.tool_name} ({notice.tool_use_id}) was lost in a restart.")
        else:
            lines.append(f"{notice.tool_name} finished ({notice.status}): {brief(notice.value)}")
    return text(" ".join(lines))


def _then_what_was_asked(
    news: Callable[[ModelRequest], ModelResponse],
) -> Callable[[ModelRequest], ModelResponse]:
    """``news`` (results or notices a message brings) told first, then what the person wrote
    in the same message answered as if it came alone: news never drops a person's words."""

    def answer(request: ModelRequest) -> ModelResponse:
        told = news(request)
        asked = _user_text(request)
        if not asked.strip():
            return told
        then = _call_tools(asked) if _plan(asked) else _chat_about(asked.strip())
        first, *rest = then.content
        news_said = text_of(told.content)
        end = "" if news_said.endswith((".", "!", "?")) else "."
        said = f"{news_said}{end} {first['text']}"
        return ModelResponse([{"type": "text", "text": said}, *rest], then.stop_reason)

    return answer


def _board_turn(request: ModelRequest) -> BoardTurn | None:
    """The node a board request's turn is for (None: not a board turn)."""
    if len(request.messages) != 1 or _BOARD_SYSTEM not in request.system:
        return None
    blocks = last_user_blocks(request)
    return read_turn("".join(str(b.get("text", "")) for b in blocks))


def _answer_on_the_board(request: ModelRequest) -> ModelResponse:
    """A board session's turn: the user's node read as a prompt, or its calls summed up."""
    turn = _board_turn(request)
    assert turn is not None
    if turn.author == "user":
        prompt = turn.text
        return _call_tools(prompt) if _plan(prompt) else _chat_about(prompt)
    said = [brief(_outcome_of(line)) for line in turn.calls if " completed: " in line]
    return text(" ".join(said) or "Noted.")


def _outcome_of(call_line: str) -> object:
    """A completed call line's outcome: its JSON value, or its words."""
    said = str(ast.literal_eval(call_line.split(" completed: ", 1)[1].strip()))
    try:
        return json.loads(said)
    except ValueError:
        return said


def _chat(request: ModelRequest) -> ModelResponse:
    return _chat_about(_user_text(request).strip())


def _chat_about(prompt: str) -> ModelResponse:
    return text(
        f"You said: {prompt!r}. (The scripted model only knows calendars, "
        "the weather, reports and approvals; set ANTHROPIC_API_KEY for Claude.)"
    )


def brief(value: object) -> str:
    """A tool's result in plain words: "Oslo: clear, 20 °C.", "Jane is free 10:00-11:00, ..."."""
    if isinstance(value, dict) and "person" in value and "free" in value:
        return f"{value['person']} is free {', '.join(map(str, value['free']))}."
    if isinstance(value, dict) and "sky" in value:
        return f"{value.get('city')}: {value['sky']}, {value.get('celsius')} °C."
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def answer_of(block: Mapping[str, Any]) -> Any:
    """What a ``tool_result`` block holds: its JSON value, or its text when it is not JSON."""
    content = block.get("content")
    if isinstance(content, list):
        content = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    try:
        return json.loads(str(content))
    except ValueError:
        return content


if __name__ == "__main__":
    from agentos.demo import not_a_program

    raise not_a_program(__spec__.name, "the demo's tools and scripted model")
