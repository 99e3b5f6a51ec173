"""``agentos serve``'s web app: a page per session, its calls live over server-sent events.

Starlette routes over one ``Host`` (the CLI's runtime and store): a session
list, a session page, a JSON API (create, open, take over, rename, post, peek, cancel) and one
SSE stream per open page (``PageFeed``: numbered events, heartbeats, replay
by ``Last-Event-ID``). No GET changes anything: a session this host does
not run is read from the store (``Pages``) until a POST opens it. The pages
are static files of the package; their script writes every value as text,
never as markup.

Safety: with ``token`` set, every request (the stream too) must carry it (a
``Bearer`` header, ``?token=`` or the cookie a page load with ``?token=``
sets); POSTs must be JSON (a cross-site form cannot send that without a
preflight this app never answers) from the page's own origin when the
browser names one; bodies are capped at ``MAX_BODY`` bytes.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from http.cookies import SimpleCookie
from importlib import resources

from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.responses import JSONResponse
from starlette.responses import Response
from starlette.routing import Mount
from starlette.routing import Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp
from starlette.types import Message
from starlette.types import Receive
from starlette.types import Scope
from starlette.types import Send

from agentos import AgentConfig
from agentos import AgentOSError
from agentos import CallSnapshot
from agentos import Host
from agentos import Runtime
from agentos import Session
from agentos import UnknownCallError
from agentos._ui.call_json import peek
from agentos._ui.call_json import stored_peek
from agentos._ui.web.answers import answer_of
from agentos._ui.web.feed import PageFeed
from agentos._ui.web.limits import MAX_BODY
from agentos._ui.web.limits import STALL_SECONDS
from agentos._ui.web.pages import Pages
from agentos._ui.web.pages import WebError
from agentos._ui.web.pages import answer_for
from agentos._ui.web.stream import Streams
from agentos._ui.web.stream import event_id
from components import JsonObject

TOKEN_COOKIE = "agentos_token"
_STATIC = resources.files("agentos._ui.web") / "static"


LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})
"""The ``Host`` names a server without a token answers (besides ``allowed_hosts``)."""
PAGE_HEADERS = {
    "content-security-policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}
"""On every response: no other site frames the page, and nothing but its own files runs
(images may also be ``data:`` URLs: a tool's result may carry one, and the page draws it)."""


def make_app(
    host: Host,
    runtime: Runtime,
    *,
    config: AgentConfig | None = None,
    token: str | None = None,
    allowed_hosts: Iterable[str] = (),
    stall_seconds: float | None = STALL_SECONDS,
) -> Starlette:
    """The web app over ``host``; ``config`` for the sessions its page creates.

    Without a ``token`` it answers only requests whose ``Host`` names this machine
    (``127.0.0.1``, ``localhost``, ``[::1]``) or one of ``allowed_hosts`` (a reverse
    proxy's name): a site whose name resolves to 127.0.0.1 cannot reach it.
    A page that leaves its event stream unread for ``stall_seconds`` while there is
    something to send is disconnected (None: never); it reconnects and catches up.
    ``app.state.streams.statistics()`` counts the streams.
    """
    pages = Pages(host, runtime)
    streams = Streams(stall_seconds)
    config = config or AgentConfig()

    def api(
        handler: Callable[[Request], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                return await handler(request)
            except AgentOSError as raised:
                error = answer_for(raised)
            except WebError as refused:
                error = refused
            body = {"error": {"code": error.code, "message": error.message}}
            return JSONResponse(body, status_code=error.status)

        return endpoint

    async def index(request: Request) -> Response:
        return _page("index.html")

    async def session_page(request: Request) -> Response:
        return _page("session.html")

    async def list_sessions(request: Request) -> Response:
        return JSONResponse({"sessions": await pages.listing()})

    async def create_session(request: Request) -> Response:
        await _json_body(request)
        session = await host.create_session(config)
        return JSONResponse({"session_id": session.session_id}, status_code=201)

    async def show_session(request: Request) -> Response:
        return _page_now((await pages.watch(request.path_params["session_id"])).feed)

    async def open_session(request: Request) -> Response:
        await _json_body(request)
        return _page_now((await pages.open(request.path_params["session_id"])).feed)

    async def take_over(request: Request) -> Response:
        await _json_body(request)
        return _page_now((await pages.take_over(request.path_params["session_id"])).feed)

    async def post_message(request: Request) -> Response:
        body = await _json_body(request)
        text, reply_to = body.get("text"), body.get("reply_to")
        if not isinstance(text, str) or not text.strip():
            raise WebError(400, "bad_request", "'text' must be a non-empty string")
        if reply_to is not None and type(reply_to) is not int:
            raise WebError(400, "bad_request", "'reply_to' must be a node id (an integer)")
        session = await pages.writable(request.path_params["session_id"])
        try:
            session.post(text, reply_to=reply_to)
        except KeyError as error:
            raise WebError(404, "unknown_node", str(error.args[0])) from None
        except Exception as error:
            raise WebError(409, "not_posted", str(error)) from None
        return JSONResponse({"posted": True}, status_code=202)

    async def rename_session(request: Request) -> Response:
        body = await _json_body(request)
        title = body.get("title")
        if not isinstance(title, str):
            raise WebError(400, "bad_request", "'title' must be a string (empty: the first words)")
        return JSONResponse(await pages.rename(request.path_params["session_id"], title))

    async def peek_call(request: Request) -> Response:
        watch = await pages.watch(request.path_params["session_id"])
        call_id = request.path_params["call_id"]
        if watch.live is not None:
            return JSONResponse(peek(_call(runtime, watch.live, call_id), pages.wall()))
        stored = watch.stored_call(call_id)
        if stored is None:
            raise WebError(404, "unknown_call", f"no call {call_id!r} in this session")
        return JSONResponse(stored_peek(stored, pages.wall()))

    async def cancel_call(request: Request) -> Response:
        body = await _json_body(request)
        reason = body.get("reason", "cancelled from the web page")
        if not isinstance(reason, str):
            raise WebError(400, "bad_request", "'reason' must be a string")
        session = await pages.running(request.path_params["session_id"])
        call = _call(runtime, session, request.path_params["call_id"])
        if call.deferred:
            raise WebError(409, "deferred", "a deferred call ends when its token is completed")
        outcome = runtime.cancel(call.call_id, reason, session_id=session.session_id)
        was = outcome.previous_status.value
        return JSONResponse({"cancelled": outcome.cancelled, "previous_status": was})

    async def answer_call(request: Request) -> Response:
        answer = answer_of(await _json_body(request))
        session = await pages.running(request.path_params["session_id"])
        call = _call(runtime, session, request.path_params["call_id"])
        if call.question is None:  # answered already, withdrawn, or never asked
            return JSONResponse({"answered": False})
        try:
            answered = host.answer(session.session_id, call.call_id, answer)
        except (TypeError, ValueError) as error:  # a value no asker can read, or a wrong field
            raise WebError(400, "invalid_answer", str(error)) from None
        return JSONResponse({"answered": answered})

    async def events(request: Request) -> Response:
        feed = (await pages.watch(request.path_params["session_id"])).feed
        seen = event_id(request.headers.get("last-event-id"))
        return streams.response(feed, seen)

    routes = [
        Route("/", index),
        Route("/sessions/{session_id}", session_page),
        Route("/api/sessions", api(list_sessions), methods=["GET"]),
        Route("/api/sessions", api(create_session), methods=["POST"]),
        Route("/api/sessions/{session_id}", api(show_session)),
        Route("/api/sessions/{session_id}/open", api(open_session), methods=["POST"]),
        Route("/api/sessions/{session_id}/take-over", api(take_over), methods=["POST"]),
        Route("/api/sessions/{session_id}/messages", api(post_message), methods=["POST"]),
        Route("/api/sessions/{session_id}/title", api(rename_session), methods=["POST"]),
        Route("/api/sessions/{session_id}/events", api(events)),
        Route("/api/sessions/{session_id}/calls/{call_id}", api(peek_call)),
        Route(
            "/api/sessions/{session_id}/calls/{call_id}/cancel", api(cancel_call), methods=["POST"]
        ),
        Route(
            "/api/sessions/{session_id}/calls/{call_id}/answer", api(answer_call), methods=["POST"]
        ),
        Mount("/static", StaticFiles(directory=str(_STATIC)), name="static"),
    ]

    async def not_found(request: Request, error: Exception) -> Response:
        body = {"error": {"code": "not_found", "message": f"no such page: {request.url.path}"}}
        return JSONResponse(body, status_code=404)

    async def not_allowed(request: Request, error: Exception) -> Response:
        body = {"error": {"code": "method_not_allowed", "message": f"{request.method} not allowed"}}
        return JSONResponse(body, status_code=405)

    app = Starlette(
        routes=routes,
        middleware=[Middleware(_Guard, token=token, allowed_hosts=allowed_hosts)],
        exception_handlers={404: not_found, 405: not_allowed},
    )
    app.state.pages = pages
    app.state.streams = streams
    return app


class _Guard:
    """The token on every request, and POSTs that are JSON from this page's origin.

    A plain ASGI middleware: Starlette's ``BaseHTTPMiddleware`` relays every chunk of a
    streamed response through a queue and extra tasks, which an event stream per page
    cannot afford.
    """

    def __init__(self, app: ASGIApp, token: str | None, allowed_hosts: Iterable[str]) -> None:
        self.app = app
        self.token = token
        self.hosts = LOCAL_HOSTS | {name.lower() for name in allowed_hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        send = _with_page_headers(send)
        problem = None
        if self.token is None and _host_name(request.headers.get("host", "")) not in self.hosts:
            problem = 400, "unknown_host", "this server answers only for this machine's names"
        elif request.headers.get("sec-fetch-site") == "cross-site" and request.url.path != "/":
            problem = 403, "cross_site", "another site's page may link here, not fetch or embed"
        elif self.token is not None and not self._has_token(request):
            problem = 401, "unauthorized", "a valid token is needed (?token=...)"
        elif request.method == "POST":
            problem = _post_problem(request)
        if problem is not None:
            await _error(*problem)(scope, receive, send)
            return
        if self.token is not None and "token" in request.query_params:
            send = _setting_cookie(send, self.token)
        await self.app(scope, receive, send)

    def _has_token(self, request: Request) -> bool:
        assert self.token is not None
        header = request.headers.get("authorization", "")
        given = [
            header.removeprefix("Bearer ") if header.startswith("Bearer ") else "",
            request.query_params.get("token", ""),
            request.cookies.get(TOKEN_COOKIE, ""),
        ]
        return any(hmac.compare_digest(g.encode(), self.token.encode()) for g in given if g)


def _host_name(header: str) -> str:
    """The name a ``Host`` header gives, without its port (``[::1]:8000`` is ``[::1]``)."""
    name = header.strip().lower()
    if name.startswith("["):
        return name[: name.find("]") + 1] if "]" in name else name
    return name.rpartition(":")[0] if ":" in name else name


def _with_page_headers(send: Send) -> Send:
    """``send`` that adds ``PAGE_HEADERS`` to every response."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for name, value in PAGE_HEADERS.items():
                headers[name] = value
        await send(message)

    return sending


def _setting_cookie(send: Send, token: str) -> Send:
    """``send`` that adds the token's cookie to the response, so the page's own requests
    (its script's fetches and event stream) carry it."""
    cookie = SimpleCookie()
    cookie[TOKEN_COOKIE] = token
    morsel = cookie[TOKEN_COOKIE]
    morsel["httponly"], morsel["samesite"], morsel["path"] = True, "Strict", "/"
    value = morsel.OutputString()

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            MutableHeaders(scope=message).append("set-cookie", value)
        await send(message)

    return sending


def _post_problem(request: Request) -> tuple[int, str, str] | None:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        return (
            415,
            "unsupported_media_type",
            "POST bodies are JSON (Content-Type: application/json)",
        )
    origin = request.headers.get("origin")
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    if origin is not None and origin != own:
        return 403, "cross_origin", f"a POST from {origin} is refused"
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
        return 413, "too_large", f"a body is at most {MAX_BODY} bytes"
    return None


async def _json_body(request: Request) -> JsonObject:
    size = 0
    chunks = []
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise WebError(413, "too_large", f"a body is at most {MAX_BODY} bytes")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise WebError(400, "bad_json", f"the body is not JSON: {error}") from None
    except RecursionError:
        raise WebError(400, "bad_json", "the body is nested too deeply") from None
    if not isinstance(body, dict):
        raise WebError(400, "bad_request", "the body must be a JSON object")
    return body


def _call(runtime: Runtime, session: Session, call_id: str) -> CallSnapshot:
    """The session's call ``call_id`` names (its runtime id, or the model's); 404 for one
    it does not hold (another session's call included)."""
    try:
        found = runtime.resolve(call_id, session_id=session.session_id)
        return runtime.status(found, session_id=session.session_id)
    except UnknownCallError:
        raise WebError(404, "unknown_call", f"no call {call_id!r} in this session") from None


def _page_now(feed: PageFeed) -> Response:
    """The page's state and the id of the event it is as of (a stream goes on from there),
    from the snapshot pages start from (a long chat is not encoded again for each look)."""
    snapshot = feed.snapshot()
    start = b'{"last_event_id": %d, "state": ' % snapshot.id
    body = b"".join([start, snapshot.data_json(), b"}"])
    return Response(body, media_type="application/json")


def _page(name: str) -> Response:
    return HTMLResponse((_STATIC / name).read_text(encoding="utf-8"))


def _error(status: int, code: str, message: str) -> Response:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)
