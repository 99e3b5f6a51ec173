"""Text from tools, models and users made safe for a terminal.

A terminal obeys the escape sequences in what it is sent: a progress payload
holding ``\\x1b]0;...`` would retitle the window, ``\\x1b[2J`` clear it. Rich
strips only a few control characters and Textual passes ESC through, so every
string the terminal UI shows goes through ``visible`` first.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from collections.abc import Mapping

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_BREAKS = re.compile(r"[\t\n]")


def visible(text: str) -> str:
    """``text`` with each control character but tab and newline, and each bidirectional
    override, shown as its escape (``\\x1b``, ``\\u202e``): it reads as written and
    drives nothing."""
    return _CONTROL.sub(_escape, text)


def one_line(text: str) -> str:
    """``visible(text)`` on one line: tabs and newlines become spaces."""
    return _BREAKS.sub(" ", visible(text))


def short_call(tool: str, arguments: Mapping[str, object], width: int = 40) -> str:
    """``fetch_calendar(Joe, 0.5)``: a call as a person reads it in a line, its arguments'
    values cut after ``width`` characters (escape it with ``visible`` before showing it)."""
    shown = ", ".join(v if isinstance(v, str) else json.dumps(v) for v in arguments.values())
    return f"{tool}({shown[:width]}{'...' if len(shown) > width else ''})"


def tally(tools: Iterable[str]) -> str:
    """``forecast x5, weather``: the tools a message called, in order."""
    counts = Counter(tools)
    return ", ".join(tool if n == 1 else f"{tool} x{n}" for tool, n in counts.items())


def _escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
