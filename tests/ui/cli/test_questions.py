"""Issue 49: ``agentos run`` takes a call's question to the person at the terminal. With stdin
and stdout a terminal it prints the question and who asks, ``Answer? [y/N/c]``, then each
field of the form (a wrong value said and asked again), and the call goes on with the answer;
an empty line declines, the input's end cancels. Without a terminal nobody is asked: the
question is declined, saying why."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.support.cli import ESCAPES
from tests.support.cli import agentos
from tests.support.cli import in_a_terminal
from tests.support.cli import on_a_terminal
from tests.ui.cli.conftest import serving
from tests.ui.cli.conftest import until

ASKING = """
name = "asking"
model = "test"
tools = ["tests.ui.cli.asking_tools"]
async_yield_strategy = { kind = "yield_on_timeout", milliseconds = 50 }
"""
"""The model calls the asking tool, and 50 ms later says it waits for it: while the person
answers on the terminal."""


@pytest.fixture
def asking_agent(tmp_path: Path) -> str:
    path = tmp_path / "asking.toml"
    path.write_text(ASKING)
    return str(path)


def test_the_question_is_asked_on_the_terminal_and_the_answer_reaches_the_call(
    env: dict[str, str], asking_agent: str
) -> None:
    with in_a_terminal(env, "run", "--agent", asking_agent, "where?") as run:
        assert run.until(rb"where \(call \w+\) needs your answer: Which city\?"), run.tail
        assert run.until(rb"asked by the forecast service"), run.tail
        assert run.until(rb"Answer\? \[y/N/c\]"), run.tail
        run.write(b"y\r")
        assert run.until(rb"City \* \(text\): $"), run.tail
        run.write(b"\r")
        assert run.until(rb"required: write a value\r\n  City \* \(text\): $"), run.tail
        run.write(b"Oslo\r")
        assert run.until(rb"days \(a whole number, 1 to 14\): $"), run.tail
        run.write(b"x\r")
        assert run.until(rb"'x' is not a whole number"), run.tail
        run.write(b"3\r")
        assert run.until(rb'where: accept: \{"city": "Oslo", "days": 3\}'), run.tail
        assert run.exit_code() == 0, run.tail
    shown = ESCAPES.sub(b"", bytes(run.shown)).decode()
    asking = shown[shown.index("Answer?") : shown.index("  sent")]
    assert "waiting for: where" not in asking, "what the model said waited for the answer"
    assert "waiting for: where" in shown[shown.index("  sent") :]


def test_an_empty_answer_declines_and_the_inputs_end_cancels(
    env: dict[str, str], asking_agent: str
) -> None:
    with in_a_terminal(env, "run", "--agent", asking_agent, "where?") as run:
        assert run.until(rb"Answer\? \[y/N/c\]"), run.tail
        run.write(b"maybe\r")
        assert run.until(rb"answer y, n or c"), run.tail
        run.write(b"\r")
        assert run.until(rb"declined"), run.tail
        assert run.until(rb"where: decline: null"), run.tail
        assert run.exit_code() == 0, run.tail
    with in_a_terminal(env, "run", "--agent", asking_agent, "where?") as run:
        assert run.until(rb"Answer\? \[y/N/c\]"), run.tail
        run.write(b"y\r")
        assert run.until(rb"City \* \(text\): $"), run.tail
        run.write(b"\x04")  # ctrl+d: the input ends
        assert run.until(rb"where: cancel: null \(the terminal's input ended\)"), run.tail
        assert run.exit_code() == 0, run.tail


def test_without_a_terminal_nobody_is_asked_and_the_question_is_declined_saying_why(
    env: dict[str, str], asking_agent: str
) -> None:
    done = agentos(env, "run", "--agent", asking_agent, "where?")
    assert done.code == 0, done
    (answer,) = done.json["messages"]
    assert answer.startswith("where: decline: null (nobody to ask: agentos asks a person on a")
    assert "stdin or stdout is not one" in answer
    asked, answered = [event for event in done.events if "progress" in event]
    assert (asked["kind"], answered["kind"]) == ("question", "answer")
    assert asked["progress"]["message"] == "Which city?"
    assert asked["progress"]["source"] == "the forecast service"
    assert answered["progress"]["action"] == "decline"


def test_other_processes_show_the_question_a_served_call_waits_on_until_it_is_answered(
    env: dict[str, str], asking_agent: str
) -> None:
    """``agentos serve`` holds the session; its call asks and waits for the page. From other
    processes, ``agentos status`` says the call needs an answer and what it asks, ``calls``
    and ``sessions`` (JSON and the table) say so too; once answered on the page, none does."""
    with serving(env, asking_agent) as (url, _), httpx.Client(base_url=url, timeout=10) as page:
        session = page.post("/api/sessions", json={}).json()["session_id"]
        posted = page.post(f"/api/sessions/{session}/messages", json={"text": "where?"})
        assert posted.status_code == 202, posted.text
        listed = until(
            lambda: agentos(env, "sessions", "--json"),
            lambda result: result.code == 0 and result.lines[0]["calls_asking"] == 1,
        )
        assert listed.lines[0]["session_id"] == session
        (call,) = agentos(env, "calls", session, "--json").lines
        assert call["status"] == "running" and call["live"] is True
        assert call["question"]["message"] == "Which city?"
        status = agentos(env, "status", call["call_id"], "--json").json
        assert status["question"]["source"] == "the forecast service"
        code, _, shown = on_a_terminal(env, "status", call["call_id"], stream="stdout")
        assert code == 0 and "asks      needs your answer: Which city?" in shown, shown
        code, _, table = on_a_terminal(env, "sessions", stream="stdout", columns=160)
        assert code == 0 and "1 call needs an answer" in table, table

        answered = page.post(
            f"/api/sessions/{session}/calls/{call['call_id']}/answer",
            json={"action": "accept", "content": {"city": "Oslo"}},
        )
        assert answered.json() == {"answered": True}, answered.text
        done = until(
            lambda: agentos(env, "status", call["call_id"], "--json"),
            lambda result: result.code == 0 and result.json["status"] == "completed",
        )
        assert done.json["question"] is None
        assert agentos(env, "sessions", "--json").lines[0]["calls_asking"] == 0
        code, _, shown = on_a_terminal(env, "status", call["call_id"], stream="stdout")
        assert code == 0 and "needs your answer" not in shown, shown
