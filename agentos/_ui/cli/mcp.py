"""``agentos mcp``: the command line's host served over MCP, on stdio or streamable HTTP."""

from __future__ import annotations

import secrets

import click

from agentos import Host
from agentos._ui.cli.agent import Agent, choose_model
from agentos._ui.cli.common import CliError, run_interruptibly
from agentos._ui.cli.database import Database
from agentos._ui.cli.talk import agent_option

LOOPBACK = "127.0.0.1"


@click.command("mcp")
@agent_option(" of the sessions clients start")
@click.option(
    "--http",
    "port",
    type=click.IntRange(0, 65535),
    metavar="PORT",
    help="Serve streamable HTTP on 127.0.0.1:PORT (0: a free port) instead of stdio.",
)
@click.option(
    "--token",
    envvar="AGENTOS_MCP_TOKEN",
    metavar="TEXT",
    help="HTTP: what clients send as 'Authorization: Bearer TEXT' [default: $AGENTOS_MCP_TOKEN, "
    "else generated and printed].",
)
@click.pass_obj
def mcp(db: Database, agent: Agent, port: int | None, token: str | None) -> None:
    """Serve agentos over MCP, so another agent (Claude Code, Cursor, another agentos) can
    start sessions, post to them, and watch and cancel their calls. Without --http it
    speaks MCP on stdin and stdout; the agents clients may start are the agent file's and
    its sub-agents (Ctrl-C stops)."""
    from agentos._ui.mcp.server import HostOverMcp  # the MCP server loads only for this

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
            app = HostOverMcp(host, agents, config.name).app()
            if port is None:
                await app.run_stdio_async()
            else:
                await _serve_http(app, port, token or secrets.token_urlsafe(24))

    run_interruptibly(main)


async def _serve_http(app: object, port: int, token: str) -> None:
    import uvicorn
    from mcp.server.mcpserver import MCPServer

    from agentos._ui.mcp.guard import BearerGuard
    from agentos._ui.web.listen import listen

    assert isinstance(app, MCPServer)
    try:
        listening = listen(LOOPBACK, port, stall_seconds=None)
    except OSError as error:
        raise CliError(f"cannot listen on {LOOPBACK}:{port}: {error.strerror}") from None
    address = f"http://{LOOPBACK}:{listening.getsockname()[1]}/mcp"
    click.echo(f"agentos: MCP at {address}  token: {token}  (Ctrl-C stops)", err=True)
    guarded = BearerGuard(app.streamable_http_app(host=LOOPBACK), token)
    server = uvicorn.Server(uvicorn.Config(guarded, log_level="warning"))
    await server.serve(sockets=[listening])
