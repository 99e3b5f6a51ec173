"""A librarian: an A2A agent written with ``a2a-sdk``, whose first word says what it does.

- ``research TOPIC``: works ("reading about TOPIC", "writing about TOPIC"), then ends
  ``completed`` with a text, a data and a files artifact (raw bytes and a URL).
- ``greet``: asks the person's name (``input-required``, free text), then says hello.
- ``enrol``: asks with a form (a data part carrying a JSON Schema), then says who enrolled.
- ``hold``: works until cancelled (or ``release`` is sent); ``hold ask`` then asks a name.
- ``tick N [SECONDS]``: N status messages (SECONDS apart), each saying when it was sent
  (``time.monotonic()``).
- ``fail``, ``reject``, ``auth``: ends so, saying why.
- ``quote``: answers with a message, no task.

What it heard (each message's text or data) and the tasks it was told to cancel (and
when) are kept in ``Librarian.heard``, ``Librarian.cancelled`` and ``cancelled_at``; ``python -m
tests.support.a2a_agents.librarian PORT`` serves it on 127.0.0.1 until killed.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import anyio
from a2a.helpers import get_data_parts
from a2a.helpers import get_message_text
from a2a.helpers import new_data_part
from a2a.helpers import new_raw_part
from a2a.helpers import new_task_from_user_message
from a2a.helpers import new_text_message
from a2a.helpers import new_text_part
from a2a.helpers import new_url_part
from a2a.server.agent_execution import AgentExecutor
from a2a.server.agent_execution import RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes
from a2a.server.routes import create_jsonrpc_routes
from a2a.server.routes import create_rest_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.server.tasks import TaskUpdater
from a2a.types import AgentCapabilities
from a2a.types import AgentCard
from a2a.types import AgentInterface
from a2a.types import AgentSkill
from a2a.types import Message
from a2a.types import TaskState
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.middleware.base import RequestResponseEndpoint
from starlette.requests import Request

from agentos import JsonObject

FORM = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "year": {"type": "integer"}},
    "required": ["name"],
}


class Librarian(AgentExecutor):
    """The agent's work, by the first word of the message that starts a task."""

    def __init__(self) -> None:
        self.heard: list[Any] = []
        self.cancelled: list[str] = []
        self.cancelled_at: list[float] = []
        """When each cancel reached the agent (``time.monotonic()``)."""
        self.released = asyncio.Event()
        self.holding = asyncio.Event()
        self.told_to_cancel = asyncio.Event()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        said = get_message_text(message)
        data = get_data_parts(list(message.parts))
        self.heard.append(data[0] if data else said)
        word, _, rest = said.partition(" ")
        task = context.current_task
        if task is None and word == "quote":
            words = "So many books, so little time."
            quote = new_text_message(words, context_id=context.context_id)
            await event_queue.enqueue_event(quote)
            return
        task = task or new_task_from_user_message(message)
        await event_queue.enqueue_event(task)  # as it is, as many agents do: on an answer too
        work = TaskUpdater(event_queue, task.id, task.context_id)
        if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            await self._answered(work, said, data)
            return
        await work.start_work(self._say(work, f"{word} {rest}".strip()))
        if word == "research":
            await self._research(work, rest)
        elif word == "greet":
            await work.requires_input(self._say(work, "What is your name?"))
        elif word == "enrol":
            ask = work.new_agent_message([new_text_part("Who enrols?"), new_data_part(FORM)])
            await work.requires_input(ask)
        elif word == "hold":
            await work.update_status(TaskState.TASK_STATE_WORKING, self._say(work, "holding"))
            self.holding.set()
            await self.released.wait()
            if rest == "ask":
                await work.requires_input(self._say(work, "What is your name?"))
            else:
                await work.complete(self._say(work, "released"))
        elif word == "tick":
            count, _, apart = rest.partition(" ")
            for _ in range(int(count)):
                await asyncio.sleep(float(apart or 0))
                stamp = self._say(work, repr(time.monotonic()))
                await work.update_status(TaskState.TASK_STATE_WORKING, stamp)
            await work.complete()
        elif word == "fail":
            await work.failed(self._say(work, "the library is closed"))
        elif word == "reject":
            await work.reject(self._say(work, "I do not lend that"))
        elif word == "auth":
            await work.requires_auth(self._say(work, "show your library card"))
        else:
            await work.complete(self._say(work, f"I heard {said!r}"))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None and context.context_id is not None
        self.cancelled_at.append(time.monotonic())
        self.cancelled.append(context.task_id)
        self.told_to_cancel.set()
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()

    async def _research(self, work: TaskUpdater, topic: str) -> None:
        for step in ("reading", "writing"):
            await work.update_status(
                TaskState.TASK_STATE_WORKING, self._say(work, f"{step} about {topic}")
            )
        await work.add_artifact([new_text_part(f"notes on {topic}")], name="notes")
        await work.add_artifact([new_data_part({"topic": topic, "pages": 3})], name="facts")
        scan = new_raw_part(b"%PDF-1.7", media_type="application/pdf", filename="scan.pdf")
        link = new_url_part(f"https://books.example/{topic}", media_type="text/html")
        await work.add_artifact([scan, link], name="sources")
        await work.complete()

    async def _answered(self, work: TaskUpdater, said: str, data: list[Any]) -> None:
        if data:
            await work.add_artifact([new_text_part(f"enrolled {data[0]['name']}")])
        else:
            await work.add_artifact([new_text_part(f"hello {said}")])
        await work.complete()

    def _say(self, work: TaskUpdater, text: str) -> Message:
        return work.new_agent_message([new_text_part(text)])


def card(url: str, *, streaming: bool = True, binding: str = "JSONRPC") -> AgentCard:
    """The librarian's card, its endpoint at ``url`` (``binding``: JSON-RPC or HTTP+JSON)."""
    return AgentCard(
        name="Librarian",
        description="Finds and summarises books.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding=binding, protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=streaming),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain", "application/json"],
        skills=[
            AgentSkill(
                id="research",
                name="research",
                description="Reads about a topic and writes notes.",
                tags=["books"],
                examples=["research ecs"],
            )
        ],
    )


class Requests:
    """The requests an agent got, as ``app`` keeps them, and a way to wait for more."""

    def __init__(self) -> None:
        self.seen: list[JsonObject] = []
        self._news = anyio.Event()

    def keep(self, request: JsonObject) -> None:
        self.seen.append(request)
        self._news.set()
        self._news = anyio.Event()

    def methods(self) -> list[object]:
        """The JSON-RPC methods asked, in order."""
        return [request.get("method") for request in self.seen if "method" in request]

    async def until(self, method: str, times: int = 1) -> None:
        """Wait until ``method`` was asked ``times`` times."""
        while self.methods().count(method) < times:
            await self._news.wait()


def app(
    port: int,
    librarian: Librarian,
    requests: Requests | None = None,
    *,
    streaming: bool = True,
    rest: bool = False,
) -> Starlette:
    """The librarian served at ``http://127.0.0.1:PORT``: its card at the well-known path,
    JSON-RPC (or, ``rest``, HTTP+JSON) at ``/a2a``; when ``requests`` is given, each
    request is kept there: its ``authorization`` header (or ""), and a JSON-RPC request's
    ``method`` and ``params``."""
    binding = "HTTP+JSON" if rest else "JSONRPC"
    served = card(f"http://127.0.0.1:{port}/a2a", streaming=streaming, binding=binding)
    handler = DefaultRequestHandler(
        agent_executor=librarian, task_store=InMemoryTaskStore(), agent_card=served
    )
    endpoint = (
        create_rest_routes(handler, path_prefix="/a2a")
        if rest
        else create_jsonrpc_routes(handler, "/a2a")
    )
    routes = [*create_agent_card_routes(served), *endpoint]
    if requests is None:
        return Starlette(routes=routes)
    kept = requests

    class Keep(BaseHTTPMiddleware):
        async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Any:
            seen: JsonObject = {"authorization": request.headers.get("authorization", "")}
            if request.method == "POST":
                body = json.loads(await request.body())
                seen |= {"method": body.get("method"), "params": body.get("params")}
            kept.keep(seen)
            return await call_next(request)

    return Starlette(routes=routes, middleware=[Middleware(Keep)])


if __name__ == "__main__":
    import uvicorn

    port = int(sys.argv[1])
    uvicorn.run(app(port, Librarian()), host="127.0.0.1", port=port, log_level="warning")
