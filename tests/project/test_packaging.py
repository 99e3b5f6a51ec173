"""The installed distribution says what it is and under which licence."""

from __future__ import annotations

import sysconfig
from importlib.metadata import metadata
from importlib.metadata import requires
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.support import ROOT


def test_the_distribution_carries_its_licence() -> None:
    meta = metadata("agentos")
    assert meta["License-Expression"] == "MIT"
    assert "LICENSE" in (meta.get_all("License-File") or [])
    assert "Typing :: Typed" in (meta.get_all("Classifier") or [])


def test_the_long_description_starts_by_saying_what_agentos_is() -> None:
    """Not with README.md's make targets: a package index shows this page."""
    meta = metadata("agentos")
    description = meta["Description"]  # the body of METADATA, as a header here
    assert meta["Description-Content-Type"] == "text/markdown"
    assert description.startswith("agentos is a Python 3.11+ runtime for LLM agents")
    assert "make run" not in description


def test_an_editable_install_is_a_path_entry_not_a_finder() -> None:
    """``pip install -e .`` (``make``) adds the project root to sys.path with one .pth
    line. Without ``package-dir`` in pyproject.toml, setuptools takes our root-level
    packages for a "flat layout", installs an import finder instead, and warns
    (``BuildBackendWarning: Editable installation...``) on every fresh install."""
    pth = sorted(Path(sysconfig.get_paths()["purelib"]).glob("__editable__.agentos-*.pth"))
    if not pth:
        pytest.skip("agentos is not installed in editable mode here")
    (entry,) = pth[0].read_text().splitlines()
    assert Path(entry) == ROOT


def test_the_otel_extra_brings_the_sdk_and_the_otlp_exporter() -> None:
    """``pip install 'agentos[otel]'`` is enough for the README's example (the SDK) and for
    the command line's traces (the OTLP/HTTP exporter), each with a lower bound."""
    otel = {
        requirement.name: str(requirement.specifier)
        for requirement in map(Requirement, requires("agentos") or [])
        if requirement.marker is not None and requirement.marker.evaluate({"extra": "otel"})
    }
    assert otel.keys() == {
        "opentelemetry-api",
        "opentelemetry-sdk",
        "opentelemetry-exporter-otlp-proto-http",
    }
    assert all(bound.startswith(">=") for bound in otel.values()), otel
