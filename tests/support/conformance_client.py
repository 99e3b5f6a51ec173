"""agentos as the MCP conformance suite's client: ``python -m tests.support.conformance_client
URL`` (the suite appends the URL and sets ``MCP_CONFORMANCE_SCENARIO`` and, for some
scenarios, ``MCP_CONFORMANCE_CONTEXT``).

It is what an agent file's HTTP server with ``oauth = true`` is, in a ``Runtime``: a person
who accepts every question with the form's defaults, and a headless browser for the sign-in
(it opens the authorization URL and, as a browser would, reads where it is sent back to,
without following it). Then it calls each tool the server lists once. Every step goes to
stderr; it exits 1 when the server cannot be reached or signed in to.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import httpx2

from agentos import Answer
from agentos import AnswerAction
from agentos import McpServer
from agentos import McpServerConfig
from agentos import Runtime
from agentos import ToolsetError
from agentos.turns import McpOAuth
from components import Json

CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""agentos's client metadata document, as the suite's CIMD scenario expects it."""


async def accept(asked: Any) -> Answer:
    """The person: accepts, leaving every field to its default."""
    print("ASKED", json.dumps(asked.question.to_json())[:500], file=sys.stderr)
    return Answer(AnswerAction.ACCEPT, {})


async def browse(url: str) -> str:
    """The browser: open the authorization URL; where it is sent back to is the answer."""
    print("SIGN-IN", url, file=sys.stderr)
    async with httpx2.AsyncClient() as client:
        response = await client.get(url, follow_redirects=False)
    location = response.headers.get("location")
    if not response.is_redirect or not location:
        raise RuntimeError(f"the authorization URL answered {response.status_code}, no redirect")
    return str(location)


def arguments(schema: dict[str, Any]) -> dict[str, Json]:
    """A value for each required argument of a tool, of its type."""
    values: dict[str, Json] = {}
    for name, spec in (schema.get("properties") or {}).items():
        if name in (schema.get("required") or []):
            kind = spec.get("type")
            number = kind in ("number", "integer")
            values[name] = 1 if number else True if kind == "boolean" else "x"
    return values


def oauth(token_file: Path) -> McpOAuth:
    """The sign-in settings: a client registered beforehand when the scenario gives one."""
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    return McpOAuth(
        client_name="agentos-conformance",
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        client_metadata_url=CLIENT_METADATA_URL,
        redirect_uri="http://localhost:3000/callback",
        token_file=str(token_file),
    )


async def main(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO")
    print("SCENARIO", scenario, os.environ.get("MCP_CONFORMANCE_CONTEXT"), file=sys.stderr)
    with tempfile.TemporaryDirectory() as folder:
        config = McpServerConfig(url=url, oauth=oauth(Path(folder) / "tokens.json"))
        server = McpServer("conformance", config)
        server.authorize = browse
        try:
            async with Runtime(toolsets=[server]) as runtime:
                runtime.ask_person = accept
                for name, tool in list(runtime.tools.items()):
                    done = await runtime.wait(
                        runtime.submit(name, arguments(tool.input_schema)), 20
                    )
                    said = str(done.result)[:200]
                    print("CALLED", name, done.status.value, said, done.error, file=sys.stderr)
        except ToolsetError as error:
            print("FAILED", error, file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[-1]))
