"""The demo behind ``make run`` (``python -m agentos.demo``): one host, four sessions, a restart.

``agentos.demo.tools`` holds the offline tools and scripted model the CLI uses
without an API key; ``agentos.demo.board`` the board session's agent.
"""

from agentos.demo.story import choose_model, main, say, scripted_model, which_model

__all__ = ["choose_model", "main", "say", "scripted_model", "which_model"]
