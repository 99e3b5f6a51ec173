"""The table ``agentos sessions`` prints on a terminal: a line a session, no wider than the
terminal. Ids are shown short, each as long as it takes to name one session, so it can be
typed back; what does not fit (a long title first) is cut with an ellipsis, never wrapped,
and on a narrow terminal the columns that matter least are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from rich.cells import cell_len
from rich.console import Console
from rich.console import JustifyMethod
from rich.table import Column
from rich.table import Table
from rich.text import Text

from agentos._ui.terminal_text import one_line
from agentos.stores import short_id

PADDING = 2
"""Columns rich puts around each column's cells (one on either side)."""


@dataclass(frozen=True, slots=True)
class ListedSession:
    """What the table shows of one session (``holder`` empty: no live process holds it)."""

    session_id: str
    agent: str
    status: str
    holder: str
    running: int
    updated_at: float
    title: str


@dataclass(frozen=True, slots=True)
class _Shown:
    header: str
    least: int | None
    """The fewest characters it is cut to; ``None``: never cut."""
    justify: JustifyMethod = "left"
    weight: int = 1
    """How much of the room it keeps, against the other columns that are cut."""


_COLUMNS = (
    _Shown("session", None),
    _Shown("agent", 5),
    _Shown("status", 6),
    _Shown("holder", 6),
    _Shown("running", None, "right"),
    _Shown("updated", None),
    _Shown("title", 5, weight=2),
)
HELD = ("holder", "running")
"""Shown only when a live process holds a session (calls are counted only then)."""
LEFT_OUT = ("holder", "running", "agent", "updated", "status")
"""The columns a narrow terminal goes without, first to last."""


def print_sessions(listed: Sequence[ListedSession]) -> None:
    """Print the table, as wide as the terminal at most (rich reads its width, or
    ``COLUMNS``)."""
    console = Console()
    now = datetime.now()
    ids = typed_back_ids([session.session_id for session in listed])
    rows = [
        {
            "session": ids[session.session_id],
            "agent": session.agent,
            "status": session.status,
            "holder": session.holder,
            "running": str(session.running) if session.holder else "",
            "updated": when(session.updated_at, now),
            "title": session.title,
        }
        for session in listed
    ]
    held = any(session.holder for session in listed)
    columns = [c for c in _COLUMNS if held or c.header not in HELD]
    for name in ("", *LEFT_OUT):
        columns = [c for c in columns if c.header != name]
        natural = [max([cell_len(c.header), *(cell_len(one_line(r[c.header])) for r in rows)])
                   for c in columns]  # fmt: skip
        room = console.width - PADDING * len(columns)
        widths = fitted(natural, [c.least for c in columns], [c.weight for c in columns], room)
        if sum(widths) <= room:
            break
    else:  # too narrow even for the ids: the lines wrap, ids whole
        console = Console(width=sum(widths) + PADDING * len(widths))
    table = Table(
        *(
            Column(c.header, width=w, no_wrap=True, overflow="ellipsis", justify=c.justify)
            for c, w in zip(columns, widths, strict=True)
        ),
        box=None,
    )
    for row in rows:
        table.add_row(*(Text(one_line(row[c.header])) for c in columns))
    console.print(table)


def fitted(
    natural: Sequence[int], least: Sequence[int | None], weight: Sequence[int], room: int
) -> list[int]:
    """Each column's width: ``natural`` if they fit in ``room``, else the widest of those
    that may be cut, for its ``weight`` (the rightmost of equals), made narrower one
    character at a time, down to its ``least``."""
    widths = list(natural)
    while sum(widths) > room:
        cuttable = [n for n, f in enumerate(least) if f is not None and widths[n] > f]
        if not cuttable:
            break
        widest = max(cuttable, key=lambda n: (widths[n] / weight[n], n))
        widths[widest] -= 1
    return widths


def when(epoch: float, now: datetime) -> str:
    """A time as ``ls -l`` gives it: ``Dec 05 19:18`` this year, ``2025-12-05`` before."""
    moment = datetime.fromtimestamp(epoch)
    return moment.strftime("%b %d %H:%M" if moment.year == now.year else "%Y-%m-%d")


def typed_back_ids(ids: Sequence[str]) -> dict[str, str]:
    """Each id as the table shows it: its ``short_id``, longer where other ids start the
    same way, so what is shown names that one session when typed back (a whole id always
    names itself)."""
    ordered = sorted(set(ids))
    shown = {}
    for n, full in enumerate(ordered):
        neighbours = ordered[max(n - 1, 0) : n] + ordered[n + 1 : n + 2]
        shared = max((_shared(full, other) for other in neighbours), default=0)
        shown[full] = full[: max(len(short_id(full)), shared + 1)]
    return shown


def _shared(one: str, other: str) -> int:
    """How many characters ``one`` and ``other`` start with alike."""
    alike = (n for n, (a, b) in enumerate(zip(one, other, strict=False)) if a != b)
    return next(alike, min(len(one), len(other)))
