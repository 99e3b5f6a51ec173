"""The live web page (``agentos serve``) as an ASGI app, for programs that host it themselves.

``make_app(host, runtime)`` is a Starlette app: the session list, a page per
session (chat, calls with progress, peek, cancel, what the model reads next)
and one server-sent event stream per open page. Serve it with any ASGI server
on the event loop that runs ``runtime``.
"""

from agentos._ui.web.app import HEARTBEAT_SECONDS, MAX_BODY, TOKEN_COOKIE, make_app

__all__ = ["HEARTBEAT_SECONDS", "MAX_BODY", "TOKEN_COOKIE", "make_app"]
