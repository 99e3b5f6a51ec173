"""The live web page (``agentos serve``) as an ASGI app, for programs that host it themselves.

``make_app(host, runtime)`` is a Starlette app: the session list, a page per
session (chat, calls with progress, peek, cancel, what the model reads next)
and one server-sent event stream per open page. Serve it with any ASGI server
on the event loop that runs ``runtime``, best on a socket from ``listen`` (a page that
stops reading is then dropped by the kernel too, with what its socket held).
"""

from agentos._ui.web.app import TOKEN_COOKIE
from agentos._ui.web.app import make_app
from agentos._ui.web.limits import HEARTBEAT_SECONDS
from agentos._ui.web.limits import MAX_BODY
from agentos._ui.web.limits import STALL_SECONDS
from agentos._ui.web.listen import listen
from agentos._ui.web.stream import StreamStatistics

__all__ = [
    "HEARTBEAT_SECONDS",
    "MAX_BODY",
    "STALL_SECONDS",
    "TOKEN_COOKIE",
    "StreamStatistics",
    "listen",
    "make_app",
]
