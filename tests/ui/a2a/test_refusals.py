"""What ``agentos a2a`` and ``agentos.a2a.app`` refuse, each with a clear error: no token off
loopback, a token and --no-token at once, a host without a store to keep tasks in."""

from __future__ import annotations

import math
from pathlib import Path

import anyio
import httpx
import pytest

import agentos.a2a
from agentos import AgentConfig
from agentos import Host
from agentos import Runtime
from agentos import SqliteStore
from agentos import UsageError
from tests.support import cli
from tests.support.backends import echo
from tests.support.serving import serving
from tests.ui.a2a.running import a2a_server
from tests.ui.a2a.running import agent_file
from tests.ui.a2a.running import connected
from tests.ui.a2a.running import everything
from tests.ui.a2a.running import message


def test_no_token_is_refused_off_loopback_and_beside_a_token(env: dict[str, str]) -> None:
    off_loopback = cli.agentos(env, "a2a", "--host", "0.0.0.0", "--no-token")
    off_loopback.one_line_error(2, "--no-token", "loopback", "0.0.0.0")
    both = cli.agentos(env, "a2a", "--no-token", "--token", "sesame")
    both.one_line_error(2, "--no-token", "disagree")
    from_environment = cli.agentos({**env, "AGENTOS_A2A_TOKEN": "sesame"}, "a2a", "--no-token")
    from_environment.one_line_error(2, "$AGENTOS_A2A_TOKEN")


@pytest.mark.anyio
async def test_the_app_needs_a_store_and_a_token_off_loopback() -> None:
    async with Runtime() as runtime, Host(runtime, echo()) as host:
        with pytest.raises(UsageError, match="keeps its tasks in the host's store"):
            agentos.a2a.app(host, AgentConfig(), token="t", port=1)
        with pytest.raises(ValueError, match="loopback addresses only"):
            agentos.a2a.app(host, AgentConfig(), token=None, bind="0.0.0.0", port=1)


@pytest.mark.anyio
async def test_without_a_token_a_loopback_client_is_served(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with a2a_server(tmp_path, env, options=["--no-token"]) as (url, token), anyio.fail_after(60):
        assert token is None
        async with httpx.AsyncClient() as http:
            card = (await http.get(url + ".well-known/agent-card.json")).json()
            assert "securitySchemes" not in card  # nothing to show
        async with connected(url, None, streaming=False) as client:
            (done,) = await everything(client.send_message(message("hello")))
            assert done.task.artifacts


def test_an_ask_timeout_is_seconds_above_0(env: dict[str, str]) -> None:
    for given, said in (("0", "not in the range x>0"), ("-1", "not in the range x>0")):
        cli.agentos(env, "a2a", "--ask-timeout", given).one_line_error(2, "--ask-timeout", said)
    for command in ("a2a", "mcp"):
        refused = cli.agentos(env, command, "--ask-timeout", "nan")
        refused.one_line_error(2, "--ask-timeout", "nan is not a number of seconds")


@pytest.mark.anyio
async def test_the_apps_ask_timeout_is_seconds_above_0(tmp_path: Path) -> None:
    async with (
        await SqliteStore.open(tmp_path / "agentos.db") as store,
        Runtime() as runtime,
        Host(runtime, echo(), store=store) as host,
    ):
        for wrong in (0, -1.5, math.nan):
            with pytest.raises(ValueError, match=f"above 0, not {wrong}"):
                agentos.a2a.app(host, AgentConfig(), token="t", port=1, ask_timeout=wrong)
        for wrong_type in ("600", True):
            with pytest.raises(TypeError, match="ask_timeout is a number of seconds, not"):
                agentos.a2a.app(host, AgentConfig(), token="t", port=1, ask_timeout=wrong_type)  # type: ignore[arg-type]


def test_a_public_url_must_be_http(env: dict[str, str]) -> None:
    refused = cli.agentos(env, "a2a", "--public-url", "ftp://agents.example/")
    refused.one_line_error(2, "ftp://agents.example/", "http://")


@pytest.mark.anyio
async def test_the_card_names_the_public_url_and_its_host_is_served(
    tmp_path: Path, env: dict[str, str]
) -> None:
    public = "https://agents.example/worker/"
    options = ["--no-token", "--allow-host", "proxy.example", "--public-url", public]
    args = ["a2a", "--agent", agent_file(tmp_path, "tests.support.tools"), *options]
    with serving(args, env, "agentos: A2A at ") as words, anyio.fail_after(60):
        assert words[3] == public  # the first line names it, then where it listens
        card_path = words[-1].rstrip(")") + ".well-known/agent-card.json"
        async with httpx.AsyncClient() as http:
            card = (await http.get(card_path)).json()
            assert [i["url"] for i in card["supportedInterfaces"]] == [public]
            for name, status in (
                ("proxy.example", 200),
                ("agents.example", 200),
                ("x.example", 421),
            ):
                answer = await http.get(card_path, headers={"Host": name})
                assert answer.status_code == status, name
