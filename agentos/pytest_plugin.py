"""agentos's pytest plugin (registered when agentos is installed): ``agentos_cassette``.

A test that takes it talks to a model recorded once and replayed after::

    async def test_weather(agentos_cassette: RecordedConversation) -> None:
        async with Runtime(tools) as runtime, Host(runtime, agentos_cassette.provider()) as host:
            ...

The cassette is ``cassettes/<test module>/<test name>.json`` beside the test module. What
goes wrong with a cassette fails the test itself, in a few lines naming the file: a
request it does not hold (with the diff), an interaction never played, a cassette missing
or unreadable. A cassette of the old name (``test_x_asyncio.json``, anyio's backend in it)
still replays, with a warning saying to rename it.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from typing import cast

import pytest

from agentos._model.cassette import recording_wanted
from agentos.testing import CassetteError
from agentos.testing import CassetteMiss
from agentos.testing import RecordedConversation

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr
    from _pytest._io import TerminalWriter

__all__ = ["agentos_cassette"]

_CONVERSATION = pytest.StashKey[RecordedConversation]()
_CALL_REPORT = pytest.StashKey[pytest.TestReport]()
_SEEN = pytest.StashKey[str | None]()
"""What was wrong with the replay when the test's report was made: teardown tells only
what went wrong after (a session a fixture holds may ask the model then)."""


@pytest.fixture
def agentos_cassette(request: pytest.FixtureRequest) -> Iterator[RecordedConversation]:
    """The test's recorded conversation: its ``provider()`` is the model to use. A replay
    is checked as the test's outcome is reported; after the test a recording is written
    if the test passed."""
    conversation = RecordedConversation(_cassette_path(request.node))
    request.node.stash[_CONVERSATION] = conversation
    yield conversation
    if conversation.recording:
        report = request.node.stash.get(_CALL_REPORT, None)
        conversation.finish(passed=report is not None and report.passed)
        return
    late = _replay_problem(conversation)
    if late is not None and late != request.node.stash.get(_SEEN, None):
        pytest.fail(f"CassetteMiss: {late}", pytrace=False)


def _cassette_path(item: pytest.Item) -> Path:
    """Where the test's cassette is: ``cassettes/<module>/<test name>.json``, or the file
    of its old name (anyio's backend in it, ``test_x_asyncio.json``) when only that exists,
    so a cassette recorded before the rename still replays instead of failing in CI or
    being recorded again; a warning says how to rename it. ``AGENTOS_RECORD=1`` records
    under the new name."""
    folder = Path(str(item.path))
    folder = folder.parent / "cassettes" / folder.stem
    path = folder / f"{_cassette_name(item)}.json"
    old = folder / f"{_file_name(item.name)}.json"
    if path.exists() or old == path or not old.exists() or recording_wanted():
        return path
    item.warn(
        UserWarning(
            f"the cassette {old} has its old name (anyio's backend is no longer part of it): "
            f"rename it to {path.name}"
        )
    )
    return old


def _cassette_name(item: pytest.Item) -> str:
    """The test's name as a file name: its own parameters kept (``test_x[Oslo]`` is
    ``test_x_Oslo``), the async backend anyio runs it on left out, so one recording
    replays on every backend and installing trio asks for no new cassette."""
    name = item.name
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        ids = str(callspec.id).split("-")
        backend = callspec.params.get("anyio_backend")
        if isinstance(backend, str) and backend in ids:
            ids.remove(backend)
        name = getattr(item, "originalname", name) + (f"[{'-'.join(ids)}]" if ids else "")
    return _file_name(name)


def _file_name(name: str) -> str:
    """A test's name with what a file name cannot hold made ``_``."""
    return re.sub(r"[^\w.-]+", "_", name).strip("_")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keep the test's own report, so the fixture records only a run that passed; and make
    a cassette's problem the test's failure, told once, without a traceback."""
    report = yield
    conversation = item.stash.get(_CONVERSATION, None)
    if report.when != "call" or conversation is None:
        return report
    item.stash[_CALL_REPORT] = report
    problem = None if conversation.recording else _replay_problem(conversation)
    item.stash[_SEEN] = problem
    if report.skipped or hasattr(report, "wasxfail"):
        return report
    told = _told(call.excinfo, conversation, problem)
    if told is not None:
        report.outcome = "failed"
        report.longrepr = cast("TerminalRepr", _Failure(told, conversation.path))
    return report


def _told(
    raised: pytest.ExceptionInfo[BaseException] | None,
    conversation: RecordedConversation,
    problem: str | None,
) -> str | None:
    """The test's failure when a cassette is to blame, else ``None`` (its own report)."""
    found = _cassette_error(None if raised is None else raised.value)
    if found is not None:
        return f"{type(found).__name__}: {found}"
    if problem is None:
        return None
    if raised is None:
        return f"CassetteMiss: {problem}"
    if conversation.cassette is None or conversation.cassette.missed is None:
        return None  # a test that failed early leaves interactions unplayed: its failure tells
    failed = raised.exconly().splitlines()[0]
    return f"CassetteMiss: {problem}\n(and then the test failed: {failed})"


@dataclass(frozen=True, slots=True)
class _Failure:
    """A failure told in its own words, no traceback: pytest prints ``text`` in the test's
    section, and the short summary gets its first line naming the file only by its name,
    so the cassette's path is printed once."""

    text: str
    cassette: Path

    def toterminal(self, out: TerminalWriter) -> None:
        for line in self.text.splitlines():
            out.line(line, red=True)

    @property
    def reprcrash(self) -> _Failure:
        return self  # the short summary reads ``reprcrash.message``

    @property
    def message(self) -> str:
        first = self.text.splitlines()[0].rstrip(":")
        return first.replace(str(self.cassette), self.cassette.name)

    def __str__(self) -> str:  # what a report sent between processes (xdist) keeps
        return self.text


def _replay_problem(conversation: RecordedConversation) -> str | None:
    """What a replay got wrong (a request the cassette lacks, or interactions never
    played), or ``None``."""
    try:
        conversation.finish()
    except CassetteMiss as miss:
        return str(miss)
    return None


def _cassette_error(error: BaseException | None) -> CassetteMiss | CassetteError | None:
    """The cassette's error in what the test raised, looking inside exception groups (a
    provider made inside ``async with Runtime(...)`` raises inside a task group)."""
    if isinstance(error, (CassetteMiss, CassetteError)):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            if (found := _cassette_error(inner)) is not None:
                return found
    return None
