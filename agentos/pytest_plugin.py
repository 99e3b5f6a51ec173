"""agentos's pytest plugin (registered when agentos is installed): ``agentos_cassette``.

A test that takes it talks to a model recorded once and replayed after::

    async def test_weather(agentos_cassette: RecordedConversation) -> None:
        async with Runtime(tools) as runtime, Host(runtime, agentos_cassette.provider()) as host:
            ...

The cassette is ``cassettes/<test module>/<test name>.json`` beside the test module.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from agentos.testing import CassetteMiss, RecordedConversation

__all__ = ["agentos_cassette"]


@pytest.fixture
def agentos_cassette(request: pytest.FixtureRequest) -> Iterator[RecordedConversation]:
    """The test's recorded conversation: its ``provider()`` is the model to use. After the
    test it writes what was recorded, or fails if a recorded interaction was never played."""
    module = Path(str(request.node.path))
    name = re.sub(r"[^\w.-]+", "_", request.node.name).strip("_")
    conversation = RecordedConversation(module.parent / "cassettes" / module.stem / f"{name}.json")
    yield conversation
    report = request.node.stash.get(_CALL_REPORT, None)
    try:
        conversation.finish(passed=report is not None and report.passed)
    except CassetteMiss as error:
        pytest.fail(str(error), pytrace=False)


_CALL_REPORT = pytest.StashKey[pytest.TestReport]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keep the test's own report, so the fixture records only a run that passed."""
    report = yield
    if report.when == "call":
        item.stash[_CALL_REPORT] = report
    return report
