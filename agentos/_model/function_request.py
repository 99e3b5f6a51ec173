"""What a model you script as a Python function reads: the conversation in plain entries.

A ``ModelRequest`` holds Messages API dicts, in which agentos writes its notes as text
(a placeholder for a call still running, a late outcome, an overdue nudge). A
``FunctionRequest`` reads them back as ``Said``, ``ToolCall`` and ``ToolResult`` entries,
so a script matches on what happened rather than on wording. agentos/_turns/transcript.py
writes those texts; this module sits below it and reads them with the marks both import
from agentos/_model/transcript_marks.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from types import MappingProxyType
from typing import Any
from typing import Literal

from agentos._model.messages import Block
from agentos._model.messages import blocks_of
from agentos._model.messages import content_value
from agentos._model.provider import ModelRequest
from agentos._model.transcript_marks import LOST_RESULT
from agentos._model.transcript_marks import OUTCOME
from agentos._model.transcript_marks import OVERDUE
from agentos._model.transcript_marks import PLACEHOLDER_KEY
from components import CallStatus
from components import Json


@dataclass(frozen=True, slots=True)
class Said:
    """Words in the conversation: a person's (``who="user"``), the model's own
    (``"model"``), or a note the runtime wrote to the model (``"runtime"``: a call that runs
    past its expected time, whose id ``call_id`` holds)."""

    who: Literal["user", "model", "runtime"]
    text: str
    call_id: str = ""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call: what a reply asks for (``ToolCall("fetch", {"url": ...})``), and a call
    the model made, as the conversation shows it (with the ``call_id`` the model knows it by,
    which the capabilities take: ``ToolCall("cancel_tool_call", {"tool_call_id": ...})``).
    A reply may leave ``call_id`` empty: agentos gives the call a fresh one."""

    tool: str
    input: Mapping[str, Any] = field(default_factory=dict)
    call_id: str = ""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What the conversation told the model of a call: its outcome, or that it still runs.

    ``status`` is ``running`` or ``pending`` while the call runs (the runtime's placeholder:
    its words in ``note``, a deferred call's ``token``), then ``completed`` with ``value``
    (the result, parsed when it is JSON), or ``failed``, ``cancelled`` or ``orphaned`` with
    ``error``. ``late``: told in a message of its own, after the call's placeholder. A
    capability's answer (``get_tool_call_status``, ``cancel_tool_call``) is the ``value``
    of its own call's result.
    """

    call_id: str
    tool: str
    status: CallStatus
    value: Json = None
    error: str | None = None
    late: bool = False
    note: str = ""
    token: str | None = None

    @property
    def is_final(self) -> bool:
        """Whether this told the call's end (not a placeholder for a call still running)."""
        return self.status.is_final


Entry = Said | ToolCall | ToolResult
"""One entry of a ``FunctionRequest``'s conversation."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool the model may call, as the request offers it: the session's capabilities
    (``cancel_tool_call``, ...) are offered like any other tool."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class FunctionRequest:
    """What a model function is asked, every turn: the whole conversation so far, in order
    (``messages``), the tools it may call by name (``tools``), the system prompt, and the
    request as agentos sends a model (``model_request``: a board session's is one user
    message drawing the board, which ``agentos.testing.board_turn`` reads; None in one a
    test builds by hand, ``FunctionRequest((Said("user", "hi"),))``, to call a function)."""

    messages: tuple[Entry, ...]
    tools: Mapping[str, ToolSpec] = field(default_factory=lambda: MappingProxyType({}))
    system: str = ""
    session_id: str = ""
    model_request: ModelRequest | None = None

    @classmethod
    def of(cls, request: ModelRequest) -> FunctionRequest:
        """``request`` read into entries."""
        offered = {}
        for definition in request.tools:
            name = str(definition.get("name", ""))
            offered[name] = ToolSpec(
                name,
                str(definition.get("description", "")),
                MappingProxyType(dict(definition.get("input_schema") or {})),
            )
        return cls(
            tuple(_entries(request.messages)),
            MappingProxyType(offered),
            request.system,
            request.session_id,
            request,
        )

    @property
    def new(self) -> tuple[Entry, ...]:
        """What the model has not answered yet: the entries since it last said or called
        anything (all of them on the first turn)."""
        for index in range(len(self.messages) - 1, -1, -1):
            entry = self.messages[index]
            if isinstance(entry, ToolCall) or (isinstance(entry, Said) and entry.who == "model"):
                return self.messages[index + 1 :]
        return self.messages

    @property
    def user_text(self) -> str:
        """What the person said since the model last spoke, lines joined ('' if nothing)."""
        return "\n".join(e.text for e in self.new if isinstance(e, Said) and e.who == "user")

    def calls(self, tool: str | None = None) -> list[ToolCall]:
        """The calls the model made, in order (only those of ``tool`` when given)."""
        return [
            entry
            for entry in self.messages
            if isinstance(entry, ToolCall) and (tool is None or entry.tool == tool)
        ]

    def running(self, tool: str | None = None) -> list[ToolCall]:
        """The calls the model was told are still running (or pending) and has not heard
        the end of since, by a late outcome or a capability's answer."""
        ends = _ends(self.messages)
        return [call for call in self.calls(tool) if ends.get(call.call_id) is False]


def _entries(messages: Sequence[Mapping[str, Any]]) -> Iterator[Entry]:
    names: dict[str, str] = {}
    for message in messages:
        for block in blocks_of(message):
            kind = block.get("type")
            if message.get("role") == "assistant":
                if kind == "text" and block.get("text"):
                    yield Said("model", str(block["text"]))
                elif kind == "tool_use":
                    call_id = str(block.get("id", ""))
                    names[call_id] = str(block.get("name", ""))
                    arguments = block.get("input")
                    yield ToolCall(names[call_id], dict(arguments or {}), call_id)
            elif kind == "tool_result":
                yield _result(block, names)
            elif kind == "text":
                yield _said(str(block.get("text", "")))


def _said(text: str) -> Entry:
    """A user message's text: a late outcome, an overdue nudge, or what a person wrote."""
    outcome = OUTCOME.match(text)
    if outcome is not None:
        status = CallStatus(outcome["status"])
        if outcome["kind"] == "result":
            return ToolResult(
                outcome["id"], outcome["tool"], status, content_value(outcome["rest"]), late=True
            )
        return ToolResult(outcome["id"], outcome["tool"], status, error=outcome["rest"], late=True)
    overdue = OVERDUE.match(text)
    if overdue is not None:
        return Said("runtime", text, overdue["id"])
    return Said("user", text)


def _result(block: Block, names: Mapping[str, str]) -> ToolResult:
    call_id = str(block.get("tool_use_id", ""))
    tool = names.get(call_id, "")
    value = content_value(block.get("content"))
    if isinstance(value, dict) and value.get(PLACEHOLDER_KEY) is True:
        status = CallStatus.PENDING if value.get("status") == "pending" else CallStatus.RUNNING
        token = value.get("continuation_token")
        return ToolResult(
            call_id,
            tool,
            status,
            note=str(value.get("note", "")),
            token=token if isinstance(token, str) else None,
        )
    if not block.get("is_error"):
        return ToolResult(call_id, tool, CallStatus.COMPLETED, value)
    error = value if isinstance(value, str) else json.dumps(value)
    if error == LOST_RESULT:
        status = CallStatus.ORPHANED
    elif error.startswith(CallStatus.CANCELLED.value):
        status = CallStatus.CANCELLED
    else:
        status = CallStatus.FAILED
    return ToolResult(call_id, tool, status, error=error)


def _ends(messages: Sequence[Entry]) -> dict[str, bool]:
    """Each call's id -> whether the model has heard it ended (False: told it runs)."""
    ends: dict[str, bool] = {}
    for entry in messages:
        if not isinstance(entry, ToolResult):
            continue
        ends[entry.call_id] = entry.is_final
        if isinstance(entry.value, dict) and entry.status is CallStatus.COMPLETED:
            named = _ended_by(entry.tool, entry.value)  # the id the model knows it by
            if named is not None:
                ends[named] = True
    return ends


def _ended_by(capability: str, answer: Mapping[str, Json]) -> str | None:
    """The call a capability's answer says has ended (None: it says no such thing)."""
    named = answer.get("tool_call_id")
    if not isinstance(named, str):
        return None
    if capability == "cancel_tool_call" and answer.get("cancelled") is True:
        return named
    if capability == "get_tool_call_status" and answer.get("is_final") is True:
        return named
    return None
