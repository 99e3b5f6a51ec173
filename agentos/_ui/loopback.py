"""Where a server that asks no token may listen: only this machine's loopback addresses, so
nothing off it reaches the host (``agentos mcp --http``, ``agentos a2a``)."""

from __future__ import annotations

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def refusal(bind: str, token: str | None) -> str | None:
    """Why ``bind`` may not be served with ``token`` (None: no token asked), or None."""
    if token is None and bind not in LOOPBACK:
        return (
            f"--no-token serves loopback addresses only ({', '.join(sorted(LOOPBACK))}), "
            f"not {bind}: anyone who reaches it could use the host"
        )
    return None
