"""An agent whose card is the librarian's but whose endpoint answers what is not A2A: a
page of HTML to every request (``html``), a JSON-RPC answer whose result is nonsense
(``nonsense``), or nothing at all, ever (``stall``); or whose card is a page of HTML
(``card``)."""

from __future__ import annotations

import json
from typing import Literal

import anyio
from a2a.server.routes import create_agent_card_routes
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from tests.support.a2a_agents.librarian import card

Babble = Literal["html", "nonsense", "stall", "card"]
PAGE = "<html><body>It works!</body></html>"


def app(port: int, babble: Babble = "html", *, streaming: bool = True) -> Starlette:
    """The babbler at ``http://127.0.0.1:PORT`` (its card at the well-known path)."""

    async def endpoint(request: Request) -> Response:
        asked = json.loads(await request.body())
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
