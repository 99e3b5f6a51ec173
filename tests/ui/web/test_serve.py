"""``agentos serve`` as a person starts it: a subprocess that prints its address and stops on
Ctrl-C, its streams ended and its sessions saved."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.support.cli import agentos
from tests.support.cli import start

ADDRESS = re.compile(r"serving (http://\S+)")


def address_of(process: subprocess.Popen[str]) -> str:
    """The URL the server printed (stderr), read line by line until it appears."""
    assert process.stderr is not None
    seen = []
    for line in process.stderr:
        seen.append(line)
        found = ADDRESS.search(line)
        if found:
            return found.group(1)
    raise AssertionError(f"no address printed: {seen}")


@contextmanager
def serving(env: dict[str, str], *args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``agentos serve ARGS`` and its address; Ctrl-C (SIGINT) when done."""
    with start(env, "serve", *args) as process:
        try:
            yield process, address_of(process)
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
            process.communicate(timeout=20)


def test_serve_stops_on_ctrl_c_with_a_stream_open_and_calls_running(
    env: dict[str, str],
) -> None:
    with serving(env, "--port", "0") as (process, url):
        with httpx.Client(base_url=url, timeout=10) as client:
            made = client.post("/api/sessions", json={})
            session_id = made.json()["session_id"]
            posted = client.post(
                f"/api/sessions/{session_id}/messages",
                json={"text": "When can Jane, Jack and Joe meet? calendar 30s"},
            )
            assert posted.status_code == 202
            with client.stream("GET", f"/api/sessions/{session_id}/events") as events:
                lines = events.iter_lines()
                assert next(lines).startswith("id: ")
                process.send_signal(signal.SIGINT)
                list(lines)  # ends, with its last chunk, when the server stops
        assert process.wait(timeout=20) == 130, "interrupted, as every command reports it"
    shown = agentos(env, "show", session_id)
    assert "When can Jane, Jack and Joe meet?" in shown.out, "the session was saved"


def test_serve_refuses_a_port_it_cannot_listen_on(env: dict[str, str]) -> None:
    with serving(env, "--port", "0") as (_, url):
        port = url.rsplit(":", 1)[1]
        second = agentos(env, "serve", "--port", port)
    assert second.code != 0
    assert f"cannot listen on 127.0.0.1:{port}" in second.err
    assert "Traceback" not in second.err


def test_binding_another_address_requires_and_prints_a_token(env: dict[str, str]) -> None:
    with serving(env, "--host", "127.0.0.2", "--port", "0") as (_, url):
        assert "?token=" in url
        base, token = url.split("/?token=")
        with httpx.Client(base_url=base, timeout=10) as client:
            assert client.get("/api/sessions").status_code == 401
            allowed = client.get("/api/sessions", headers={"Authorization": f"Bearer {token}"})
            assert allowed.status_code == 200
            assert json.loads(allowed.text) == {"sessions": []}


def test_a_session_agentos_run_started_opens_in_the_page(env: dict[str, str]) -> None:
    """One store: what `agentos run` saved is listed, shown, opens (resumed) and takes a
    message."""
    run = agentos(env, "run", "--wait-for-async", "When can Jane and Jack meet?")
    assert run.code == 0, run
    session_id = run.json["session_id"]
    with serving(env, "--port", "0") as (_, url), httpx.Client(base_url=url, timeout=10) as client:
        listed = client.get("/api/sessions").json()["sessions"]
        assert [row["session_id"] for row in listed] == [session_id]
        state = client.get(f"/api/sessions/{session_id}").json()["state"]
        assert state["chat"][0]["text"] == "When can Jane and Jack meet?"
        assert len(state["calls"]) == 2
        assert {call["status"] for call in state["calls"].values()} == {"completed"}
        assert state["access"]["open"] is False, "looking resumes nothing"
        opened = client.post(f"/api/sessions/{session_id}/open", json={})
        assert opened.status_code == 200, opened.text
        posted = client.post(f"/api/sessions/{session_id}/messages", json={"text": "thanks"})
        assert posted.status_code == 202


def _chat_when_idle(client: httpx.Client, session_id: str, said: int) -> list[str]:
    """The page's chat once the session is idle with ``said`` of the person's words in it
    (polled: the server's session runs on its own)."""
    deadline = time.monotonic() + 30
    while True:
        state = client.get(f"/api/sessions/{session_id}").json()["state"]
        texts = [entry["text"] for entry in state["chat"]]
        people = [entry for entry in state["chat"] if entry["role"] == "user"]
        if state["status"] == "idle" and len(people) == said:
            return texts
        assert time.monotonic() < deadline, state
        time.sleep(0.05)


def test_a_session_stolen_by_a_process_that_exited_opens_again_when_the_person_writes(
    env: dict[str, str],
) -> None:
    """`agentos resume --steal` takes a session the page's server runs, has its turn and
    exits; the person's next message is the server's again: it notices it lost the
    session, opens it from the store (the other's turn included, once) and answers."""
    with serving(env, "--port", "0") as (_, url), httpx.Client(base_url=url, timeout=10) as client:
        session_id = client.post("/api/sessions", json={}).json()["session_id"]
        assert client.post(f"/api/sessions/{session_id}/messages", json={"text": "hi"}).is_success
        first = _chat_when_idle(client, session_id, 1)
        stolen = agentos(env, "resume", session_id, "--steal", "--message", "theirs")
        assert stolen.code == 0, stolen
        posted = client.post(f"/api/sessions/{session_id}/messages", json={"text": "mine"})
        assert posted.status_code == 202, posted.text
        chat = _chat_when_idle(client, session_id, 3)
        assert chat[: len(first)] == first
        assert [text for text in chat if text in ("hi", "theirs", "mine")] == [
            "hi",
            "theirs",
            "mine",
        ]
    shown = agentos(env, "show", session_id)
    assert shown.out.index("theirs") < shown.out.index("mine"), "the person's words were stored"


ASKING_TOOL = """
from pydantic import BaseModel

from agentos import ToolContext, tool


class Nothing(BaseModel):
    pass


@tool
async def where(args: Nothing, ctx: ToolContext) -> str:
    form = {"type": "object", "properties": {"city": {"type": "string"}}}
    answer = await ctx.ask("Which city?", form=form)
    return f"{answer.action.value}: {answer.content}"
"""


def _call_seen(lines: Iterator[str], done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first call widget on the event stream ``lines`` for which ``done`` holds."""
    event = ""
    for line in lines:
        if line.startswith("event: "):
            event = line.removeprefix("event: ")
        elif line.startswith("data: ") and event in ("snapshot", "call"):
            data = json.loads(line.removeprefix("data: "))
            calls = data["calls"].values() if event == "snapshot" else [data["call"]]
            found: list[dict[str, Any]] = [call for call in calls if done(call)]
            if found:
                return found[0]
    raise AssertionError("the stream ended")


def test_a_calls_question_waits_for_the_person_on_the_page(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Issue 49: agentos serve leaves a call's question for the person (not declined as a
    host with nobody to ask would): it shows on the call until answered through the page."""
    (tmp_path / "asking.py").write_text(ASKING_TOOL)
    agent = tmp_path / "asking.toml"
    agent.write_text('name = "asking"\nmodel = "test"\ntools = ["asking"]\n')
    with (
        serving(env, "--port", "0", "--agent", str(agent)) as (_, url),
        httpx.Client(base_url=url, timeout=10) as client,
    ):
        session_id = client.post("/api/sessions", json={}).json()["session_id"]
        with client.stream("GET", f"/api/sessions/{session_id}/events") as events:
            lines = events.iter_lines()
            posted = client.post(f"/api/sessions/{session_id}/messages", json={"text": "go"})
            assert posted.status_code == 202
            asking = _call_seen(lines, lambda call: call["question"] is not None)
            assert asking["status"] == "running"
            assert asking["question"]["message"] == "Which city?"
            answer = {"action": "accept", "content": {"city": "Lyon"}}
            path = f"/api/sessions/{session_id}/calls/{asking['call_id']}/answer"
            assert client.post(path, json=answer).json() == {"answered": True}
            done = _call_seen(lines, lambda call: call["status"] == "completed")
        assert done["question"] is None
        peeked = client.get(f"/api/sessions/{session_id}/calls/{done['call_id']}").json()
        assert peeked["result"] == "accept: {'city': 'Lyon'}"
