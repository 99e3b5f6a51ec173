"""Issue 47: ``agentos sessions`` fits the terminal. On a terminal of 100 columns, or 80, or
40, every line fits, a session is one line, a long title is cut with an ellipsis, and
every id shown is typed back to the session it names, also ids that start alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from rich.cells import cell_len

from tests.support.cli import agentos
from tests.support.cli import on_a_terminal
from tests.support.cli import side_by_side
from tests.support.cli import start

ESCAPES = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")
LONG_TITLE = (
    "Check Jane's calendar (30s) and ask for approval of the trip to the conference in "
    "Lisbon, with a long explanation of why it matters that goes on and on"
)
ALIKE = ("project-alpha-planning-1", "project-alpha-planning-2")


def listed_on_a_terminal(env: dict[str, str], columns: int) -> list[str]:
    """The lines ``agentos sessions`` shows on a terminal ``columns`` wide, escapes removed."""
    code, err, shown = on_a_terminal(env, "sessions", stream="stdout", columns=columns)
    assert code == 0, err
    return ESCAPES.sub("", shown).replace("\r", "").splitlines()


@pytest.fixture
def stored(env: dict[str, str], quick_agent: str) -> Iterator[tuple[list[str], str]]:
    """Sessions of every kind the listing shows: a long title (stopped mid-call), ids
    alike but for their end, and one a live process holds. Their ids as listed, and the
    long title's."""
    made = side_by_side(
        env,
        ("run", LONG_TITLE),
        *(("run", "--session-id", alike, "hello") for alike in ALIKE),
    )
    prompt = "When can Jane meet? Check her calendar (30s)"
    with start(env, "run", "--agent", quick_agent, "--wait-for-async", prompt) as holder:
        try:
            assert holder.stderr is not None
            while line := holder.stderr.readline():  # held once its call has started
                if line.startswith("{") and json.loads(line)["event"] == "started":
                    break
            listed = agentos(env, "sessions").lines
            assert len(listed) == 4 and [row["holder"] for row in listed].count(None) == 3
            yield [row["session_id"] for row in listed], made[0].json["session_id"]
        finally:
            holder.kill()
            holder.wait()


@pytest.mark.parametrize("columns", [100, 80, 40])
def test_the_listing_fits_the_terminal_and_its_ids_are_typed_back(
    env: dict[str, str],
    stored: tuple[list[str], str],
    columns: int,
) -> None:
    ids, long_title = stored
    header, *rows = listed_on_a_terminal(env, columns)
    assert header.split()[0] == "session" and header.split()[-1] == "title", header
    assert len(rows) == len(ids), "one line a session, none wrapped"
    too_wide = [line for line in (header, *rows) if cell_len(line) > columns]
    assert not too_wide, too_wide
    shown = [row.split()[0] for row in rows]
    assert set(shown) >= set(ALIKE), "ids that start alike are shown long enough to differ"
    named = side_by_side(env, *(("show", typed, "--json") for typed in shown))
    assert [result.json["session_id"] for result in named] == ids, named
    long_row = rows[ids.index(long_title)]
    assert long_row.rstrip().endswith("…") and "on and on" not in long_row, long_row
    assert LONG_TITLE[:5] in long_row
    if columns >= 80:
        assert "holder" in header.split() and "pid " in "".join(rows), "who holds one is shown"
