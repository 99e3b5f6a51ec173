"""Text from tools, models and users made safe for a terminal.

A terminal obeys the escape sequences in what it is sent: a progress payload
holding ``\\x1b]0;...`` would retitle the window, ``\\x1b[2J`` clear it. Rich
strips only a few control characters and Textual passes ESC through, so every
string the terminal UI shows goes through ``visible`` first.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_BREAKS = re.compile(r"[\t\n]")


def visible(text: str) -> str:
    """``text`` with each control character but tab and newline shown as its escape
    (``\\x1b``), so it reads as written and drives nothing."""
    return _CONTROL.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


def one_line(text: str) -> str:
    """``visible(text)`` on one line: tabs and newlines become spaces."""
    return _BREAKS.sub(" ", visible(text))
