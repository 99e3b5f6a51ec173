"""``agentos a2a``: the command line's host served as an A2A agent over HTTP."""

from __future__ import annotations

import logging
import secrets

import click

from agentos import Host
from agentos._ui.cli.agent import Agent, choose_model
from agentos._ui.cli.common import CliError, run_interruptibly
from agentos._ui.cli.database import Database
from agentos._ui.cli.serving import address_and_token, check_token_choice
from agentos._ui.cli.talk import agent_option


@click.command("a2a")
@agent_option(" whose sessions the tasks run in")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    metavar="PORT",
    help="The port to serve (0: a free one, printed).",
)
@address_and_token(
    "AGENTOS_A2A_TOKEN",
    no_token="On a loopback address: ask no token (every local client is then one owner); "
    "the Host and Origin guard still holds.",
)
@click.pass_obj
def a2a(
    db: Database, agent: Agent, port: int, bind: str, token: str | None, no_token: bool
) -> None:
    """Serve the agent as an A2A agent (the Agent2Agent protocol, v1.0, JSON-RPC with
    streaming), so another agent sends it messages: each starts a turn of a session (the
    message's context) as a task, which streams what the turn's calls do, asks its client
    when a call asks a person (input-required), and ends completed with the model's answer.
    Tasks are kept in the session database, each its token holder's. Ctrl-C stops."""
    check_token_choice(bind, token, no_token, "AGENTOS_A2A_TOKEN")
    config = agent.config

    async def main() -> None:
        import uvicorn

        # The SDK warns, as it stops, of the event queues it closes itself: not news.
        logging.getLogger("a2a.server.events.event_queue_v2").setLevel(logging.ERROR)

        from agentos._ui.a2a.app import a2a_app, endpoint
        from agentos._ui.web.listen import listen

        provider = choose_model(config, lambda line: click.echo(line, err=True))
        chosen = None if no_token else token or secrets.token_urlsafe(24)
        try:
            listening = listen(bind, port, stall_seconds=None)
        except OSError as error:
            raise CliError(f"cannot listen on {bind}:{port}: {error.strerror}") from None
        bound = listening.getsockname()[1]
        async with (
            await db.open() as store,
            agent.runtime() as runtime,
            Host(runtime, provider, store=store) as host,
        ):
            app = a2a_app(host, config, token=chosen, bind=bind, port=bound)
            asked = "no token (loopback only)" if chosen is None else f"token: {chosen}"
            click.echo(
                f"agentos: A2A at {endpoint(bind, bound)}  {asked}  (Ctrl-C stops)", err=True
            )
            server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
            await server.serve(sockets=[listening])

    run_interruptibly(main)
