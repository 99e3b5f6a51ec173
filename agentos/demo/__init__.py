"""The demo behind ``make run`` (``python -m agentos.demo``): one host, four sessions, a restart.

``agentos.demo.tools`` holds the offline tools and scripted model the CLI uses
without an API key; ``agentos.demo.board`` the board session's agent.
"""

from typing import Any

__all__ = ["choose_model", "main", "not_a_program", "say", "scripted_model", "which_model"]


def __getattr__(name: str) -> Any:
    """The story's names, imported when first asked for: ``python -m agentos.demo.board``
    then runs a module nobody imported yet (runpy warns otherwise)."""
    if name in __all__:
        from agentos.demo import story

        return getattr(story, name)
    raise AttributeError(f"module 'agentos.demo' has no attribute {name!r}")


def not_a_program(module: str, holds: str) -> SystemExit:
    """What ``python -m`` of one of the demo's parts says: what it is, and what to run."""
    return SystemExit(
        f"{module} holds {holds}; it is not a program. Run the demo with "
        "'python -m agentos.demo' (or 'make run'), or talk to an agent with 'agentos run'."
    )
