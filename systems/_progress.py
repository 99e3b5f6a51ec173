"""Applying a call's progress reports: every report told, a flood folded, the log bounded.

A tick tells each report of a call as one ``progressed`` event (and one log line),
up to ``PROGRESS_PER_TICK`` per call and ``Limits.progress_events_per_tick`` over
all calls; past either bound the older reports of the batch fold into the first
event told, which counts them. The kept log holds the newest ``PROGRESS_KEPT``
whatever the bound, and reports nobody will hear of are counted, not built.
"""

from __future__ import annotations

from collections.abc import Sequence

from components import PROGRESS_KEPT
from components import CallEventKind
from components import CallStatus
from components import ProgressKind
from components import ProgressLog
from components import ProgressNote
from components import TickContext
from components import ToolCallConfig
from components import ToolCallProgress
from components import ToolCallState
from systems._lifecycle import add_progress
from systems._lifecycle import heard
from systems._lifecycle import record_progress

_LINES = frozenset({ProgressKind.LOG, ProgressKind.OUTPUT})
_ASKING = frozenset({ProgressKind.QUESTION, ProgressKind.ANSWER})


def apply_progress(
    ctx: TickContext,
    config: ToolCallConfig,
    state: ToolCallState,
    notes: Sequence[ProgressNote],
    skipped: int,
    room: int,
) -> int:
    """Store and tell one call's reports (``skipped`` older ones came before ``notes``);
    returns the events raised, out of the tick's ``room``. A final call takes none."""
    if state.status is not CallStatus.RUNNING:
        return 0
    count = len(notes)
    wanted = ctx.log_debug or heard(ctx, config.session_id, CallEventKind.PROGRESSED)
    told = min(count, max(room, 1)) if wanted else 0
    first_told = count - told
    first_kept = max(0, count - PROGRESS_KEPT)
    passing = max(0, first_kept - first_told)  # told, but too old to keep in the log
    unseen = skipped + min(first_told, first_kept)
    if unseen or passing:
        log = state.progress
        assert log is not None, "a report arrives only while the call runs"
        _note_unkept(log, notes, first_kept, state.progress_seq + skipped)
        log.dropped += unseen + passing
        state.version += 1
        state.progress_seq += unseen
    for position in range(first_told, first_kept):
        kind, payload, at = notes[position]
        state.progress_seq += 1
        entry = ToolCallProgress(state.progress_seq, at, kind, payload)
        record_progress(ctx, config, state, entry, unseen if position == first_told else 0)
    for position in range(first_kept, count):
        kind, payload, at = notes[position]
        entry = add_progress(state, kind, payload, at)
        if position >= first_told:
            folded = skipped + first_told if position == first_told else 0
            record_progress(ctx, config, state, entry, folded)
    return told


def _note_unkept(
    log: ProgressLog, notes: Sequence[ProgressNote], first_kept: int, base: int
) -> None:
    """Note the newest payload, line and question (or answer) among the reports too old to
    keep (``notes[:first_kept]``; the one at position p is report ``base + p + 1``): a flood
    of lines must not lose the percent a bar shows, the last line, nor the question asked."""
    partial = line = asking = False
    for position in range(first_kept - 1, -1, -1):
        kind, payload, at = notes[position]
        if kind is ProgressKind.PARTIAL and not partial:
            partial = True
        elif kind in _LINES and not line:
            line = True
        elif kind in _ASKING and not asking:
            asking = True
        else:
            continue
        log.note(ToolCallProgress(base + position + 1, at, kind, payload))
        if partial and line and asking:
            return
