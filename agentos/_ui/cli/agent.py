"""The agent a command runs: its configuration, its tools and MCP servers, and its model.

Without ``--agent`` it is the demo agent with the demo tools. With an agent file, the
runtime gets exactly the tools the file names (a bare name is one of the demo tools)
and its MCP servers; import paths resolve from the file's directory and the current
one, and a stdio server starts in the file's directory. Every problem is one line
naming the setting, as a usage error (exit 2).
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from collections.abc import Callable
from contextlib import AsyncExitStack
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import click
import pydantic

from agentos import AgentConfig
from agentos import AgentTools
from agentos import ClosableProvider
from agentos import FunctionModel
from agentos import McpServer
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import ProviderError
from agentos import RayRunner
from agentos import Runtime
from agentos import ToolImportError
from agentos import ToolsetError
from agentos import UsageError
from agentos import agent_tools
from agentos.board import NEW_THREAD_TOOL
from agentos.demo import tools as demo_tools
from agentos.turns import CAPABILITIES
from agentos.turns import fit_problems
from agentos.turns import validation_problems

AGENT_HINT = "'--agent'"


@dataclass(frozen=True, slots=True)
class Agent:
    """A command's agent: its configuration, and the tools and servers its runtime gets."""

    config: AgentConfig
    tools: AgentTools
    source: str
    """Where it came from, for an error: the file, or "the stored session"."""

    @asynccontextmanager
    async def runtime(self) -> AsyncIterator[Runtime]:
        """A runtime with the agent's tools, its MCP servers started; a server that does
        not start, or a policy naming a tool nobody gives, is a usage error."""
        async with AsyncExitStack() as stack:
            try:
                runtime = await stack.enter_async_context(
                    Runtime(self.tools.tools, toolsets=self.tools.toolsets)
                )
            except ToolsetError as error:
                raise _bad(self.source, str(error)) from None
            if _on_ray(self.config):
                runtime.add_runner(RAY, _ray_runner(self.tools, self.source))
            problems = fit_problems(self.config, runtime.tools, runtime.runners)
            if problems:
                raise _bad(self.source, "; ".join(problems))
            yield runtime


RAY = "ray"
"""The isolated runner an agent file names to run its Python tools' calls on Ray."""


def _on_ray(config: AgentConfig) -> bool:
    """Whether the agent, or one of its sub-agents down the tree, names the Ray runner."""
    return config.isolated_runner == RAY or any(
        _on_ray(child.agent) for child in config.agents.values()
    )


def _ray_runner(tools: AgentTools, source: str) -> RayRunner:
    """The agent's Python tools on the cluster ``ray.init()`` reaches (a local one)."""
    try:
        import ray  # noqa: F401 - only whether it is installed
    except ImportError:
        raise _bad(
            source, "isolated_runner = 'ray' needs Ray: pip install 'agentos[ray]'"
        ) from None
    return RayRunner(tools.tools)


DEMO = Agent(demo_tools.DEFAULT_AGENT, AgentTools(list(demo_tools.TOOLS)), "the demo agent")


def load_agent(path: Path) -> Agent:
    """The agent file, its tools resolved (``click.BadParameter`` naming each problem)."""
    try:
        config = AgentConfig.from_file(path)
    except pydantic.ValidationError as error:
        raise _bad(path, "; ".join(validation_problems(error))) from None
    except (ValueError, OSError) as error:  # JSON, TOML, format and reading errors
        raise _bad(path, str(error)) from None
    return agent_of(config, str(path))


def agent_of(config: AgentConfig, source: str) -> Agent:
    """The agent ``config`` describes, its modules found here and in its ``import_path``."""
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        tools = agent_tools(config, demo_tools.TOOLS, environ=os.environ)
    except ToolImportError as error:
        raise _bad(source, str(error)) from None
    for server in tools.toolsets:
        if not isinstance(server, McpServer):
            continue
        if server.config.oauth is not None and server.authorize is None:
            server.authorize = McpServer.loopback_authorize(_sign_in_told(server.name))
    _model_functions(config, source)
    if not config.mcp_servers and not config.a2a_agents:  # else known once they start
        runners = (RAY,) if _on_ray(config) else ()
        problems = fit_problems(config, [tool.name for tool in tools.tools], runners)
        if problems:
            raise _bad(source, "; ".join(problems))
    return Agent(config, tools, source)


def _sign_in_told(server: str) -> Callable[[str], object]:
    """How the command line tells its person to sign in to ``server`` (on stderr)."""

    def tell(url: str) -> None:
        click.echo(f"agentos: MCP server {server} asks you to sign in: open {url}", err=True)

    return tell


def _model_functions(config: AgentConfig, source: str) -> None:
    """A usage error if the agent, or a sub-agent, names a model function that is not there."""
    for where, agent in (("", config), *_children(config, "")):
        try:
            FunctionModel.named(agent.model, agent.import_path)
        except UsageError as error:
            raise _bad(source, f"{where}model: {error}") from None


def _children(config: AgentConfig, where: str) -> list[tuple[str, AgentConfig]]:
    found = []
    for name, child in config.agents.items():
        path = f"{where}agents.{name}.agent: "
        found += [(path, child.agent), *_children(child.agent, path)]
    return found


def _bad(source: Path | str, problem: str) -> click.BadParameter:
    return click.BadParameter(f"{source}: {problem}", param_hint=AGENT_HINT)


OFFLINE_MODELS = ("test", "scripted")
"""The models that run without the Anthropic API: the test model and the demo's script
(and a function the agent names by import path, ``module:function``)."""


def _scripted(config: AgentConfig) -> bool:
    """Whether the agent's model is a function it names by import path."""
    return FunctionModel.named(config.model, config.import_path) is not None


def model_problem(config: AgentConfig) -> str | None:
    """Why the agent's model cannot run here (None: it can): a Claude model the agent
    names, with no ``ANTHROPIC_API_KEY``. An agent that names no model gets the scripted
    model offline, as the demo does."""
    if config.model in OFFLINE_MODELS or not config.model_named or _scripted(config):
        return None
    if os.environ.get("ANTHROPIC_API_KEY"):
        return None
    return (
        f"model {config.model!r} needs ANTHROPIC_API_KEY, which is not set: set it, or write "
        'model = "test" in the agent file to run offline'
    )


def refuse_unrunnable(agent: Agent) -> None:
    """A usage error, naming where the agent came from, if its model cannot run here."""
    problem = model_problem(agent.config)
    if problem is not None:
        raise click.UsageError(f"{agent.source}: {problem}")


class CannotRun:
    """The model of an agent whose model cannot run: every request fails, saying why in
    words (what ``agentos serve``'s page shows when a session starts or goes on)."""

    name = "unavailable"

    def __init__(self, problem: str) -> None:
        self.problem = problem

    async def aclose(self) -> None:
        """Nothing to give back: it never connects."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise ProviderError("missing_key", self.problem)


def choose_model(
    config: AgentConfig,
    say: Callable[[str], None],
    *,
    source: str = "the agent",
    refuse: bool = True,
) -> ClosableProvider:
    """The agent's ``model``: a function it names by import path (``module:function``),
    "test" and "scripted" are offline; another is Claude when ``ANTHROPIC_API_KEY`` is set.
    Without the key, a model the agent names is a usage error naming ``source``
    (``refuse``), else a model that fails each request saying so; a model left unnamed is
    the scripted one. Says which."""
    function = FunctionModel.named(config.model, config.import_path)
    if function is not None:
        say(f"model: {config.model} (offline: a function you script)")
        return function
    if config.model == "test":
        from agentos import TestModel

        say("model: test (offline: calls every tool once, then quotes the results)")
        return TestModel(skip=(*CAPABILITIES, NEW_THREAD_TOOL))
    problem = model_problem(config)
    if problem is not None:
        if refuse:
            raise click.UsageError(f"{source}: {problem}")
        say(f"model: none can run: {problem}")
        return CannotRun(problem)
    if config.model != "scripted" and os.environ.get("ANTHROPIC_API_KEY"):
        from agentos import AnthropicProvider

        base_url = os.environ.get("ANTHROPIC_BASE_URL")
        if base_url:
            say(f"model: Anthropic API at {base_url} (ANTHROPIC_BASE_URL)")
        else:
            say("model: Claude (ANTHROPIC_API_KEY is set)")
        return AnthropicProvider()
    say("model: scripted (offline; set ANTHROPIC_API_KEY for Claude)")
    return demo_tools.scripted_model()
