"""An agent whose card is the librarian's but whose endpoint answers what is not A2A: a
page of HTML to every request (``html``), a JSON-RPC answer whose result is nonsense
(``nonsense``), or nothing at all, ever (``stall``); or whose card is a page of HTML
(``card``). Or one whose task's stream breaks, the agent still there: a streamed message
starts a working task (``TASK``), then the stream goes on with a page of HTML (``torn``),
or ends (``cut``) and the task is read, or subscribed to, only as a page of HTML; either
way a ``CancelTask`` cancels it."""

from __future__ import annotations

import json
from typing import Literal

import anyio
from a2a.server.routes import create_agent_card_routes
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.responses import JSONResponse
from starlette.responses import Response
from starlette.responses import StreamingResponse
from starlette.routing import Route

from agentos import JsonObject
from tests.support.a2a_agents.librarian import card

Babble = Literal["html", "nonsense", "stall", "card", "torn", "cut"]
PAGE = "<html><body>It works!</body></html>"
TASK = "task-1"
"""The id of the task a streamed message starts (``torn``, ``cut``)."""


def app(
    port: int,
    babble: Babble = "html",
    *,
    streaming: bool = True,
    heard: list[JsonObject] | None = None,
) -> Starlette:
    """The babbler at ``http://127.0.0.1:PORT`` (its card at the well-known path); each
    JSON-RPC request it gets is kept in ``heard``, when given."""

    async def endpoint(request: Request) -> Response:
        asked = json.loads(await request.body())
        if heard is not None:
            heard.append(asked)
        if babble in ("torn", "cut"):
            return torn(asked, babble)
        if babble == "stall":
            await anyio.sleep_forever()
        if babble == "nonsense":
            nonsense = {"jsonrpc": "2.0", "id": asked.get("id"), "result": {"mood": "sunny"}}
            return JSONResponse(nonsense)
        return HTMLResponse(PAGE)

    async def page(request: Request) -> Response:
        return HTMLResponse(PAGE)

    served = card(f"http://127.0.0.1:{port}/a2a", streaming=streaming)
    cards = (
        [Route("/.well-known/agent-card.json", page)]
        if babble == "card"
        else create_agent_card_routes(served)
    )
    return Starlette(routes=[*cards, Route("/a2a", endpoint, methods=["POST"])])


def torn(asked: JsonObject, babble: Babble) -> Response:
    """``torn``'s and ``cut``'s answer to a JSON-RPC request."""

    def answer(state: str) -> str:
        task = {"id": TASK, "contextId": "context-1", "status": {"state": state}}
        result = {"task": task} if asked["method"] == "SendStreamingMessage" else task
        return json.dumps({"jsonrpc": "2.0", "id": asked.get("id"), "result": result})

    if asked["method"] == "CancelTask":
        return JSONResponse(json.loads(answer("TASK_STATE_CANCELED")))
    if asked["method"] != "SendStreamingMessage":
        return HTMLResponse(PAGE)
    events = [f"data: {answer('TASK_STATE_WORKING')}\n\n"]
    if babble == "torn":
        events.append(f"data: {PAGE}\n\n")
    return StreamingResponse(iter(events), media_type="text/event-stream")
