"""What the tests share, and the benchmarks too: stores and hosts on each backend, PostgreSQL,
the browser, processes, the command line, and the tool modules and MCP servers agents name."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository's folder: where the tests run programs, read docs and find examples."""
