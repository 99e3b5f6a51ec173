"""How an agent behaves: model, prompt, tools, and what happens to each tool call.

Loaded from JSON or TOML, or built in code. Validation errors name the field.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from pathlib import Path
from typing import Any
from typing import Literal

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import SerializerFunctionWrapHandler
from pydantic import ValidationError
from pydantic import field_validator
from pydantic import model_serializer
from pydantic import model_validator

from agentos._model.function_model import function_path
from agentos._model.prices import ModelPrices
from agentos._model.prices import prices_for
from agentos._turns.a2a_config import A2aAgentConfig
from agentos._turns.capabilities import CAPABILITIES
from agentos._turns.mcp_config import TOOL_NAME
from agentos._turns.mcp_config import McpServerConfig
from agentos._turns.mcp_config import check_names
from agentos._turns.tool_policy import Decorate
from agentos._turns.tool_policy import Disposition
from agentos._turns.tool_policy import ExecutionMode
from agentos._turns.tool_policy import ToolPolicy
from agentos._turns.tool_policy import YieldStrategy
from agentos._turns.tool_policy import YieldWhenAllDone

TOOL_SPEC = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*(:[A-Za-z_][\w]*)?$")
"""A tool's name, a module (its tools), or ``module:attribute`` (a tool, or a list of them)."""


ParameterValue = str | int | float | bool
"""What a parameter holds: one TOML (or JSON) scalar."""


def _scope_of(values: dict[str, Any]) -> str:
    """The cache scope of these parameter values (``AgentConfig.cache_scope``)."""
    return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:32]


_NO_PARAMETERS_SCOPE = _scope_of({})


class Parameter(BaseModel):
    """One of the agent's parameters: written as its value alone, or as a table with
    ``secret = true``. A secret's value is neither stored with a session nor shown."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    value: ParameterValue | None = Field(
        None,
        repr=False,
        description="The value: required, but for a secret, whose value is never stored with "
        "a session.",
    )
    secret: bool = Field(
        False, description="No call of the agent's sessions is cached while it is set."
    )

    @model_validator(mode="before")
    @classmethod
    def _value_alone(cls, data: Any) -> Any:
        if isinstance(data, ParameterValue):
            return {"value": data}
        if not isinstance(data, dict | Parameter):
            raise ValueError(
                "a parameter is a text, a number or true/false, or { value = ..., secret = true }"
            )
        return data

    @model_validator(mode="after")
    def _a_value_unless_secret(self) -> Parameter:
        if self.value is None and not self.secret:
            raise ValueError("a parameter needs a value (only a secret one may leave it out)")
        return self

    @model_serializer(mode="wrap")
    def _secret_kept_out(self, handler: SerializerFunctionWrapHandler) -> Any:
        return {"secret": True} if self.secret else handler(self)


class AgentConfig(BaseModel):
    """Everything about one agent that is not its history."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("agent", description="The agent's name, in logs, traces and listings.")
    model: str = Field(
        "claude-sonnet-4-5",
        description="The model asked (its name also picks its prices): 'test' is the "
        "offline model that calls every tool once; 'module:function' names a Python "
        "function that writes the replies (offline; found in this file's folder, then the "
        "current one). A Claude model named here needs "
        "ANTHROPIC_API_KEY (the command line refuses to start without it); left out, the "
        "command line asks Claude when the key is set, else the demo's offline scripted model.",
    )
    system_prompt: str = Field(
        "You are a helpful assistant.", description="What the model is told first, every turn."
    )
    parameters: dict[str, Parameter] = Field(
        default_factory=dict,
        description="What its sessions are for (a user, a tenant, a region), by name: a value, "
        "or { value = ..., secret = true }. They scope the cache decorator: sessions whose "
        "parameters differ never share a cached result, those of one host whose parameters "
        "are alike do, and while any parameter is secret no call is cached.",
    )
    tools: list[str] | None = Field(
        None,
        description="The tools it may call (None: all the runtime's): a tool's name, "
        "'module:attribute' (a tool, or a list of them) or a module (its tools).",
    )
    import_path: list[str] = Field(
        default_factory=list,
        description="Directories the modules 'tools' names are found in, besides the current "
        "one (the command line adds the agent file's own, and resolves these from it).",
    )
    mcp_servers: dict[str, McpServerConfig] = Field(
        default_factory=dict, description="MCP servers whose tools it may call, by name."
    )
    a2a_agents: dict[str, A2aAgentConfig] = Field(
        default_factory=dict,
        description="Remote A2A agents it may call, by name: each is one tool (that name, "
        "unless its 'tool' says otherwise) whose calls are the agent's tasks.",
    )
    agents: dict[str, SubAgent] = Field(
        default_factory=dict,
        description="Sub-agents it may call as tools, by tool name: each call is a child "
        "session that runs until its turn ends.",
    )
    max_agent_depth: int = Field(
        3,
        ge=1,
        le=16,
        description="How many levels of sub-agents may run below a top-level session (a "
        "child inherits its parent's limit when that is lower).",
    )
    max_children_running: int = Field(
        8, gt=0, description="Sub-agent calls of one session that may run at once."
    )
    capabilities: list[str] = Field(
        default_factory=lambda: list(CAPABILITIES),
        description="The system toolbox's tools it is offered: get_tool_call_status, "
        "list_running_tool_calls, cancel_tool_call, and message_agent (with sub-agents).",
    )
    execution_mode: ExecutionMode = Field(
        ExecutionMode.ASYNCHRONOUS,
        description="'asynchronous': a turn goes on while calls run, as the yield strategy "
        "says; 'synchronous': every call runs to its end, one after another, before the turn "
        "goes on.",
    )
    policy: ToolPolicy = Field(
        default_factory=ToolPolicy,
        description="How each tool's calls run: a default disposition (run_sync, run_async, "
        "run_isolated, defer) and rules by tool name, which may decorate a call (cache, "
        "retries, timeout).",
    )
    async_yield_strategy: YieldStrategy = Field(
        default_factory=YieldWhenAllDone,
        description="When a turn waiting for background calls gives the model its turn back: "
        "when all are done, on any progress, or after a timeout (kind and milliseconds).",
    )
    isolated_runner: str = Field(
        "local", description="The runtime's runner that run_isolated calls go to."
    )
    max_running_per_session: int | None = Field(
        None, gt=0, description="Calls of one session that may run at once (None: no cap)."
    )
    call_timeout: float | None = Field(
        None,
        gt=0,
        description="Seconds after which a call fails, timed out, unless its tool or a rule "
        "says otherwise (None: the tool's, else none).",
    )
    call_overdue_after: float | None = Field(
        None,
        gt=0,
        description="Seconds after which a running call's lateness grants a turn, and again "
        "while it runs, each interval twice the one before (up to expected_seconds_cap): the "
        "default for a background call whose model gave no expected_seconds (None: no "
        "default, such a call is never overdue).",
    )
    expected_seconds_cap: float = Field(
        3600.0,
        gt=0,
        description="The longest overdue interval the model may ask for with expected_seconds, "
        "and the longest the doubling interval between a running call's overdue turns grows to.",
    )
    expected_seconds_floor: float = Field(
        1.0,
        gt=0,
        description="The shortest overdue interval the model may ask for with expected_seconds: "
        "a smaller estimate counts as this, so an overdue turn never comes faster.",
    )
    max_tokens: int = Field(1024, gt=0, description="The longest reply asked of the model.")
    prices: ModelPrices | None = Field(
        None,
        description="US dollars per million tokens of the model (input, output, cache_write, "
        "cache_read) [default: the package's table of Claude prices, by model name].",
    )
    max_tokens_per_session: int | None = Field(
        None,
        gt=0,
        description="Tokens (input, output and prompt-cache, all requests) after which the "
        "session asks the model nothing more.",
    )
    max_cost_per_session: float | None = Field(
        None,
        gt=0,
        description="US dollars after which the session asks the model nothing more (needs "
        "the model's prices: the table's, or 'prices').",
    )
    request_timeout: float = Field(
        600.0, gt=0, description="Longest wait for one model request, retries included."
    )
    max_steps_per_turn: int = Field(
        25, gt=0, description="Model requests one event may lead to before the turn ends."
    )
    context_view: Literal["transcript", "board"] = Field(
        "transcript",
        description="What the model reads: the transcript (Anthropic Messages), or a message "
        "board of threads, re-rendered every turn.",
    )
    retry_budget: int = Field(
        2,
        ge=0,
        description="Board: cancels a branch of the board may spend before the model is told "
        "to stop and ask the user in a new thread.",
    )
    autonomous_turns: int = Field(
        8,
        ge=0,
        description="Board: turns a thread may take without the user (results, timers) until "
        "the user posts in it again.",
    )

    @property
    def model_named(self) -> bool:
        """Whether ``model`` was given (the file names it), not left to its default."""
        return "model" in self.model_fields_set

    def cache_scope(self) -> str | None:
        """What a cached result is kept under besides its tool and input: a hash of the
        parameters' values (None: a parameter is secret, so nothing is cached)."""
        if not self.parameters:  # most agents: asked at every model turn, hashed once
            return _NO_PARAMETERS_SCOPE
        if any(parameter.secret for parameter in self.parameters.values()):
            return None
        values = {name: parameter.value for name, parameter in self.parameters.items()}
        return _scope_of(values)

    @model_serializer(mode="wrap")
    def _model_if_named(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Stored without ``model`` when it was left out, so a resumed session still
        knows it was not named."""
        data = handler(self)
        if isinstance(data, dict) and not self.model_named:
            data.pop("model", None)
        return data

    def model_prices(self) -> ModelPrices | None:
        """What the model's tokens cost: ``prices``, else the table's for ``model``."""
        return self.prices or prices_for(self.model)

    @model_validator(mode="after")
    def _a_cost_limit_needs_prices(self) -> AgentConfig:
        if self.max_cost_per_session is not None and self.model_prices() is None:
            raise ValueError(
                f"max_cost_per_session needs the prices of {self.model!r}, which the table does "
                "not know: give them as prices = { input = ..., output = ..., cache_write = ..., "
                "cache_read = ... } (dollars per million tokens)"
            )
        return self

    @model_validator(mode="after")
    def _floor_under_cap(self) -> AgentConfig:
        if self.expected_seconds_floor > self.expected_seconds_cap:
            raise ValueError(
                f"expected_seconds_floor ({self.expected_seconds_floor:g}) is above "
                f"expected_seconds_cap ({self.expected_seconds_cap:g})"
            )
        return self

    @model_validator(mode="after")
    def _one_toolset_a_name(self) -> AgentConfig:
        both = sorted(set(self.mcp_servers) & set(self.a2a_agents))
        if both:
            raise ValueError(
                f"{', '.join(repr(n) for n in both)}: the name of both an MCP server and an "
                "A2A agent; give one of them another name"
            )
        return self

    @field_validator("model", mode="before")
    @classmethod
    def _function_by_path(cls, model: object) -> object:
        """A function given as the model is kept as its import path ``module:function``, so
        the configuration stays data and a stored session finds the function again."""
        if callable(model) and not isinstance(model, str):
            return function_path(model)
        return model

    @field_validator("tools")
    @classmethod
    def _tool_specs(cls, specs: list[str] | None) -> list[str] | None:
        for spec in specs or ():
            if not (TOOL_NAME.match(spec) or TOOL_SPEC.match(spec)):
                raise ValueError(
                    f"{spec!r} is neither a tool's name, nor 'module:attribute', nor a module"
                )
        return specs

    @field_validator("mcp_servers")
    @classmethod
    def _server_names(cls, servers: dict[str, McpServerConfig]) -> dict[str, McpServerConfig]:
        check_names(servers, "a server's")
        return servers

    @field_validator("a2a_agents")
    @classmethod
    def _a2a_names(cls, agents: dict[str, A2aAgentConfig]) -> dict[str, A2aAgentConfig]:
        check_names(agents, "an A2A agent's")
        return agents

    @field_validator("agents")
    @classmethod
    def _agent_names(cls, agents: dict[str, SubAgent]) -> dict[str, SubAgent]:
        for name in agents:
            if not TOOL_NAME.match(name) or name in CAPABILITIES:
                raise ValueError(
                    f"{name!r}: a sub-agent's name is a tool's name (letters, digits, _ and -) "
                    "and not a capability's"
                )
        return agents

    @field_validator("capabilities")
    @classmethod
    def _known_capabilities(cls, names: list[str]) -> list[str]:
        unknown = ", ".join(repr(name) for name in names if name not in CAPABILITIES)
        if unknown:
            raise ValueError(f"not a capability: {unknown} (they are: {', '.join(CAPABILITIES)})")
        return names

    @classmethod
    def from_file(cls, path: str | Path) -> AgentConfig:
        """Load from a ``.json`` or ``.toml`` file; ``ValueError`` for another suffix.

        Paths in it are taken from the file's directory: its ``import_path`` (which gains
        the directory itself), its stdio servers' ``cwd`` (there by default), and each
        ``agents.NAME.agent`` that names a file, loaded so in turn (a cycle is refused).
        Stored so, a session resumed from anywhere finds them again.
        """
        return _load(Path(path), ())

    def names_tool(self, name: str) -> bool:
        """Whether ``tools`` names ``name`` itself (None names every tool); a session also
        counts the tools its import paths and MCP servers give."""
        return self.tools is None or name in self.tools

    def disposition(self, tool_name: str) -> Disposition:
        if self.execution_mode is ExecutionMode.SYNCHRONOUS:
            return Disposition.RUN_SYNC
        return self.policy.disposition(tool_name)

    def decorators(self, tool_name: str) -> Decorate | None:
        rule = self.policy.rule(tool_name)
        return rule if isinstance(rule, Decorate) else None


class SubAgent(BaseModel):
    """One entry of ``agents``: the child's own configuration, and what the parent's model
    reads of it. In an agent file ``agent`` may name another agent file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    agent: AgentConfig = Field(
        description="The child's agent: another agent file's path (from this file's folder), "
        "or its settings inline."
    )
    description: str = Field(
        "", description="What the parent's model reads of the tool (default: the child's name)."
    )


AgentConfig.model_rebuild()


def _load(path: Path, loading: tuple[Path, ...]) -> AgentConfig:
    """``AgentConfig.from_file``, ``loading`` being the files that led here."""
    if path.suffix not in (".json", ".toml"):
        raise ValueError(
            f"{path.suffix or 'a file without a suffix'} is not a format agentos reads: "
            "agent files are JSON (.json) or TOML (.toml)"
        )
    text = path.read_text()
    data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    directory = path.resolve().parent
    agents = data.get("agents") if isinstance(data, dict) else None
    for name, entry in agents.items() if isinstance(agents, dict) else ():
        named = entry.get("agent") if isinstance(entry, dict) else None
        if isinstance(named, str):
            entry["agent"] = _child(directory / named, name, (*loading, path.resolve()))
    return _beside(AgentConfig.model_validate(data), directory)


def _child(path: Path, name: str, loading: tuple[Path, ...]) -> AgentConfig:
    """A sub-agent's file, loaded from where the parent's names it."""
    where = f"agents.{name}.agent"
    if path.resolve() in loading:
        chain = " -> ".join(p.name for p in (*loading, path))
        raise ValueError(f"{where}: {path.name} names an agent that leads back to it ({chain})")
    try:
        return _load(path, loading)
    except ValidationError as error:
        from agentos._turns.agent_problems import validation_problems

        raise ValueError(f"{where}: {path}: {'; '.join(validation_problems(error))}") from None
    except (ValueError, OSError) as error:
        raise ValueError(f"{where}: {path}: {error}") from None


def _beside(config: AgentConfig, directory: Path) -> AgentConfig:
    """``config`` with its paths taken from ``directory``: its modules found there (and in
    its ``import_path``), its stdio servers started there (or in their ``cwd``)."""
    servers = {
        name: server.model_copy(update={"cwd": str(directory / (server.cwd or "."))})
        if server.command is not None
        else server
        for name, server in config.mcp_servers.items()
    }
    found_in = [str(directory / where) for where in config.import_path]
    return config.model_copy(
        update={"mcp_servers": servers, "import_path": [str(directory), *found_in]}
    )
