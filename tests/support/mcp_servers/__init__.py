"""MCP servers written with the ``mcp`` SDK, which the tests start as scripts by path."""

from pathlib import Path

SERVERS = Path(__file__).resolve().parent
"""This folder: ``SERVERS / "tools_server.py"`` is a server's script."""
