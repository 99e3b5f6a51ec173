"""Where the MCP tests find Node 22 and the npm packages they run: ``make test`` installs
them into ``.venv/node`` (npm's ``node@22``, ``@modelcontextprotocol/conformance``,
``@modelcontextprotocol/server-everything``).

Without them a test that needs one skips, saying how to get them; under ``CI=true`` it
fails instead, since ``.ci/run`` installs npm and ``make test`` the packages.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import ROOT
from tests.support.skips import cannot_run

NODE_DIR = ROOT / ".venv" / "node"
"""Where ``make test`` installs the npm packages (``npm install --prefix``)."""
HOW = "`make test` installs Node 22 and the MCP npm packages into .venv/node (it needs npm)"


def node_program(name: str) -> list[str]:
    """The command that runs an npm package's program (``conformance``,
    ``mcp-server-everything``) on the installed Node 22; skips (fails under CI) when absent."""
    node = NODE_DIR / "node_modules" / ".bin" / "node"
    program = NODE_DIR / "node_modules" / ".bin" / name
    missing = [path for path in (node, program) if not path.exists()]
    if missing:
        reason = f"{_shown(missing[0])} is missing: {HOW}"
        cannot_run("the tests that need Node", reason)
    return [str(node), str(program)]


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT))
