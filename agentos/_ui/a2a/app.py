"""``agentos a2a``: a host served as an A2A agent, an ASGI app (Starlette) made of the A2A
SDK's pieces (its request handler, JSON-RPC and SSE transport, agent card route) over
agentos's own executor (``executor``) and task store (``task_store``: the session store).

A context is an agentos session; each message starts a turn as a task. The card names the
agent file's agent (its sub-agents as skills), says it streams, and that its security
scheme is a bearer token: agentos's own, which ``agentos a2a`` prints. Whoever shows the
token is the owner of the tasks and contexts it starts, on any connection; another token's
(or a session started elsewhere) is, to it, one that does not exist. Without a token only
loopback addresses are served, and everyone there is one owner.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from collections.abc import Sequence
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

from a2a.auth.user import User
from a2a.server.routes import DefaultServerCallContextBuilder
from a2a.server.routes import create_agent_card_routes
from a2a.server.routes import create_jsonrpc_routes
from a2a.types.a2a_pb2 import AgentCapabilities
from a2a.types.a2a_pb2 import AgentCard
from a2a.types.a2a_pb2 import AgentInterface
from a2a.types.a2a_pb2 import AgentSkill
from a2a.types.a2a_pb2 import HTTPAuthSecurityScheme
from a2a.types.a2a_pb2 import SecurityRequirement
from a2a.types.a2a_pb2 import SecurityScheme
from a2a.types.a2a_pb2 import StringList
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT
from a2a.utils.constants import TransportProtocol
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.types import ASGIApp

import agentos
from agentos import AgentConfig
from agentos import Host
from agentos import UsageError
from agentos._ui.a2a.contexts import SessionContexts
from agentos._ui.a2a.executor import TurnExecutor
from agentos._ui.a2a.guard import LOCAL_NAMES
from agentos._ui.a2a.guard import MAX_BODY
from agentos._ui.a2a.guard import RequestGuard
from agentos._ui.a2a.handler import StoreFollowingHandler
from agentos._ui.a2a.task_store import StoredTasks
from agentos._ui.asking import ASK_TIMEOUT
from agentos._ui.loopback import refusal
from agentos._ui.mcp.guard import BearerGuard
from agentos.stores import a2a_tasks_of

RPC_PATH = "/"
"""Where the JSON-RPC endpoint is (the card names it)."""
BEARER = "agentos"
"""The security scheme's name on the card."""
TOKEN_VARIABLE = "AGENTOS_A2A_TOKEN"
"""Where ``agentos a2a`` reads its token when given no --token."""
LOCAL = "loopback"
"""The one owner of a server that asks no token."""


class _Owner(User):
    """Who a request is: the holder of the token it shows (its hash), or ``LOCAL``."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def is_authenticated(self) -> bool:
        return self._name != LOCAL

    @property
    def user_name(self) -> str:
        return self._name


class _Callers(DefaultServerCallContextBuilder):
    """Each request's ``ServerCallContext`` names its owner (``_Owner``)."""

    def build_user(self, request: Request) -> User:
        shown = request.headers.get("authorization")
        if not shown:
            return _Owner(LOCAL)
        return _Owner("token " + hashlib.sha256(shown.encode()).hexdigest())


def agent_card(config: AgentConfig, url: str, *, token: bool) -> AgentCard:
    """The card of ``config`` served at ``url``: its sub-agents are its skills besides its
    own; with ``token``, its security scheme is the bearer token."""
    skills = [
        AgentSkill(
            id=config.name, name=config.name, description=config.system_prompt, tags=["agentos"]
        )
    ]
    for name, child in config.agents.items():
        about = child.description or f"the sub-agent {name}"
        skills.append(AgentSkill(id=name, name=name, description=about, tags=["sub-agent"]))
    card = AgentCard(
        name=config.name,
        description=f"An agentos agent: {config.system_prompt}",
        version=agentos.__version__,
        supported_interfaces=[
            AgentInterface(
                url=url,
                protocol_binding=TransportProtocol.JSONRPC.value,
                protocol_version=PROTOCOL_VERSION_CURRENT,
            )
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain"],
        skills=skills,
    )
    if token:
        scheme = HTTPAuthSecurityScheme(
            scheme="Bearer",
            description="agentos's own token: the one `agentos a2a` prints, its --token, or "
            f"${TOKEN_VARIABLE}",
        )
        card.security_schemes[BEARER].CopyFrom(SecurityScheme(http_auth_security_scheme=scheme))
        card.security_requirements.append(SecurityRequirement(schemes={BEARER: StringList()}))
    return card


def public_host(url: str) -> str:
    """The name the ``Host`` header gives for ``url``; ``ValueError`` if it is not http(s)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"the public URL {url!r} is not an http:// or https:// URL")
    name = parts.hostname
    return f"[{name}]" if ":" in name else name


def endpoint(bind: str, port: int) -> str:
    """The URL clients use for a server bound to ``bind``:``port``."""
    shown = f"[{bind}]" if ":" in bind else bind
    return f"http://{shown}:{port}{RPC_PATH}"


def a2a_app(
    host: Host,
    config: AgentConfig,
    *,
    token: str | None,
    bind: str = "127.0.0.1",
    port: int,
    hosts: Sequence[str] = (),
    url: str | None = None,
    max_body: int = MAX_BODY,
    ask_timeout: float = ASK_TIMEOUT,
) -> ASGIApp:
    """The A2A agent over ``host``, its sessions of ``config``, served on ``bind``:``port``:
    ``token`` the bearer every request shows (None: none, loopback only); ``hosts`` the
    other names its ``Host`` header may give; ``url`` where clients reach it, which the card
    names (a reverse proxy's, or this machine's name; default: ``endpoint(bind, port)``),
    its host name allowed too; ``ask_timeout`` the seconds a client has to answer a question
    its task shows (then it is declined, and the turn goes on). ``UsageError`` without a SQL
    store (the tasks live there), ``ValueError`` when ``refusal`` says why not, for a ``url``
    that is not http(s), or an ``ask_timeout`` not above 0."""
    refused = refusal(bind, token)
    if refused:
        raise ValueError(refused)
    store = host.store
    rows = a2a_tasks_of(store)
    if store is None or rows is None:
        raise UsageError(
            "an A2A agent keeps its tasks in the host's store: give the host one "
            "(SqliteStore or PostgresStore)"
        )
    hosts = list(hosts)
    if url is None:
        url = endpoint(bind, port)
    else:
        hosts.append(public_host(url))
    card = agent_card(config, url, token=token is not None)
    executor = TurnExecutor(host, config, ask_timeout)
    if host.runtime.ask_person is None:
        host.runtime.ask_person = executor.ask
    handler = StoreFollowingHandler(
        executor,
        StoredTasks(rows, host.holder),
        card,
        SessionContexts(rows, host, config),
        store.live_leases,
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            async with executor.running():
                yield
        finally:
            await handler.aclose()

    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, RPC_PATH, context_builder=_Callers()),
    ]
    app: ASGIApp = Starlette(routes=routes, lifespan=lifespan)
    if token is not None:
        app = BearerGuard(
            app,
            token,
            url,
            command="agentos a2a",
            variable=TOKEN_VARIABLE,
            public=[AGENT_CARD_WELL_KNOWN_PATH],
        )
    shown = f"[{bind}]" if ":" in bind else bind
    return RequestGuard(app, [*LOCAL_NAMES, shown, *hosts], max_body)
