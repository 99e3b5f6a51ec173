"""What the hand-written MCP servers over streamable HTTP share: a JSON-RPC ``POST`` answered
with one JSON response (notifications taken with a 202), by a function of the request's
path, method and params."""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.responses import Response
from starlette.routing import Route

Answer = Callable[[str, str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""(path, method, params) -> the result; raising ``Refused`` answers with an error."""


class Refused(Exception):
    """A JSON-RPC error for the request."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def jsonrpc_app(answer: Answer, paths: Sequence[str] = ("/mcp",)) -> Starlette:
    """An ASGI app that answers JSON-RPC at each of ``paths`` with ``answer``."""

    async def mcp(request: Request) -> Response:
        if request.method != "POST":
            return Response(status_code=405)
        message = await request.json()
        if "id" not in message:
            return Response(status_code=202)
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            params = message.get("params") or {}
            reply["result"] = await answer(request.url.path, message["method"], params)
        except Refused as refused:
            reply["error"] = {"code": refused.code, "message": refused.message}
        return JSONResponse(reply)

    methods = ["GET", "POST", "DELETE"]
    return Starlette(routes=[Route(path, mcp, methods=methods) for path in paths])
