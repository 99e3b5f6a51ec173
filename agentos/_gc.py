"""Opt-in tuning of Python's cyclic garbage collector for a long-lived host.

A host with many busy sessions holds millions of objects; a full collection
walks all of them while the event loop waits (over a second at 1,000
sessions). ``tune_gc`` applies the usual remedies: move what exists after
start-up to the permanent generation (``gc.freeze``), so no collection walks it
again, and collect less often. It changes interpreter-wide state, so agentos
never calls it on its own: an application (the CLI, the demo) opts in.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

YOUNG_THRESHOLD = 2_000
"""Allocations (net of frees) between two young collections; Python's default is 700."""
MIDDLE_THRESHOLD = 10
"""Young collections between two of the middle generation (default 10)."""
OLD_THRESHOLD = 1_000
"""Middle collections before a full one may run (default 10)."""


@dataclass(frozen=True, slots=True)
class GcSettings:
    """The collector's settings before ``tune_gc`` changed them, to restore with ``restore``."""

    thresholds: tuple[int, int, int]
    frozen: int
    """Objects ``tune_gc`` moved to the permanent generation (0 without ``freeze``)."""

    def restore(self) -> None:
        """Put the thresholds back (frozen objects stay frozen until ``gc.unfreeze()``)."""
        gc.set_threshold(*self.thresholds)


def tune_gc(
    *,
    freeze: bool = True,
    young: int = YOUNG_THRESHOLD,
    middle: int = MIDDLE_THRESHOLD,
    old: int = OLD_THRESHOLD,
) -> GcSettings:
    """Make garbage collection pauses rare and short for a long-lived host; call after start-up.

    With ``freeze`` every object alive now (modules, tools, the runtime and the
    sessions made so far) is collected once and then moved out of the
    collector's sight for good: call it once the application has set itself up.
    Returns the previous settings.
    """
    for name, value in (("young", young), ("middle", middle), ("old", old)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    previous = gc.get_threshold()
    frozen = 0
    if freeze:
        gc.collect()
        before = gc.get_freeze_count()
        gc.freeze()
        frozen = gc.get_freeze_count() - before
    gc.set_threshold(young, middle, old)
    return GcSettings(previous, frozen)
