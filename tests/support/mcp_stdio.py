"""The ``mcp`` SDK's test servers as an agent's ``mcp_servers`` names them: scripts of
``tests/support/mcp_servers`` that this Python runs over stdio."""

from __future__ import annotations

import sys

from agentos import McpServerConfig
from tests.support.mcp_servers import SERVERS

TOOLS_SERVER = McpServerConfig(command=sys.executable, args=[str(SERVERS / "tools_server.py")])
"""``tools_server.py``: tools that report progress, log, ask, sample and count cancels
(its docstring lists them)."""
