"""Where the MCP tests find fastmcp, a second framework whose server they run: ``make test``
installs it in a venv of its own, ``.venv/fastmcp`` (it pins its own ``mcp``).

Without it a test that needs it skips, saying how to get it; under ``CI=true`` it fails.
"""

from __future__ import annotations

import os

import pytest

from tests.support import ROOT

FASTMCP_PYTHON = ROOT / ".venv" / "fastmcp" / "bin" / "python"
"""The Python of ``make test``'s fastmcp venv."""


def fastmcp_python() -> str:
    """The Python that runs a fastmcp server; skips (fails under CI) when it is absent."""
    if not FASTMCP_PYTHON.exists():
        reason = "`make test` installs fastmcp 4.1.6 into .venv/fastmcp"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the tests that need fastmcp: {reason}", pytrace=False)
        pytest.skip(reason)
    return str(FASTMCP_PYTHON)
