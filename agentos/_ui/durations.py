"""Durations as a person reads them: ``12 s``, ``1 min 40 s``, ``about 2 min``.

Every front end that tells how long a call ran or has left says it the same way, and
never as a raw count of seconds or an epoch timestamp.
"""

from __future__ import annotations

import math
from datetime import datetime

_MINUTE, _HOUR = 60, 3_600


def human_seconds(seconds: float) -> str:
    """``seconds`` in its two largest units: ``0.4 s``, ``12 s``, ``1 min 40 s``, ``2 h 5 min``,
    ``3 d 4 h`` (tenths below ten seconds; the smaller unit left out when it is 0)."""
    _check(seconds)
    if seconds < 9.95:  # else its tenths round up to 10.0
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < _MINUTE:
        return f"{whole} s"
    if whole < _HOUR:
        return _two(*divmod(whole, _MINUTE), "min", "s")
    minutes = round(whole / _MINUTE)
    if minutes < 24 * _MINUTE:
        return _two(*divmod(minutes, _MINUTE), "h", "min")
    return _two(*divmod(round(whole / _HOUR), 24), "d", "h")


def rough_seconds(seconds: float) -> str:
    """An estimate of ``seconds``, rounded as one is said: to the second under ten seconds
    (``about 1 s`` at least), to 5 s under a minute, to 10 s under ten minutes, to the
    minute under an hour, else to five minutes."""
    _check(seconds)
    steps = ((10, 1), (_MINUTE, 5), (10 * _MINUTE, 10), (_HOUR, _MINUTE))
    step = next((step for below, step in steps if seconds < below), 5 * _MINUTE)
    rounded = max(step, round(seconds / step) * step)
    return f"about {rounded} s" if rounded < 10 else f"about {human_seconds(rounded)}"


def _two(big: int, small: int, big_unit: str, small_unit: str) -> str:
    return f"{big} {big_unit} {small} {small_unit}" if small else f"{big} {big_unit}"


def _check(seconds: float) -> None:
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"a duration is a finite number of seconds >= 0, got {seconds!r}")


def timestamp(epoch: float) -> str:
    """A moment as the command line prints it: local ISO 8601, to the second."""
    return datetime.fromtimestamp(epoch).astimezone().isoformat(timespec="seconds")
