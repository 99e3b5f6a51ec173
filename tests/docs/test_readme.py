"""README.md is the page a person reads first (issue 47): it starts with the two make
commands, reads in about five minutes, and links every page of the guide in docs/.

Its code runs under ``tests/docs/test_docs.py``, as every page's does.
"""

from __future__ import annotations

import re

from tests.support import ROOT

README = (ROOT / "README.md").read_text()
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)
NOT_GUIDE = {"package.md"}
"""docs/ pages that are not part of the guide: the package index's description."""


def test_the_readme_starts_with_the_two_make_commands() -> None:
    first = FENCE.search(README)
    assert first is not None and README.startswith(f"# agentos\n\n{first[0]}")
    assert first[1] == ""
    assert [line.split()[:2] for line in first[2].splitlines()] == [
        ["make", "run"],
        ["make", "test"],
    ]


def test_the_readme_reads_in_five_minutes() -> None:
    assert len(README.splitlines()) <= 200


def test_the_readme_says_what_make_test_needs_and_how_to_get_it() -> None:
    make_test = next(line for line in README.splitlines() if line.startswith("make test"))
    assert "2 cores" in make_test and "min" in make_test
    assert "sudo apt install chromium postgresql pgbouncer" in README


def test_the_readme_and_the_guide_index_link_every_page_of_the_guide() -> None:
    index = (ROOT / "docs" / "index.md").read_text()
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name in NOT_GUIDE or page.name == "index.md":
            continue
        assert f"](docs/{page.name})" in README, page.name
        assert f"]({page.name})" in index, page.name
