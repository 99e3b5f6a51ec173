"""``agentos mcp``: the command line's host served over MCP, on stdio or streamable HTTP."""

from __future__ import annotations

import secrets

import click

from agentos import Host
from agentos._ui.cli.agent import Agent
from agentos._ui.cli.agent import choose_model
from agentos._ui.cli.common import CliError
from agentos._ui.cli.common import run_interruptibly
from agentos._ui.cli.database import Database
from agentos._ui.cli.serving import address_and_token
from agentos._ui.cli.serving import ask_timeout_option
from agentos._ui.cli.serving import check_token_choice
from agentos._ui.cli.talk import agent_option


@click.command("mcp")
@agent_option(" of the sessions clients start")
@click.option(
    "--http",
    "port",
    type=click.IntRange(0, 65535),
    metavar="PORT",
    help="Serve streamable HTTP on PORT (0: a free port) instead of stdio.",
)
@address_and_token(
    "AGENTOS_MCP_TOKEN",
    when="HTTP: ",
    no_token="HTTP on a loopback address: ask no token (for local clients that send none, "
    "such as the MCP conformance suite); the Host and Origin guard still holds.",
)
@ask_timeout_option("elicitation")
@click.option(
    "--max-tasks",
    type=click.IntRange(1),
    default=100,
    show_default=True,
    metavar="COUNT",
    help="The most tasks (a post run as an MCP task) one client holds still working; it is "
    "refused another until one ends.",
)
@click.pass_obj
def mcp(
    db: Database,
    agent: Agent,
    port: int | None,
    bind: str,
    token: str | None,
    no_token: bool,
    ask_timeout: float,
    max_tasks: int,
) -> None:
    """Serve agentos over MCP, so another agent (Claude Code, Cursor, another agentos) can
        start sessions, post to them, and watch and cancel their calls. Without --http it
        speaks MCP on stdin and stdout; the agents clients may start are the agent file's and
        its sub-agents (Ctrl-C stops). What a call asks a person goes to the client that posted
    (elicitation), or waits for its answer tool."""
    from agentos._ui.mcp.server import HostOverMcp  # the MCP server loads only for this

    if no_token and port is None:
        raise click.UsageError("--no-token is for --http (stdio asks no token)")
    check_token_choice(bind, token, no_token, "AGENTOS_MCP_TOKEN")
    config = agent.config
    agents = {name: child.agent for name, child in config.agents.items()}
    agents[config.name] = config

    async def main() -> None:
        provider = choose_model(config, lambda line: click.echo(line, err=True))
        async with (
            await db.open() as store,
            agent.runtime() as runtime,
            Host(runtime, provider, store=store) as host,
        ):
            app = HostOverMcp(
                host, agents, config.name, ask_timeout=ask_timeout, max_tasks=max_tasks
            ).app()
            if port is None:
                await app.run_stdio_async()
            else:
                chosen = None if no_token else token or secrets.token_urlsafe(24)
                await _serve_http(app, bind, port, chosen)

    run_interruptibly(main)


async def _serve_http(app: object, bind: str, port: int, token: str | None) -> None:
    import uvicorn
    from mcp.server.mcpserver import MCPServer

    from agentos._ui.mcp.http import endpoint
    from agentos._ui.mcp.http import http_app
    from agentos._ui.web.listen import listen

    assert isinstance(app, MCPServer)
    try:
        listening = listen(bind, port, stall_seconds=None)
    except OSError as error:
        raise CliError(f"cannot listen on {bind}:{port}: {error.strerror}") from None
    address = endpoint(bind, listening.getsockname()[1])
    asked = "no token (loopback only)" if token is None else f"token: {token}"
    click.echo(f"agentos: MCP at {address}  {asked}  (Ctrl-C stops)", err=True)
    served = http_app(app, bind, listening.getsockname()[1], token)
    server = uvicorn.Server(uvicorn.Config(served, log_level="warning"))
    await server.serve(sockets=[listening])
