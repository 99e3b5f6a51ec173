"""How a client gets into ``agentos mcp --http`` (issue 49): with the token, told the way
the MCP authorization spec has a client find out (401, ``WWW-Authenticate`` pointing at
the protected-resource metadata); or, on a loopback address and asked to, with none, where
the Host and Origin guard still turns away a page elsewhere and a DNS-rebound name.
"""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from tests.support import cli
from tests.ui.mcp.running import ACCEPT
from tests.ui.mcp.running import INITIALIZE
from tests.ui.mcp.running import connected
from tests.ui.mcp.running import http_server
from tests.ui.mcp.running import structured

pytestmark = pytest.mark.anyio


async def test_a_client_without_the_token_is_told_where_to_find_out_how_to_get_one(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with http_server(tmp_path, env, within=60) as (url, token):
        assert token is not None
        origin = url.removesuffix("/mcp")
        metadata_url = f"{origin}/.well-known/oauth-protected-resource/mcp"
        async with httpx2.AsyncClient() as http:
            bare = await http.post(url, json=INITIALIZE, headers=ACCEPT)
            assert bare.status_code == 401
            assert bare.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata_url}"'
            wrong = await http.post(url, json=INITIALIZE, headers={"Authorization": "Bearer no"})
            assert wrong.status_code == 401
            assert wrong.headers["www-authenticate"].endswith(', error="invalid_token"')
            for where in (metadata_url, f"{origin}/.well-known/oauth-protected-resource"):
                metadata = await http.get(where)  # no token needed to read it
                assert metadata.status_code == 200, where
                document = metadata.json()
                assert document["resource"] == url
                assert document["bearer_methods_supported"] == ["header"]
                assert "Authorization: Bearer TOKEN" in document["agentos_token"]
            elsewhere = await http.get(f"{origin}/anything-else")
            assert elsewhere.status_code == 401  # only the metadata is open
        async with connected(url, token) as client:
            assert structured(await client.call_tool("list_running_tool_calls", {})) == {
                "tool_calls": []
            }


async def test_on_loopback_a_client_may_come_without_a_token_but_not_from_elsewhere(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with http_server(tmp_path, env, options=["--no-token"], within=60) as (url, token):
        assert token is None and url.startswith("http://127.0.0.1:")
        async with connected(url, None) as client:
            started = structured(await client.call_tool("start_session", {"message": "hi"}))
            assert started["answer"].splitlines() == ["count: 3", "shout: EXAMPLE"]
        port = url.split(":")[2].split("/")[0]
        async with httpx2.AsyncClient() as http:
            page = await http.post(
                url, json=INITIALIZE, headers={**ACCEPT, "Origin": "http://evil.example"}
            )
            assert page.status_code == 403  # a page elsewhere, posting to the local server
            rebound = await http.post(
                url, json=INITIALIZE, headers={**ACCEPT, "Host": f"evil.example:{port}"}
            )
            assert 400 <= rebound.status_code < 500  # a name that resolves here, but not ours
            ours = await http.post(
                url, json=INITIALIZE, headers={**ACCEPT, "Host": f"localhost:{port}"}
            )
            assert ours.status_code == 200
            no_metadata = await http.get(
                url.removesuffix("/mcp") + "/.well-known/oauth-protected-resource"
            )
            assert no_metadata.status_code == 404  # nothing to authorize


def test_no_token_is_refused_off_loopback_and_where_it_means_nothing(env: dict[str, str]) -> None:
    off_loopback = cli.agentos(env, "mcp", "--http", "0", "--host", "0.0.0.0", "--no-token")
    off_loopback.one_line_error(2, "--no-token", "loopback", "0.0.0.0")
    on_stdio = cli.agentos(env, "mcp", "--no-token")
    on_stdio.one_line_error(2, "--no-token is for --http")
    both = cli.agentos(env, "mcp", "--http", "0", "--no-token", "--token", "sesame")
    both.one_line_error(2, "--no-token", "disagree")
    from_environment = cli.agentos(
        {**env, "AGENTOS_MCP_TOKEN": "sesame"}, "mcp", "--http", "0", "--no-token"
    )
    from_environment.one_line_error(2, "$AGENTOS_MCP_TOKEN")
