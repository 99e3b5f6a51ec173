"""``agentos serve`` as a person starts it: a subprocess that prints its address and stops on
Ctrl-C, its streams ended and its sessions saved."""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from tests._cli import agentos, env, start

__all__ = ["env"]  # fixtures

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
                with contextlib.suppress(httpx.RemoteProtocolError):  # cut at shutdown
                    list(lines)  # ends when the server ends the stream
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
