"""The options of a command that serves a host to other agents (``agentos mcp``, ``agentos
a2a``): the address it binds, the token clients show (or none, on loopback), and how long a
client has to answer a question."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

import click

from agentos._ui.asking import ASK_TIMEOUT
from agentos._ui.loopback import refusal

F = TypeVar("F", bound=Callable[..., object])


def address_and_token(variable: str, *, when: str = "", no_token: str) -> Callable[[F], F]:
    """``--host ADDRESS`` (as ``bind``), ``--token TEXT`` (default ``$variable``) and
    ``--no-token`` (``no_token`` its help); ``when`` starts their help (``"HTTP: "``)."""

    def said(text: str) -> str:
        return f"{when}{text}" if when else text[0].upper() + text[1:]

    def decorate(command: F) -> F:
        for option in reversed(
            (
                click.option(
                    "--host",
                    "bind",
                    default="127.0.0.1",
                    show_default=True,
                    metavar="ADDRESS",
                    help=said("the address to bind."),
                ),
                click.option(
                    "--token",
                    envvar=variable,
                    metavar="TEXT",
                    help=said(
                        "what clients send as 'Authorization: Bearer TEXT' "
                        f"[default: ${variable}, else generated and printed]."
                    ),
                ),
                click.option("--no-token", is_flag=True, help=no_token),
            )
        ):
            command = option(command)
        return command

    return decorate


def check_token_choice(bind: str, token: str | None, no_token: bool, variable: str) -> None:
    """A ``UsageError`` for ``--no-token`` beside a token, or off loopback."""
    if no_token and token is not None:
        raise click.UsageError(f"--no-token and a token (--token, ${variable}) disagree")
    refused = refusal(bind, None if no_token else "")
    if refused:
        raise click.UsageError(refused)


def ask_timeout_option(how: str, then: str = "") -> Callable[[F], F]:
    """``--ask-timeout SECONDS`` (as ``ask_timeout``): how long a client has to answer a
    question a call asks, ``how`` saying how it is asked, before it is declined (``then``:
    what follows, "; ...")."""
    return click.option(
        "--ask-timeout",
        type=click.FloatRange(0, min_open=True),
        default=ASK_TIMEOUT,
        show_default=True,
        metavar="SECONDS",
        help=f"How long a client has to answer a question a call asks ({how}) before it is "
        f"declined{then}.",
        callback=_a_number,
    )


def _a_number(context: click.Context, parameter: click.Parameter, value: float) -> float:
    if math.isnan(value):  # FloatRange lets it by
        raise click.BadParameter(f"{value} is not a number of seconds")
    return value
