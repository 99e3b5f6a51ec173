"""The tools and the offline model behind the ``agentos`` command line.

Importing this module only defines things: ``TOOLS`` (a slow calendar lookup
that reports progress, an approval meant to be deferred, a quick weather
report), ``DEFAULT_AGENT`` (``approve`` deferred; the turn yields after half
a second) and ``scripted_model()``, the rules that stand in for Claude when
no API key is set. The rules read the prompt: "calendar" calls
``fetch_calendar`` for every person named (a duration such as "0.3s" in the
prompt sets how long each lookup takes), "approve"/"approval" calls
``approve``, "weather in <City>" calls ``weather``; anything else gets a
text answer. Results and late outcomes are summed up in plain words.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from typing import Any

import anyio
from pydantic import BaseModel, Field

from agentos._agent_config import AgentConfig, Disposition, ToolPolicy, YieldOnTimeout
from agentos._context import ToolContext
from agentos._provider import (
    Block,
    ModelRequest,
    ModelResponse,
    ScriptedProvider,
    last_tool_results,
    last_user_blocks,
    text,
)
from agentos._tools import Tool, tool
from agentos._transcript import PLACEHOLDER_KEY, Outcome, content_value, read_outcome
from components import CallStatus


class CalendarRequest(BaseModel):
    person: str = Field(min_length=1, description="Whose calendar to read")
    seconds: float = Field(default=3.0, gt=0, le=60, description="How long the lookup takes")


class ApprovalRequest(BaseModel):
    request: str = Field(min_length=1, description="What needs a human's approval")


class WeatherRequest(BaseModel):
    city: str = Field(min_length=1, description="The city")


@tool
async def fetch_calendar(args: CalendarRequest, ctx: ToolContext) -> dict[str, object]:
    """Read someone's calendar (slowly), reporting percent progress as it goes."""
    steps = 5
    for step in range(1, steps + 1):
        await anyio.sleep(args.seconds / steps)
        ctx.progress({"percent": step * 100 // steps, "person": args.person})
    return {"person": args.person, "free": ["10:00-11:00", "15:00-16:00"]}


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


TOOLS: tuple[Tool[Any], ...] = (fetch_calendar, approve, weather)

DEFAULT_AGENT = AgentConfig(
    name="demo",
    system_prompt=(
        "You are a helpful assistant. Calendar lookups are slow and run in the background; "
        "approvals wait for a human."
    ),
    policy=ToolPolicy(rules={"approve": Disposition.DEFER}),
    async_yield_strategy=YieldOnTimeout(milliseconds=500),
)
"""``approve`` is deferred; a turn waits at most half a second for its calls."""


# ---------------------------------------------------------------------- the scripted model

_NOT_NAMES = frozenset(
    """a about and approval approve ask calendar calendars can check compare could do does
    fetch find for get how i in is it let look me my of on our please read see show tell the
    their then to weather what when where which who will would you""".split()  # noqa: SIM905
)
_NAME = re.compile(r"\b([A-Z][a-z]+)(?:'s)?\b")
_SECONDS = re.compile(r"(\d+(?:\.\d+)?)\s*(?:s|secs?|seconds?)\b")
_CITY = re.compile(r"weather (?:in|for|at) ([A-Z][\w-]*(?: [A-Z][\w-]*)*)")


def scripted_model() -> ScriptedProvider:
    """The offline stand-in for Claude that the command line uses without an API key."""
    return ScriptedProvider(
        (lambda r: bool(last_tool_results(r)), _sum_up_results),
        (lambda r: bool(_notices(r)), _sum_up_notices),
        (lambda r: bool(_plan(_user_text(r))), lambda r: _call_tools(_user_text(r))),
        (lambda r: True, _chat),
        keep_requests=False,
    )


def _user_text(request: ModelRequest) -> str:
    return " ".join(
        str(b.get("text", "")) for b in last_user_blocks(request) if b.get("type") == "text"
    )


def _notices(request: ModelRequest) -> list[Outcome]:
    texts = [str(b.get("text", "")) for b in last_user_blocks(request) if b.get("type") == "text"]
    return [found for found in map(read_outcome, texts) if found is not None]


def _plan(prompt: str) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls a prompt asks for."""
    calls: list[tuple[str, dict[str, Any]]] = []
    lowered = prompt.lower()
    if "calendar" in lowered:
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
    return calls


def _call_tools(prompt: str) -> ModelResponse:
    calls = _plan(prompt)
    content: list[Block] = [
        {"type": "text", "text": "On it: " + ", ".join(_describe(n, a) for n, a in calls) + "."}
    ]
    content.extend(
        {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:24]}", "name": name, "input": args}
        for name, args in calls
    )
    return ModelResponse(content, "tool_use")


def _describe(name: str, arguments: Mapping[str, Any]) -> str:
    detail = ", ".join(str(value) for value in arguments.values())
    return f"{name}({detail})"


def _sum_up_results(request: ModelRequest) -> ModelResponse:
    names: dict[str, str] = {}
    for message in request.messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_use":
                names[str(block.get("id"))] = str(block.get("name"))
    lines = []
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
                lines.append(f"{name} is still running ({value.get('tool_call_id')}).")
        elif block.get("is_error"):
            lines.append(f"{name} failed: {value}")
        else:
            lines.append(f"{name}: {_brief(value)}")
    return text(" ".join(lines))


def _sum_up_notices(request: ModelRequest) -> ModelResponse:
    lines = []
    for notice in _notices(request):
        if notice.status is CallStatus.ORPHANED:
            lines.append(f"{notice.tool_name} ({notice.tool_use_id}) was lost in a restart.")
        else:
            lines.append(f"{notice.tool_name} finished ({notice.status}): {_brief(notice.value)}")
    return text(" ".join(lines))


def _chat(request: ModelRequest) -> ModelResponse:
    prompt = _user_text(request).strip()
    return text(
        f"You said: {prompt!r}. (The scripted model only knows calendars, "
        "the weather and approvals; set ANTHROPIC_API_KEY for Claude.)"
    )


def _brief(value: object) -> str:
    if isinstance(value, dict) and "person" in value and "free" in value:
        return f"{value['person']} is free {', '.join(map(str, value['free']))}."
    if isinstance(value, dict) and "sky" in value:
        return f"{value.get('city')}: {value['sky']}, {value.get('celsius')} C."
    return value if isinstance(value, str) else json.dumps(value)
