"""The installed distribution says what it is and under which licence."""

from __future__ import annotations

from importlib.metadata import metadata


def test_the_distribution_carries_its_licence() -> None:
    meta = metadata("agentos")
    assert meta["License-Expression"] == "MIT"
    assert "LICENSE" in (meta.get_all("License-File") or [])
    assert "Typing :: Typed" in (meta.get_all("Classifier") or [])
