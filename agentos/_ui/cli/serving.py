"""The options of a command that serves a host over HTTP (``agentos mcp --http``, ``agentos
a2a``): the address it binds, and the token clients show (or none, on loopback)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

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
