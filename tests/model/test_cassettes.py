"""Recorded conversations (issue 28, part 4): a user's test, run by pytest as a user runs it,
records its model traffic once (the real SDK streaming from the stand-in) and replays it
offline; a changed request fails with a diff, an interaction never played fails, a
missing cassette fails under CI, and no secret reaches the file.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentos.testing import Cassette
from agentos.testing import CassetteError
from agentos.testing import MessagesStandIn
from agentos.testing import Reply
from agentos.testing import message_body
from tests.support import ROOT

SECRET = "sk-ant-api03-do-not-record-me"
USER_TEST = '''
import datetime, os, uuid
import pytest
from pydantic import BaseModel
from agentos import AgentConfig, AnthropicProvider, Host, Runtime, tool

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


class City(BaseModel):
    city: str


@tool
async def forecast(args: City) -> dict:
    """Tomorrow's weather: an id and a time that differ on every run."""
    return {"sky": "clear", "id": str(uuid.uuid4()), "at": datetime.datetime.now().isoformat()}


async def test_weather(agentos_cassette):
    key = os.environ.get("KEY", SECRET)
    real = lambda: AnthropicProvider(api_key=key, base_url=os.environ["STAND_IN"], max_retries=0)
    model = agentos_cassette.provider(real)
    async with Runtime([forecast]) as runtime, Host(runtime, model) as host:
        session = await host.create_session(AgentConfig(model="claude-test-model"))
        grew = []
        session.on_change(lambda: session.streaming and grew.append(session.streaming.text))
        if os.environ.get("ASK", "1") == "1":
            session.post(os.environ.get("QUESTION", "Weather in Oslo?"))
            await session.wait_settled()
    if os.environ.get("ASK", "1") == "1":
        assert session.replies[-1] == os.environ.get("ANSWER", "Clear in Oslo tomorrow.")
        assert len(set(grew)) > 2, "the reply grew, recorded or replayed"
    assert not os.environ.get("FAIL"), "failing on purpose"
'''.replace("SECRET", repr(SECRET))


@pytest.fixture
def user_tests(tmp_path: Path) -> Path:
    (tmp_path / "test_user.py").write_text(USER_TEST)
    return tmp_path


@pytest.fixture
def stand_in() -> Iterator[MessagesStandIn]:
    asked = {"type": "tool_use", "id": "toolu_01", "name": "forecast", "input": {"city": "Oslo"}}
    answer = {"type": "text", "text": "Clear in Oslo tomorrow."}
    with MessagesStandIn() as api:
        api.script(
            Reply(200, message_body([asked], "tool_use"), chunk=4),
            Reply(200, message_body([answer]), chunk=4),
        )
        yield api


def closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


KEY = "ANTHROPIC_API_KEY"


def pytest_run(
    folder: Path, module: str = "test_user.py", **env: str
) -> subprocess.CompletedProcess[str]:
    environment = {
        **{k: v for k, v in os.environ.items() if k not in ("CI", "AGENTOS_RECORD", KEY)},
        "PYTHONPATH": str(ROOT),
        **env,
    }
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", module]
    return subprocess.run(
        command, cwd=folder, env=environment, capture_output=True, text=True, timeout=120
    )


def offline(folder: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The user's tests replayed in CI, the stand-in out of reach."""
    return pytest_run(folder, STAND_IN=closed_port(), CI="true", **env)


@pytest.fixture
def recorded(user_tests: Path, stand_in: MessagesStandIn) -> Path:
    """The user's tests, their cassette recorded (against the stand-in)."""
    done = pytest_run(user_tests, STAND_IN=stand_in.url)
    assert done.returncode == 0, done.stdout + done.stderr
    return user_tests


def test_recorded_once_then_replayed_offline_and_no_secret_is_kept(
    recorded: Path, stand_in: MessagesStandIn
) -> None:
    assert len(stand_in.requests) == 2
    user_tests = recorded
    cassette = user_tests / "cassettes" / "test_user" / "test_weather.json"
    kept = cassette.read_text()
    assert SECRET not in kept and "x-api-key" not in kept
    interactions = json.loads(kept)["interactions"]
    first, second = (i["stream"] for i in interactions)  # the streams too
    assert first == [{"text": "", "tool_uses": [interactions[0]["response"]["content"][0]]}]
    assert len(second) > 2 and second[-1]["text"] == "Clear in Oslo tomorrow."
    replayed = offline(user_tests)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert len(stand_in.requests) == 2, "replay asks nothing of the network"


ONE_BACKEND = """
@pytest.fixture
def anyio_backend():
    return "asyncio"
"""
BACKEND_IN_NAME = """
@pytest.fixture(params=["asyncio"])
def anyio_backend(request):
    return request.param
"""


@pytest.mark.parametrize("ci", ["true", ""])
def test_a_cassette_of_the_old_name_still_replays_and_a_warning_says_to_rename_it(
    recorded: Path, stand_in: MessagesStandIn, ci: str
) -> None:
    """A test run on anyio's backend (``test_weather[asyncio]``) recorded before the
    backend left the name kept ``test_weather_asyncio.json``: it replays, in CI and outside
    it with a key at hand (not recorded again against the real API), and one warning says
    how to rename it."""
    assert ONE_BACKEND in USER_TEST
    (recorded / "test_user.py").write_text(USER_TEST.replace(ONE_BACKEND, BACKEND_IN_NAME))
    folder = recorded / "cassettes" / "test_user"
    (folder / "test_weather.json").rename(folder / "test_weather_asyncio.json")
    replayed = pytest_run(recorded, STAND_IN=closed_port(), CI=ci, KEY="sk-ant-api03-real-key")
    out = replayed.stdout
    assert replayed.returncode == 0, out + replayed.stderr
    assert "1 passed, 1 warning" in out.splitlines()[-1], out
    said = (
        f"UserWarning: the cassette {folder / 'test_weather_asyncio.json'} has its old name "
        "(anyio's backend is no longer part of it): rename it to test_weather.json"
    )
    assert out.count(said) == 1, out
    assert len(stand_in.requests) == 2, "nothing asked of a model"
    assert sorted(p.name for p in folder.iterdir()) == ["test_weather_asyncio.json"]


@pytest.mark.parametrize("ci", ["true", ""])
def test_a_request_the_cassette_lacks_fails_the_test_once_with_a_diff(
    recorded: Path, ci: str
) -> None:
    """The test fails (not an error at teardown), its section the diff printed once, and
    what the test then raised (the reply it never got) one line under it."""
    changed = pytest_run(recorded, STAND_IN=closed_port(), CI=ci, QUESTION="And Bergen?")
    out = changed.stdout
    assert changed.returncode == 1
    assert out.splitlines()[-1].startswith("1 failed in"), out
    assert "ERROR" not in out and " error" not in out and "teardown" not in out, out
    assert "Traceback" not in out, out
    path = recorded / "cassettes" / "test_user" / "test_weather.json"
    assert out.count(str(path)) == 1, out
    assert f"CassetteMiss: the cassette {path} holds no reply to this request" in out, out
    lines = out.splitlines()
    assert [line for line in lines if line.startswith("-") and "Weather in Oslo?" in line]
    assert len([line for line in lines if line.startswith("+") and "And Bergen?" in line]) == 1
    assert "(and then the test failed: IndexError: list index out of range)" in lines, out
    assert len(lines) < 25, out


def test_an_interaction_never_played_fails_the_test(recorded: Path) -> None:
    silent = offline(recorded, ASK="0")
    assert silent.returncode == 1
    assert "holds 2 interaction(s) the conversation never asked for" in silent.stdout
    assert silent.stdout.splitlines()[-1].startswith("1 failed in"), "a failure, not an error"


def test_a_missing_cassette_fails_under_ci_and_records_again_when_asked(
    user_tests: Path, stand_in: MessagesStandIn
) -> None:
    missing = pytest_run(user_tests, STAND_IN=stand_in.url, CI="true")
    assert missing.returncode == 1
    assert "no cassette at" in missing.stdout and "AGENTOS_RECORD=1" in missing.stdout
    assert stand_in.requests == []
    again = pytest_run(user_tests, STAND_IN=stand_in.url, CI="true", AGENTOS_RECORD="1")
    assert again.returncode == 0, again.stdout


README_TEST = """
import pytest

from agentos import AgentConfig, Host, Runtime, tool

pytestmark = pytest.mark.anyio


@tool
async def forecast(city: str, days: int = 1) -> dict[str, object]:
    \"\"\"The weather in ``city`` over the next ``days`` days.\"\"\"
    return {"city": city, "days": days, "sky": "clear", "high_c": 14}


async def test_the_weather_answer(agentos_cassette) -> None:
    async with Runtime([forecast]) as runtime, Host(runtime, agentos_cassette.provider()) as host:
        session = await host.create_session(AgentConfig())
        session.post("Weather in Oslo tomorrow?")
        await session.wait_settled()
    assert "Oslo" in session.replies[-1]


@pytest.mark.parametrize("city", ["Oslo", "New York"])
async def test_each_city(agentos_cassette, city) -> None:
    async with Runtime([forecast]) as runtime, Host(runtime, agentos_cassette.provider()) as host:
        pass
"""
"""The README's test as a user writes it (the model made inside ``async with Runtime``, so
what goes wrong there goes through a task group), and a parametrized one."""


@pytest.mark.parametrize("ci", ["", "true"])
def test_no_key_and_no_cassette_is_one_line_naming_the_file_as_the_readme_does(
    tmp_path: Path, ci: str
) -> None:
    """Outside CI: the file and how to record it; under CI: the file and that it is missing.
    One line each, no exception group; the file ``cassettes/<module>/<test name>.json``,
    anyio's backend left out of the name and a parametrized test's own ids kept."""
    (tmp_path / "test_readme_user.py").write_text(README_TEST)
    done = pytest_run(tmp_path, "test_readme_user.py", CI=ci)
    out = done.stdout
    assert done.returncode == 1
    assert out.splitlines()[-1].startswith("3 failed in"), out
    assert "ExceptionGroup" not in out and "Traceback" not in out and "ERROR" not in out, out
    folder = tmp_path / "cassettes" / "test_readme_user"
    how = (
        ": set ANTHROPIC_API_KEY and run the test again to record it"
        if not ci
        else ": record it once (run the test outside CI with ANTHROPIC_API_KEY set, or with "
        "AGENTOS_RECORD=1)"
    )
    for name in ("test_the_weather_answer", "test_each_city_Oslo", "test_each_city_New_York"):
        line = f"CassetteMiss: no cassette at {folder / name}.json{how}"
        assert line in out.splitlines(), out
        assert out.count(f"{folder / name}.json") == 1, out
    assert len(out.splitlines()) == 13, out  # 3 sections of 2 lines, 3 in the summary, 4 more


def test_a_recording_run_that_fails_writes_no_cassette(
    user_tests: Path, stand_in: MessagesStandIn
) -> None:
    failed = pytest_run(user_tests, STAND_IN=stand_in.url, FAIL="1")
    assert failed.returncode == 1 and "failing on purpose" in failed.stdout
    assert not list(user_tests.rglob("*.json")), "nothing recorded"


GLUED = ("token_sk-ant-api03-glued-to-a-word", "xsk-ant-admin01-glued-to-a-letter")
PROXY_KEY = "proxy-key-0123456789abcdef"


def test_a_key_glued_to_other_text_or_of_any_shape_is_never_written(user_tests: Path) -> None:
    """Anthropic key forms glued to a letter or ``_``, and the exact key the run used (a
    proxy's, of no known shape), in the question, the reply and the streamed partials:
    none reaches the cassette, nor a beginning of one that a partial ended inside (past
    ``sk-ant-``; 8 characters of the run's own key)."""
    said = f"use {GLUED[0]}, {GLUED[1]} and {PROXY_KEY}"
    asked = {"type": "tool_use", "id": "toolu_01", "name": "forecast", "input": {"city": said}}
    with MessagesStandIn() as api:
        api.script(
            Reply(200, message_body([asked], "tool_use"), chunk=4),
            Reply(200, message_body([{"type": "text", "text": said}]), chunk=4),
        )
        done = pytest_run(user_tests, STAND_IN=api.url, KEY=PROXY_KEY, QUESTION=said, ANSWER=said)
    assert done.returncode == 0, done.stdout + done.stderr
    kept = (user_tests / "cassettes" / "test_user" / "test_weather.json").read_text()
    assert kept.count("sk-***") >= 9, "masked in the request, the reply and the stream"
    for secret in GLUED:
        key = secret.removeprefix("token_").removeprefix("x")
        beginnings = [key[:end] for end in range(len("sk-ant-") + 1, len(key) + 1)]
        assert not [shown for shown in beginnings if shown in kept], secret
    assert not [PROXY_KEY[:end] for end in range(8, len(PROXY_KEY) + 1) if PROXY_KEY[:end] in kept]


REQUEST = {"request": {}, "response": {"content": [], "stop_reason": "end_turn"}}


@pytest.mark.parametrize(
    ("data", "wrong"),
    [
        ([], "is not an agentos cassette of format 1"),
        ({"format": 1}, ": 'interactions' must be a list, got nothing"),
        ({"format": 1, "interactions": {}}, ": 'interactions' must be a list, got dict"),
        (
            {"format": 1, "interactions": [5]},
            ": interaction 1: expected an object holding 'request', got int",
        ),
        (
            {"format": 1, "interactions": [REQUEST, {"request": {}}]},
            ": interaction 2: it has no 'response'",
        ),
        (
            {
                "format": 1,
                "interactions": [{**REQUEST, "response": {"content": "hi", "stop_reason": "x"}}],
            },
            ": interaction 1: 'content' must be a list, got str",
        ),
        (
            {"format": 1, "interactions": [{**REQUEST, "stream": [{"text": 1}]}]},
            ": interaction 1: 'text' must be a str, got int",
        ),
        (
            {
                "format": 1,
                "interactions": [{**REQUEST, "response": {"content": [5], "stop_reason": "x"}}],
            },
            ": interaction 1: 'content' 1 must be an object with a 'type'",
        ),
        (
            {
                "format": 1,
                "interactions": [{**REQUEST, "stream": [{"text": "", "tool_uses": [[]]}]}],
            },
            ": interaction 1: 'tool_uses' 1 must be an object with a 'type'",
        ),
        (
            {
                "format": 1,
                "interactions": [
                    {**REQUEST, "response": {**REQUEST["response"], "usage": {"input_tokens": "9"}}}
                ],
            },
            ": interaction 1: usage 'input_tokens' must be an int, got str",
        ),
    ],
    ids=[
        "a_list",
        "no_interactions",
        "interactions_not_a_list",
        "not_an_object",
        "no_response",
        "content_text",
        "stream_text",
        "content_block",
        "tool_use_block",
        "usage_count",
    ],
)
def test_a_cassette_of_the_wrong_shape_is_one_line_naming_the_file(
    tmp_path: Path, data: object, wrong: str
) -> None:
    path = tmp_path / "cassettes" / "test_user" / "test_weather.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data))
    with pytest.raises(CassetteError, match=re.escape(str(path))) as refused:
        Cassette.load(path)
    assert str(refused.value) == f"{path}{' ' if wrong[0] != ':' else ''}{wrong}"
    (tmp_path / "test_user.py").write_text(USER_TEST)
    replayed = offline(tmp_path, ASK="0")
    assert replayed.returncode == 1 and f"CassetteError: {path}" in replayed.stdout, replayed.stdout
