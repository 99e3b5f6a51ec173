"""agentos as an A2A agent (the Agent2Agent protocol, v1.0), as an ASGI app, for programs
that host it themselves (``agentos a2a`` is the command that does).

``app(host, agent, token=..., port=...)`` is a Starlette app: the agent card at
``/.well-known/agent-card.json`` and the JSON-RPC endpoint (with SSE streaming) at ``/``,
built of the A2A SDK's server pieces over agentos's own executor and task store. A
message's context is a session of ``agent`` in ``host``; each message starts a turn as a
task, kept in the host's store (so it needs one), each its token holder's. A question a
task shows its client for ``ask_timeout`` seconds (``ASK_TIMEOUT`` unless told) without an
answer is declined, and the turn goes on in its lifespan. Serve it with any ASGI server that
runs its lifespan (uvicorn, hypercorn do), on the event loop that runs the host's runtime,
best on a socket from ``agentos.web.listen``.
"""

from agentos._ui.a2a.app import RPC_PATH
from agentos._ui.a2a.app import TOKEN_VARIABLE
from agentos._ui.a2a.app import a2a_app as app
from agentos._ui.a2a.app import agent_card
from agentos._ui.a2a.app import endpoint
from agentos._ui.a2a.guard import MAX_BODY
from agentos._ui.asking import ASK_TIMEOUT

__all__ = ["ASK_TIMEOUT", "MAX_BODY", "RPC_PATH", "TOKEN_VARIABLE", "agent_card", "app", "endpoint"]
