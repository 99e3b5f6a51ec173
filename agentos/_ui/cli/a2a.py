"""``agentos a2a``: the command line's host served as an A2A agent over HTTP."""

from __future__ import annotations

import logging
import secrets

import click

from agentos import Host
from agentos._ui.cli.agent import Agent
from agentos._ui.cli.agent import choose_model
from agentos._ui.cli.common import CliError
from agentos._ui.cli.common import run_interruptibly
from agentos._ui.cli.common import server_takes_ctrl_c
from agentos._ui.cli.database import Database
from agentos._ui.cli.serving import address_and_token
from agentos._ui.cli.serving import ask_timeout_option
from agentos._ui.cli.serving import check_token_choice
from agentos._ui.cli.talk import agent_option

INSTALL = "pip install 'agentos[a2a]'"


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
@click.option(
    "--allow-host",
    "allowed_hosts",
    metavar="NAME",
    multiple=True,
    help="Also answer requests whose Host header names NAME (besides this machine's loopback "
    "names and the address bound). Repeatable.",
)
@click.option(
    "--public-url",
    metavar="URL",
    help="Where clients reach the agent (a reverse proxy's URL, or this machine's name), as "
    "its card says; its host name is allowed too [default: the address bound].",
)
@ask_timeout_option(
    "input-required, counted from when its task shows it", "; the turn then goes on"
)
@click.pass_obj
def a2a(
    db: Database,
    agent: Agent,
    port: int,
    bind: str,
    token: str | None,
    no_token: bool,
    allowed_hosts: tuple[str, ...],
    public_url: str | None,
    ask_timeout: float,
) -> None:
    """Serve the agent as an A2A agent (the Agent2Agent protocol, v1.0, JSON-RPC with
    streaming), so another agent sends it messages: each starts a turn of a session (the
    message's context) as a task, which streams what the turn's calls do, asks its client
    when a call asks a person (input-required; unanswered for --ask-timeout, the question is
    declined and the turn goes on), and ends completed with the model's answer. A context
    runs one task at a time: a message that would start another meanwhile is rejected.
    Tasks are kept in the session database, each its token holder's. Ctrl-C stops."""
    try:
        import a2a.server  # noqa: F401 - the extra's; the command needs it
    except ImportError as error:
        raise CliError(f"agentos a2a needs the A2A SDK ({error}): {INSTALL}") from None
    check_token_choice(bind, token, no_token, "AGENTOS_A2A_TOKEN")
    if public_url is not None:
        from agentos._ui.a2a.app import public_host  # the A2A SDK loads only for this

        try:
            public_host(public_url)
        except ValueError as error:
            raise click.UsageError(str(error)) from None
    config = agent.config

    async def main() -> None:
        import uvicorn

        # The SDK warns, as it stops, of the event queues it closes itself: not news.
        logging.getLogger("a2a.server.events.event_queue_v2").setLevel(logging.ERROR)

        from agentos._ui.a2a.app import a2a_app
        from agentos._ui.a2a.app import endpoint
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
            app = a2a_app(
                host,
                config,
                token=chosen,
                bind=bind,
                port=bound,
                hosts=allowed_hosts,
                url=public_url,
                ask_timeout=ask_timeout,
            )  # checked above
            asked = "no token (loopback only)" if chosen is None else f"token: {chosen}"
            here = endpoint(bind, bound)
            where = "" if public_url is None else f"; served at {here}"
            shown = public_url or here
            click.echo(f"agentos: A2A at {shown}  {asked}  (Ctrl-C stops{where})", err=True)
            server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
            with server_takes_ctrl_c():
                await server.serve(sockets=[listening])

    run_interruptibly(main)
