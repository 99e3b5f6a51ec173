"""The terminal UI's two themes, and which one the terminal asks for."""

from __future__ import annotations

import os
from collections.abc import Mapping

THEMES = {"dark": "textual-dark", "light": "textual-light"}
"""``ChatApp``'s theme names, and the Textual theme each one is."""


def terminal_theme(environ: Mapping[str, str] = os.environ) -> str:
    """``light`` when the terminal says its background is light (``COLORFGBG``, as rxvt,
    Konsole and iTerm2 set it), else ``dark``."""
    background = environ.get("COLORFGBG", "").rpartition(";")[2]
    return "light" if background in {"7", "15"} else "dark"
