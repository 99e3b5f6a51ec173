"""An agent whose card is the librarian's but whose endpoint answers what is not A2A: a
page of HTML to every request, or (``stall``) nothing at all, ever."""

from __future__ import annotations

import anyio
from a2a.server.routes import create_agent_card_routes
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from tests.support.a2a_agents.librarian import card


def app(port: int, *, stall: bool = False, streaming: bool = True) -> Starlette:
    """The babbler at ``http://127.0.0.1:PORT`` (its card at the well-known path)."""

    async def endpoint(request: Request) -> Response:
        await request.body()
        if stall:
            await anyio.sleep_forever()
        return HTMLResponse("<html><body>It works!</body></html>")

    served = card(f"http://127.0.0.1:{port}/a2a", streaming=streaming)
    routes = [*create_agent_card_routes(served), Route("/a2a", endpoint, methods=["POST"])]
    return Starlette(routes=routes)
