"""agentos's pytest plugin (registered when agentos is installed): ``agentos_cassette``.

A test that takes it talks to a model recorded once and replayed after::

    async def test_weather(agentos_cassette: RecordedConversation) -> None:
        async with Runtime(tools) as runtime, Host(runtime, agentos_cassette.provider()) as host:
            ...

The cassette is ``cassettes/<test module>/<test name>.json`` beside the test module.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
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
    try:
        conversation.finish()
    except CassetteMiss as error:
        pytest.fail(str(error), pytrace=False)
