"""Signing in to an HTTP MCP server with OAuth: an ``oauth`` setting, a person's step through
an ``authorize`` hook, tokens kept in a 0600 file and used again at the next start, refreshed
when they expire; and each way it can go wrong, said clearly."""

from __future__ import annotations

import json
import socket
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from pydantic import AnyUrl
from pydantic import ValidationError

from agentos import McpServer
from agentos import McpServerConfig
from agentos import Runtime
from agentos import ToolsetError
from agentos.turns import McpOAuth
from tests.support import ROOT
from tests.support.asgi import free_port
from tests.support.conformance_client import browse
from tests.support.mcp_servers.oauth_server import Provider
from tests.support.mcp_servers.oauth_server import serve_oauth
from tests.toolsets.conftest import WAIT
from tests.toolsets.conftest import outcome

pytestmark = pytest.mark.anyio


class Person:
    """The person who signs in: a browser that follows the sign-in, counting each time."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, url: str) -> str:
        self.asked.append(url)
        return await browse(url)


@asynccontextmanager
async def oauth_server() -> AsyncIterator[tuple[str, Provider]]:
    port = free_port()
    with anyio.fail_after(WAIT * 2):
        async with serve_oauth(port) as provider:
            yield f"http://127.0.0.1:{port}/mcp", provider


def server(url: str, tokens: Path, person: Any = None, **oauth: Any) -> McpServer:
    settings = McpOAuth(token_file=str(tokens), **oauth)
    return McpServer.http("notes", url, oauth=settings, authorize=person, start_timeout=WAIT)


async def echo(toolset: McpServer) -> object:
    async with Runtime(toolsets=[toolset]) as runtime:
        return (await outcome(runtime, runtime.submit("echo", {"text": "hi"}))).result


# ------------------------------------------------------------------ signing in


async def test_a_person_signs_in_once_and_the_kept_token_serves_the_next_start(
    tmp_path: Path,
) -> None:
    tokens = tmp_path / "state" / "notes.json"
    person = Person()
    async with oauth_server() as (url, provider):
        assert await echo(server(url, tokens, person)) == {"result": "hi"}
        assert len(person.asked) == 1 and provider.signed_in == 1
        assert "code_challenge_method=S256" in person.asked[0]
        assert "resource=" in person.asked[0]  # RFC 8707: the token is for this server

        again = Person()
        assert await echo(server(url, tokens, again)) == {"result": "hi"}
        assert again.asked == [] and provider.signed_in == 1
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    assert stat.S_IMODE(tokens.parent.stat().st_mode) == 0o700
    kept = json.loads(tokens.read_text())
    assert set(kept) == {"tokens", "expires_at", "client_info"}
    assert kept["client_info"]["client_name"] == "agentos"
    assert [path.name for path in tokens.parent.iterdir()] == ["notes.json"]  # no temporary left


async def test_the_start_timeout_does_not_count_the_time_the_person_takes(tmp_path: Path) -> None:
    async def slow_person(url: str) -> str:
        await anyio.sleep(3)  # a person reading the page: longer than the whole start timeout
        return await browse(url)

    async with oauth_server() as (url, _):
        settings = McpOAuth(token_file=str(tmp_path / "notes.json"))
        toolset = McpServer.http(
            "notes", url, oauth=settings, authorize=slow_person, start_timeout=2
        )
        assert await echo(toolset) == {"result": "hi"}


async def test_an_expired_token_is_refreshed_without_the_person_even_after_a_restart(
    tmp_path: Path,
) -> None:
    tokens = tmp_path / "notes.json"
    async with oauth_server() as (url, provider):
        provider.lifetimes = [0]  # the first token is expired as soon as it is given
        person = Person()
        assert await echo(server(url, tokens, person)) == {"result": "hi"}
        assert provider.refreshed == 1 and len(person.asked) == 1

        kept = json.loads(tokens.read_text())
        tokens.write_text(json.dumps(kept | {"expires_at": 1.0}))  # an hour later
        nobody = server(url, tokens)  # no authorize hook: a sign-in would fail
        assert await echo(nobody) == {"result": "hi"}
        assert provider.refreshed == 2 and provider.signed_in == 1


async def test_the_default_token_file_is_the_users_state_one_per_server(tmp_path: Path) -> None:
    async with oauth_server() as (url, _):
        config = McpServerConfig(url=url, oauth=True)
        toolset = McpServer("notes", config, environ={"XDG_STATE_HOME": str(tmp_path)})
        toolset.authorize = Person()
        assert await echo(toolset) == {"result": "hi"}
    [kept] = (tmp_path / "agentos" / "mcp-oauth").iterdir()
    assert kept.name.startswith("notes-") and kept.suffix == ".json"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600


async def test_a_client_registered_beforehand_is_used_and_its_secret_never_written(
    tmp_path: Path,
) -> None:
    from mcp.shared.auth import OAuthClientInformationFull

    tokens = tmp_path / "notes.json"
    async with oauth_server() as (url, provider):
        provider.clients["made-by-hand"] = OAuthClientInformationFull(
            client_id="made-by-hand",
            client_secret="s3cret",
            redirect_uris=[AnyUrl("http://127.0.0.1:33418/callback")],
            token_endpoint_auth_method="client_secret_basic",
        )
        settings = McpOAuth(
            client_id="made-by-hand", client_secret="${NOTES_SECRET}", token_file=str(tokens)
        )
        config = McpServerConfig(url=url, oauth=settings)
        toolset = McpServer("notes", config, environ={"NOTES_SECRET": "s3cret"})
        toolset.authorize = Person()
        assert await echo(toolset) == {"result": "hi"}
        assert list(provider.clients) == ["made-by-hand"]  # no dynamic registration
    assert "s3cret" not in tokens.read_text()
    assert "client_info" not in json.loads(tokens.read_text())


# ------------------------------------------------------------------ when it cannot


async def test_with_nobody_to_ask_and_no_token_the_server_needs_sign_in(tmp_path: Path) -> None:
    async with oauth_server() as (url, _):
        with pytest.raises(ToolsetError) as raised:
            await echo(server(url, tmp_path / "notes.json"))
    assert str(raised.value) == (
        "mcp_servers.notes: the server needs a person to sign in (OAuth) and nobody can be "
        "asked: set the McpServer's authorize hook (loopback_authorize asks a person at a "
        "terminal, as agentos run and chat do); once signed in, the kept token serves"
    )


async def test_a_server_that_asks_for_sign_in_without_oauth_settings_says_to_set_them() -> None:
    async with oauth_server() as (url, _):
        with pytest.raises(ToolsetError) as raised:
            await echo(McpServer.http("notes", url, start_timeout=WAIT))
    assert str(raised.value) == (
        "mcp_servers.notes: the server wants a sign-in (HTTP 401): set oauth = true in its "
        "settings, or a valid token in its headers"
    )


async def test_a_person_who_refuses_is_an_error_saying_so(tmp_path: Path) -> None:
    async with oauth_server() as (url, provider):
        provider.refuse = True
        with pytest.raises(ToolsetError) as raised:
            await echo(server(url, tmp_path / "notes.json", Person()))
    assert str(raised.value) == (
        "mcp_servers.notes: sign-in refused: access_denied (the person said no)"
    )


async def test_a_browser_back_without_a_code_is_an_error(tmp_path: Path) -> None:
    async def lost(url: str) -> str:
        return "http://127.0.0.1:33418/callback?state=x"

    async with oauth_server() as (url, _):
        with pytest.raises(ToolsetError, match="sign-in came back without a code"):
            await echo(server(url, tmp_path / "notes.json", lost))


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("{not json", "is not an agentos token file; delete it to sign in again"),
        ('["tokens"]', "is not an agentos token file; delete it to sign in again"),
        ('{"tokens": {}, "other": 1}', "is not an agentos token file; delete it to sign in again"),
        ('{"tokens": {"token_type": "Bearer"}}', "holds a bad access_token (Field required)"),
        ('{"expires_at": "soon"}', "holds a bad expires_at"),
    ],
)
async def test_a_bad_token_file_is_an_error_naming_it(
    tmp_path: Path, content: str, said: str
) -> None:
    tokens = tmp_path / "notes.json"
    tokens.write_text(content)
    with pytest.raises(ToolsetError) as raised:
        await echo(server("http://127.0.0.1:9/mcp", tokens, Person()))
    assert str(raised.value).startswith(f"mcp_servers.notes.oauth: the token file {tokens} {said}")


async def test_a_token_file_that_cannot_be_read_or_written_is_an_error_naming_it(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "notes.json"
    folder.mkdir()
    with pytest.raises(ToolsetError, match=rf"the token file {folder} cannot be read \("):
        await echo(server("http://127.0.0.1:9/mcp", folder, Person()))
    dangling = tmp_path / "moved"  # a folder that was moved away: read as empty, not writable
    dangling.symlink_to(tmp_path / "nowhere")
    async with oauth_server() as (url, _):
        with pytest.raises(
            ToolsetError, match=r"the token file .*moved/notes\.json cannot be written"
        ):
            await echo(server(url, dangling / "notes.json", Person()))


# ------------------------------------------------------------------ a person at a terminal


async def test_the_loopback_listener_takes_the_browser_back(tmp_path: Path) -> None:
    told: list[str] = []
    port = free_port()

    async def open_browser(url: str) -> None:
        async with httpx2.AsyncClient() as client:
            back = await browse(url)
            missing = await client.get(f"http://127.0.0.1:{port}/favicon.ico")
            assert missing.status_code == 404
            page = await client.get(back)
        assert page.status_code == 200
        assert page.text == "agentos has the sign-in code and goes on. You can close this tab."

    async with oauth_server() as (url, provider), anyio.create_task_group() as group:

        def tell(url: str) -> None:
            told.append(url)
            group.start_soon(open_browser, url)

        person = McpServer.loopback_authorize(tell)
        redirect = f"http://127.0.0.1:{port}/callback"
        toolset = server(url, tmp_path / "notes.json", person, redirect_uri=redirect)
        assert await echo(toolset) == {"result": "hi"}
    assert len(told) == 1 and provider.signed_in == 1


@pytest.mark.parametrize(
    ("query", "shown"),
    [
        ("error=access_denied", "The sign-in was refused (access_denied); agentos says so too."),
        ("state=s", "This came back without a sign-in code; agentos says so too."),
    ],
)
async def test_the_loopback_page_says_only_what_came_back(query: str, shown: str) -> None:
    port = free_port()
    pages: list[str] = []

    async def come_back() -> None:
        async with httpx2.AsyncClient() as client:
            pages.append((await client.get(f"http://127.0.0.1:{port}/callback?{query}")).text)

    async with anyio.create_task_group() as group:
        person = McpServer.loopback_authorize(lambda url: group.start_soon(come_back))
        redirect = f"http%3A%2F%2F127.0.0.1%3A{port}%2Fcallback"
        came_back = await person(f"http://auth.example/authorize?redirect_uri={redirect}")
    assert came_back == f"http://127.0.0.1:{port}/callback?{query}"
    assert pages == [shown]


async def test_the_loopback_listener_refuses_a_redirect_it_cannot_hear() -> None:
    person = McpServer.loopback_authorize(lambda url: None)
    with pytest.raises(ToolsetError, match="is not an http:// loopback address"):
        await person("https://auth.example/authorize?redirect_uri=https%3A%2F%2Fapp.example%2Fcb")


async def test_the_loopback_listener_gives_up_when_nobody_comes_back() -> None:
    person = McpServer.loopback_authorize(lambda url: None, within=0)
    redirect = f"http%3A%2F%2F127.0.0.1%3A{free_port()}%2Fcallback"
    with pytest.raises(ToolsetError, match="nobody signed in within 0 s"):
        await person(f"http://auth.example/authorize?redirect_uri={redirect}")


async def test_the_loopback_listener_says_when_its_port_is_taken() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        person = McpServer.loopback_authorize(lambda url: None)
        redirect = f"http%3A%2F%2F127.0.0.1%3A{port}%2Fcallback"
        with pytest.raises(ToolsetError, match=rf"cannot listen on port {port}"):
            await person(f"http://auth.example/authorize?redirect_uri={redirect}")


# ------------------------------------------------------------------ the settings


def test_oauth_true_is_every_default_and_false_none() -> None:
    config = McpServerConfig.model_validate({"url": "https://notes.example/mcp", "oauth": True})
    assert config.oauth == McpOAuth()
    assert config.oauth.client_name == "agentos"
    assert config.oauth.redirect_uri == "http://127.0.0.1:33418/callback"
    off = McpServerConfig.model_validate({"url": "https://notes.example/mcp", "oauth": False})
    assert off.oauth is None


URL = "https://notes.example/mcp"


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"command": "notes", "oauth": True}, "oauth apply to a url, not to a command"),
        ({"url": URL, "oauth": {"scopes": ["x"]}}, "oauth.scopes\n  Extra inputs"),
        ({"url": URL, "oauth": {"client_secret": "s"}}, "client_secret needs the client_id"),
        ({"url": URL, "oauth": {"client_name": ""}}, "client_name\n  String should have at least"),
        (
            {"url": URL, "oauth": {"client_metadata_url": "http://a.example/c.json"}},
            "client_metadata_url is an https:// URL with a path",
        ),
        (
            {"url": URL, "oauth": {"client_metadata_url": "https://a.example/"}},
            "client_metadata_url is an https:// URL with a path",
        ),
        (
            {"url": URL, "oauth": {"redirect_uri": "myapp:/cb"}},
            "redirect_uri is an http:// or https:// URL",
        ),
        ({"url": URL, "oauth": "yes"}, "oauth\n  Input should be a valid dictionary or instance"),
    ],
)
def test_bad_oauth_settings_are_refused_saying_which(settings: dict[str, Any], said: str) -> None:
    with pytest.raises(ValidationError) as raised:
        McpServerConfig.model_validate(settings)
    assert said in str(raised.value)


async def test_the_command_line_asks_its_person_to_sign_in_and_goes_on(
    tmp_path: Path, env: dict[str, str]
) -> None:
    port = free_port()
    agent = tmp_path / "agent.toml"
    async with oauth_server() as (url, provider):
        agent.write_text(
            f'name = "notes"\nmodel = "test"\ntools = []\n[mcp_servers.notes]\nurl = "{url}"\n'
            f'oauth = {{ token_file = "{tmp_path / "notes.json"}", '
            f'redirect_uri = "http://127.0.0.1:{port}/callback" }}\n'
        )
        argv = [sys.executable, "-m", "agentos.cli", "run", "--agent", str(agent), "hello"]
        async with await anyio.open_process(argv, env=env, cwd=ROOT) as run:
            assert run.stderr is not None
            told = await BufferedByteReceiveStream(run.stderr).receive_until(b"\n", 4096)
            said = told.decode()
            assert said.startswith("agentos: MCP server notes asks you to sign in: open http")
            back = await browse(said.split("open ", 1)[1])
            async with httpx2.AsyncClient() as browser:
                page = await browser.get(back)
            assert page.status_code == 200
            rest = b"".join([chunk async for chunk in run.stderr])
            assert await run.wait() == 0, rest
    assert provider.signed_in == 1
