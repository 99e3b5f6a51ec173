"""``A2aAgent``: a remote A2A agent as a toolset of the runtime, one tool whose calls are
its tasks.

Its task reads the agent card (headers and token from the settings, ``${VAR}`` read then),
makes the SDK's client for the transport the card prefers of JSON-RPC and HTTP+JSON, puts
the tool in the runtime's registry (its description the card's, with its skills) and keeps
the HTTP client until the runtime closes. A call is ``call.py``'s; after a restart a call
whose mirror names its task goes on with it (``resume_task``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from typing import Literal
from urllib.parse import urlsplit

import anyio
from anyio.abc import TaskStatus

from agentos._errors import ToolsetError
from agentos._kernel.context import ToolContext
from agentos._kernel.tools import Tool
from agentos._kernel.tools import ToolFailure
from agentos._kernel.toolsets import ToolRegistry
from agentos._toolsets.a2a.call import call_agent
from agentos._toolsets.a2a.task import Remote
from agentos._toolsets.mcp.transport import expanded
from agentos._toolsets.mcp.transport import leaf_error
from agentos._toolsets.remote import RemoteToolset
from agentos._turns.a2a_config import A2aAgentConfig
from components import Json

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "message": {"type": "string", "minLength": 1, "description": "What to tell the agent."},
        "context_id": {
            "type": "string",
            "description": "The conversation to go on with (a former call's context_id).",
        },
        "task_id": {
            "type": "string",
            "description": "The task to go on with: one that asked for input.",
        },
        "data": {
            "type": "object",
            "description": "Structured data sent beside the message (an answer that follows "
            "the answer_schema a question came with).",
        },
    },
    "required": ["message"],
    "additionalProperties": False,
}
CARD_PATH = "/.well-known/agent-card.json"
BINDINGS = ("JSONRPC", "HTTP+JSON")
"""The card's transports agentos speaks (the SDK's, over HTTP; gRPC needs its extra)."""


class A2aAgent(RemoteToolset[A2aAgentConfig]):
    """A toolset: one remote A2A agent as the tool ``config.tool`` (default: ``name``)."""

    def __init__(
        self, name: str, config: A2aAgentConfig, *, environ: Mapping[str, str] | None = None
    ) -> None:
        """``environ`` is where ``${VAR}`` is read (the process environment by default)."""
        super().__init__(name, config, "an A2A agent's", environ)
        self.card: Any = None
        """The agent card, once read (the SDK's ``AgentCard``)."""
        self._remote: Remote | None = None

    @classmethod
    def http(
        cls,
        name: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        token: str | None = None,
        tool: str | None = None,
        input: Literal["person", "model"] = "person",
        start_timeout: float = 30.0,
        poll_interval: float = 1.0,
        answer_timeout: float = 300.0,
    ) -> A2aAgent:
        """The agent whose card is at ``url``; ``input``: who answers its questions."""
        config = A2aAgentConfig(
            url=url,
            headers=dict(headers or {}),
            token=token,
            tool=tool,
            input=input,
            start_timeout=start_timeout,
            poll_interval=poll_interval,
            answer_timeout=answer_timeout,
        )
        return cls(name, config)

    @property
    def tool_name(self) -> str:
        return self.config.tool or self.name

    def __repr__(self) -> str:
        return f"<A2aAgent {self.name} ({self.config.url})>"

    async def run(self, tools: ToolRegistry, *, task_status: TaskStatus[None]) -> None:
        """Read the card, make the client, offer the tool; keep them until cancelled."""
        import httpx

        where = f"a2a_agents.{self.name}"
        headers = self._expanded(self.config.headers, "headers")
        if self.config.token is not None:
            token = self._expanded({"token": self.config.token}, "token")["token"]
            headers["Authorization"] = f"Bearer {token}"
        timeout = httpx.Timeout(self.config.start_timeout, read=None)
        async with httpx.AsyncClient(headers=headers, timeout=timeout) as http:
            try:
                with anyio.fail_after(self.config.start_timeout):
                    self.card = await self._card(http)
                remote = self._client(http, self.card)
            except TimeoutError:
                raise ToolsetError(
                    f"{where}: no agent card from {self.config.url} within "
                    f"{self.config.start_timeout:g} s"
                ) from None
            except Exception as error:
                raise ToolsetError(f"{where}: {leaf_error(error)}") from None
            self._remote = remote
            tool = Tool.from_schema(
                self._call,
                name=self.tool_name,
                input_schema=INPUT_SCHEMA,
                description=self.config.description or describe(self.card),
                source=self.name,
            )
            try:
                tools.replace(self.name, [tool])
            except ValueError as error:
                raise ToolsetError(f"{where}: {error}") from None
            task_status.started()
            try:
                await anyio.sleep_forever()
            finally:
                self._remote = None
                self._resuming.clear()  # calls not started by now never will

    def _expanded(self, values: Mapping[str, str], setting: str) -> dict[str, str]:
        return expanded(self.name, values, setting, self._environ, table="a2a_agents")

    async def _card(self, http: Any) -> Any:
        """The agent card at the configured URL (its well-known path when it has none)."""
        from a2a.client import A2ACardResolver

        url = self.config.url
        path = urlsplit(url).path
        if path in ("", "/"):
            url = url.rstrip("/") + CARD_PATH
        return await A2ACardResolver(http, url).get_agent_card(relative_card_path="/")

    def _client(self, http: Any, card: Any) -> Remote:
        from a2a.client import ClientConfig
        from a2a.client import ClientFactory

        streaming = bool(card.capabilities.streaming)
        config = ClientConfig(
            httpx_client=http,
            streaming=streaming,
            polling=not streaming,
            supported_protocol_bindings=list(BINDINGS),
        )
        client = ClientFactory(config).create(card)
        settings = self.config
        return Remote(
            self.name,
            client,
            streaming,
            settings.poll_interval,
            settings.answer_timeout,
            request_timeout=settings.start_timeout,
        )

    async def _call(self, args: dict[str, Any], ctx: ToolContext) -> Json | ToolFailure:
        resumed = self._resuming.pop(ctx.call_id, None)
        remote = self._remote
        if remote is None:
            return ToolFailure(f"A2A agent {self.name!r} is not connected")
        return await call_agent(remote, args, ctx, self.config.input, resumed)


def describe(card: Any) -> str:
    """What the model reads of the tool: the card's name and description, then its skills."""
    lines = [f"{card.name}: {card.description}".strip(": ")]
    for skill in card.skills:
        line = f"- {skill.name}: {skill.description}".rstrip(": ")
        if skill.examples:
            line += f" (e.g. {'; '.join(skill.examples[:3])})"
        lines.append(line)
    if len(lines) > 1:
        lines.insert(1, "Skills:")
    lines.append(
        "A remote A2A agent: give it a message; to go on with a conversation or answer its "
        "question, pass the context_id (and task_id) a former call returned."
    )
    return "\n".join(lines)
