"""Helpers for testing code built on agentos: a tool the test drives, settling, scripts.

``Puppet`` is a tool whose calls do exactly what the test tells them, when it
tells them: report progress, complete or fail; until told, they wait (and
honour cancellation). ``settle`` lets the runtime apply everything queued.
``HeldProvider`` keeps a model busy until the test lets it answer;
``FailingProvider`` is a model that is down, ``FullDiskStore`` a store that
refuses every commit. A test's model traffic can be recorded once and replayed offline
(``RecordedConversation``, the ``agentos_cassette`` fixture of agentos's pytest plugin).
``MessagesStandIn`` is a loopback stand-in of the Anthropic
Messages API (JSON replies and streams) for testing against the real SDK offline:
script it ``Reply``s made with ``message_body`` or ``error_body``.

A model you script as a function: ``agentos.FunctionModel(reply)`` (or ``model =
"module:reply"`` in an agent file) asks ``reply(request)`` every turn. The request is a
``FunctionRequest``: the conversation as ``Said``, ``ToolCall`` and ``ToolResult``
entries (placeholders, late outcomes and capability answers read back), and the tools it
may call as ``ToolSpec``s; the reply is text, ``ToolCall``s, or both.

For scripted models: ``agentos.ScriptedProvider(*rules)`` answers a request
with the first rule that matches it, a rule being a pair
``(predicate(request) -> bool, respond(request) -> ModelResponse)``.
``text`` and ``tool_calls`` build a reply; ``last_user_text`` (what was
posted, and late outcomes ``[tool call ID (tool) finished: STATUS] ...``) and
``last_tool_results`` (results, placeholders, capability answers) read the
request the model is answering; ``board_turn`` reads a board session's request
(which node the turn is for, its text, the ``>>`` note); ``blocks_of`` reads
any message as a list of blocks. docs/testing.md, docs/sessions-and-hosts.md and
``examples/`` show them at work.
"""

from __future__ import annotations

import asyncio
import time
import typing
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

import anyio
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream
from anyio.streams.memory import MemoryObjectSendStream
from pydantic import BaseModel

from agentos._board import reading as _reading
from agentos._errors import ProviderError
from agentos._errors import StoreError
from agentos._kernel.context import ToolContext
from agentos._kernel.runtime import Runtime
from agentos._kernel.tools import Tool
from agentos._kernel.tools import tool
from agentos._model.cassette import Cassette
from agentos._model.cassette import CassetteError
from agentos._model.cassette import CassetteMiss
from agentos._model.cassette import RecordedConversation
from agentos._model.cassette import RecordingProvider
from agentos._model.cassette import ReplayingProvider
from agentos._model.function_request import FunctionRequest
from agentos._model.function_request import Said
from agentos._model.function_request import ToolCall
from agentos._model.function_request import ToolResult
from agentos._model.function_request import ToolSpec
from agentos._model.messages import blocks_of
from agentos._model.provider import ModelRequest
from agentos._model.provider import ModelResponse
from agentos._model.provider import Provider
from agentos._model.provider import last_tool_results
from agentos._model.provider import last_user_text
from agentos._model.provider import text
from agentos._model.provider import tool_calls
from agentos._model.stand_in import MessagesStandIn
from agentos._model.stand_in import Reply
from agentos._model.stand_in import Seen
from agentos._model.stand_in import error_body
from agentos._model.stand_in import message_body
from agentos._model.stand_in import sse
from agentos._store.protocol import TurnCommit
from agentos._store.sqlite.store import SqliteStore

__all__ = [
    "Cassette",
    "CassetteError",
    "CassetteMiss",
    "FailingProvider",
    "FullDiskStore",
    "FunctionRequest",
    "HeldProvider",
    "MessagesStandIn",
    "Puppet",
    "PuppetCall",
    "PuppetInput",
    "RecordedConversation",
    "RecordingProvider",
    "ReplayingProvider",
    "Reply",
    "Said",
    "Seen",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "blocks_of",
    "board_turn",
    "error_body",
    "last_tool_results",
    "last_user_text",
    "message_body",
    "settle",
    "sse",
    "text",
    "tool_calls",
]


def board_turn(request: ModelRequest) -> _reading.BoardTurn | None:
    """The node a board session's request is for, read off the board it draws (None: the
    request is not a board's, one user message of text)."""
    if len(request.messages) != 1 or request.messages[0].get("role") != "user":
        return None
    blocks = blocks_of(request.messages[0])
    if any(block.get("type") != "text" for block in blocks):
        return None
    return _reading.read_turn("".join(str(block.get("text", "")) for block in blocks))


class PuppetInput(BaseModel):
    label: str = ""


@dataclass(frozen=True, slots=True)
class _Command:
    action: str
    value: object = None


@dataclass(slots=True)
class PuppetCall:
    """What the test can see of one call of the puppet tool."""

    started: bool = False
    cleaned_up: bool = False
    cancelled: bool = False
    send: MemoryObjectSendStream[_Command] | None = None
    receive: MemoryObjectReceiveStream[_Command] | None = None


@dataclass
class Puppet:
    """An async tool (named ``name``) driven call by call from the test.

    Every call waits for commands. ``progress``, ``log``, ``complete`` and ``fail``
    queue one for a call that has started; the call's ``finally`` block marks
    ``cleaned_up``, so tests can check that cancellation reached the work.
    """

    name: str = "puppet"
    calls: dict[str, PuppetCall] = field(default_factory=dict)

    def __post_init__(self) -> None:
        puppet = self

        async def run(args: PuppetInput, ctx: ToolContext) -> object:
            call = puppet._call(ctx.call_id)
            call.started = True
            assert call.receive is not None
            try:
                async for command in call.receive:
                    if command.action == "progress":
                        ctx.progress(command.value)
                    elif command.action == "log":
                        ctx.log(str(command.value))
                    elif command.action == "complete":
                        return command.value
                    elif command.action == "fail":
                        raise RuntimeError(str(command.value))
                return None
            except anyio.get_cancelled_exc_class():
                call.cancelled = True
                raise
            finally:
                call.cleaned_up = True
                call.receive.close()
                if call.send is not None:
                    call.send.close()

        run.__name__ = self.name
        run.__doc__ = "A tool driven by the test."
        self.tool: Tool[PuppetInput] = tool(run, name=self.name)

    def _call(self, call_id: str) -> PuppetCall:
        call = self.calls.get(call_id)
        if call is None:
            call = self.calls[call_id] = PuppetCall()
            call.send, call.receive = anyio.create_memory_object_stream[_Command](100)
        return call

    def progress(self, call_id: str, payload: object) -> None:
        self._send(call_id, _Command("progress", payload))

    def log(self, call_id: str, line: str) -> None:
        """The call logs ``line`` (``ctx.log``)."""
        self._send(call_id, _Command("log", line))

    def complete(self, call_id: str, value: object = None) -> None:
        self._send(call_id, _Command("complete", value))

    def fail(self, call_id: str, message: str = "puppet failed") -> None:
        self._send(call_id, _Command("fail", message))

    def started(self, call_id: str) -> bool:
        call = self.calls.get(call_id)
        return call is not None and call.started

    def _send(self, call_id: str, command: _Command) -> None:
        call = self._call(call_id)
        assert call.send is not None
        call.send.send_nowait(command)


class HeldProvider:
    """A model that answers as ``inner`` does, except that a request ``holds`` matches
    waits for ``go``: a test can act while the model is busy (``asked`` says it is)."""

    name = "held"

    def __init__(self, inner: Provider, holds: Callable[[ModelRequest], bool]) -> None:
        self.inner = inner
        self.holds = holds
        self.asked = anyio.Event()
        self.go = anyio.Event()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if self.holds(request):
            self.asked.set()
            await self.go.wait()
        return await self.inner.complete(request)


class FailingProvider:
    """A model whose every request fails, as an API that is down does."""

    name = "failing"

    def __init__(self, kind: str = "overloaded", message: str = "the API is overloaded") -> None:
        self.error = ProviderError(kind, message)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise self.error


class FullDiskStore(SqliteStore):
    """A SQLite store that refuses every commit of a session, as a full disk does."""

    async def commit_turn(self, turn: TurnCommit) -> None:
        raise StoreError("the disk is full")


async def settle(runtime: Runtime, max_rounds: int = 10_000) -> None:
    """Let every task run until blocked, and the runtime apply all it has queued.

    Worker threads are not waited for. On asyncio this checks the tasks after
    each turn of the loop (``anyio.wait_all_tasks_blocked`` sleeps 0.1 s when
    a task is busy, which makes a test suite crawl).
    """
    for _ in range(max_rounds):
        await anyio.lowlevel.checkpoint()
        if runtime.flush():  # the inbox held something: it is applied now
            continue
        if runtime.pending_work():  # cancels not yet delivered to their tasks
            continue
        blocked = _all_tasks_blocked()
        if blocked is None:
            await anyio.wait_all_tasks_blocked()
            if not runtime.pending_work():
                return
        elif blocked:
            # Hand the GIL to worker threads (a store's, a sync tool's): a test that
            # settles in a tight loop would otherwise starve them for seconds.
            time.sleep(0)  # noqa: ASYNC251 - a zero sleep: only the GIL changes hands
            return
    raise RuntimeError(f"the runtime did not settle within {max_rounds} rounds")


def _all_tasks_blocked() -> bool | None:
    """On asyncio, whether every other task waits on an unfinished future; None elsewhere."""
    try:
        current = asyncio.current_task()
    except RuntimeError:
        return None
    for task in asyncio.all_tasks():
        if task is current:
            continue
        waiter = getattr(task, "_fut_waiter", None)
        if waiter is None or waiter.done():
            return False
    return True


for _name in __all__:  # the helpers written elsewhere are documented here
    _helper = globals()[_name]
    if _helper.__module__ == __name__:
        continue
    if isinstance(_helper, type):  # its annotations resolve where they were written
        _helper.__annotations__ = typing.get_type_hints(_helper)
    _helper.__module__ = __name__
del _name, _helper
