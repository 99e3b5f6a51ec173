"""agentos's own version, as installed: what it tells the MCP peers it meets."""

from __future__ import annotations

from functools import cache
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version


@cache
def agentos_version() -> str:
    """The installed package's version (``0+unknown`` when run from an uninstalled tree)."""
    try:
        return version("agentos")
    except PackageNotFoundError:
        return "0+unknown"
