"""The live web page (``agentos serve``, issue 13) over HTTP: the API, the event stream, safety.

Requests go through httpx: the JSON API over its ASGI transport, the event
stream over a real uvicorn server on a loopback port (the ASGI transport
does not stream), parsed with ``httpx-sse``. Sessions run a ``Puppet`` tool
the tests drive, on a scripted model.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest
from httpx_sse import ServerSentEvent
from httpx_sse import aconnect_sse

from agentos import AgentConfig
from agentos import Host
from agentos import ManualClock
from agentos import Runtime
from agentos import Session
from agentos import SqliteStore
from agentos import open_store
from agentos.testing import FailingProvider
from agentos.testing import FullDiskStore
from agentos.testing import HeldProvider
from agentos.testing import Puppet
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.web import MAX_BODY
from agentos.web import TOKEN_COOKIE
from agentos.web import listen
from agentos.web import make_app
from tests.support.backends import Backend
from tests.support.backends import running
from tests.support.streaming import streaming_a_call
from tests.support.web import Web
from tests.support.web import applied
from tests.support.web import held_elsewhere
from tests.support.web import model
from tests.support.web import web

pytestmark = pytest.mark.anyio

JSON = {"Content-Type": "application/json"}


@asynccontextmanager
async def stream(
    w: Web, session_id: str, *, last_event_id: str | bytes | None = None, **client: Any
) -> AsyncIterator[AsyncIterator[ServerSentEvent]]:
    """The session's event stream, over the real server."""
    headers = {} if last_event_id is None else {"Last-Event-ID": last_event_id}
    async with (
        httpx.AsyncClient(base_url=w.url, timeout=10, **client) as real,
        aconnect_sse(real, "GET", f"/api/sessions/{session_id}/events", headers=headers) as events,
    ):
        assert events.response.status_code == 200
        yield events.aiter_sse()


async def until(
    events: AsyncIterator[ServerSentEvent], done: Callable[[ServerSentEvent], bool]
) -> list[ServerSentEvent]:
    """Events up to the first for which ``done`` holds."""
    seen = []
    with anyio.fail_after(10):
        async for event in events:
            seen.append(event)
            if done(event):
                return seen
    raise AssertionError(f"the stream ended after {seen}")


def call_event(status: str) -> Callable[[ServerSentEvent], bool]:
    return lambda e: e.event == "call" and json.loads(e.data)["call"]["status"] == status


# ------------------------------------------------------------------ the API


async def test_list_create_post_and_the_answer(tmp_path: Path) -> None:
    async with web(tmp_path) as w:
        assert (await w.client.get("/api/sessions")).json() == {"sessions": []}
        session_id = await w.new_session()
        await w.post(session_id, "hello")
        await w.idle(session_id)
        (row,) = (await w.client.get("/api/sessions")).json()["sessions"]
        assert (row["session_id"], row["status"], row["live"]) == (session_id, "idle", True)
        state = (await w.client.get(f"/api/sessions/{session_id}")).json()["state"]
        assert [(e["role"], e["text"]) for e in state["chat"]] == [
            ("user", "hello"),
            ("agent", "ok"),
        ]
        assert "[user] hello" in state["context"], "what the model reads next"
        page = await w.client.get(f"/sessions/{session_id}")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]


async def test_a_message_posted_while_the_model_answers_shows_queued(tmp_path: Path) -> None:
    held = HeldProvider(model(), lambda r: last_user_text(r) == "hold on")
    async with web(tmp_path, provider=held) as w:
        session_id = await w.new_session()
        await w.post(session_id, "hold on")
        with anyio.fail_after(5):
            await held.asked.wait()
        await w.post(session_id, "and then?")
        state = (await w.client.get(f"/api/sessions/{session_id}")).json()["state"]
        assert [(e["text"], e["queued"]) for e in state["chat"]] == [
            ("hold on", False),
            ("and then?", True),
        ]
        held.go.set()
        await w.idle(session_id)
        state = (await w.client.get(f"/api/sessions/{session_id}")).json()["state"]
        assert [(e["role"], e["text"], e["queued"]) for e in state["chat"]] == [
            ("user", "hold on", False),
            ("agent", "ok", False),
            ("user", "and then?", False),
            ("agent", "ok", False),
        ]


async def test_a_failed_model_request_shows_on_the_page(tmp_path: Path) -> None:
    async with web(
        tmp_path, provider=FailingProvider("overloaded", "the API is overloaded (529)")
    ) as w:
        session_id = await w.new_session()
        async with stream(w, session_id) as events:
            await w.post(session_id, "hello?")
            seen = await until(events, lambda e: e.event == "errors")
        assert json.loads(seen[-1].data)["errors"] == ["overloaded: the API is overloaded (529)"]
        state = (await w.client.get(f"/api/sessions/{session_id}")).json()["state"]
        assert state["errors"] == ["overloaded: the API is overloaded (529)"]
        assert [e["text"] for e in state["chat"]] == ["hello?"]


async def test_an_error_repeated_by_every_commit_is_shown_once_with_its_count(
    tmp_path: Path,
) -> None:
    async with web(tmp_path, store=FullDiskStore) as w:
        session_id = await w.new_session()
        await w.post(session_id, "start 1")
        (call_id,) = await w.started(1)
        w.puppet.complete(call_id, "done")  # one commit more
        await w.idle(session_id)
        errors = w.session(session_id).errors
        assert len(errors) >= 2 and set(errors) == {"store: the disk is full"}
        state = (await w.client.get(f"/api/sessions/{session_id}")).json()["state"]
        assert state["errors"] == [f"store: the disk is full (x{len(errors)})"]


async def test_a_calls_widget_gives_its_percent_and_its_newest_log_line_apart(
    tmp_path: Path,
) -> None:
    """Issue 45: a tool reports 40 %, then logs a line: the page's widget keeps the percent
    (the bar) and gives the line beside it, and says how the call runs."""
    async with web(tmp_path) as w:
        session_id = await w.new_session()
        await w.post(session_id, "start 1")
        (call_id,) = await w.started(1)
        w.puppet.progress(call_id, {"percent": 40, "page": 4})
        w.puppet.log(call_id, "fetched page 4")
        await settle(w.runtime)
        state = (await w.client.get(f"/api/sessions/{session_id}")).json()["state"]
        widget = state["calls"][call_id]
        assert (widget["percent"], widget["latest"], widget["log"]) == (
            40,
            '{"percent": 40, "page": 4}',
            "fetched page 4",
        )
        assert widget["disposition"] == "run_async"


async def test_a_call_runs_shows_progress_is_peeked_and_cancelled(tmp_path: Path) -> None:
    async with web(tmp_path) as w:
        session_id = await w.new_session()
        await w.post(session_id, "start 1")
        (call_id,) = await w.started(1)
        w.puppet.progress(call_id, {"percent": 40})
        await settle(w.runtime)
        state = (await w.client.get(f"/api/sessions/{session_id}")).json()["state"]
        widget = state["calls"][call_id]
        assert (widget["tool_name"], widget["tool_input"], widget["status"]) == (
            "puppet",
            {"label": "p0"},
            "running",
        )
        assert (widget["percent"], widget["final"]) == (40, False)
        peeked = (await w.client.get(f"/api/sessions/{session_id}/calls/{call_id}")).json()
        assert [entry["kind"] for entry in peeked["progress"]] == ["started", "partial"]
        assert all(entry["after"] >= 0 for entry in peeked["progress"]), "seconds since start"
        assert peeked["elapsed"] >= 0 and peeked["expected_seconds"] is None
        cancelled = await w.client.post(
            f"/api/sessions/{session_id}/calls/{call_id}/cancel", json={"reason": "stuck"}
        )
        assert cancelled.json() == {"cancelled": True, "previous_status": "running"}
        await settle(w.runtime)
        peeked = (await w.client.get(f"/api/sessions/{session_id}/calls/{call_id}")).json()
        assert (peeked["status"], peeked["cancel_reason"]) == ("cancelled", "stuck")
        assert w.puppet.calls[call_id].cleaned_up, "the cancel reached the work"


async def test_a_calls_times_on_the_page_are_told_by_the_runtimes_clock(tmp_path: Path) -> None:
    """Issue 47: peek's ``elapsed`` read the machine's clock while the call's times come
    from the runtime's, so with a clock of its own (a test's, say) the page's times were
    nonsense. Page and peek both say 30 s after 30 s of the runtime's clock."""
    clock = ManualClock()
    async with web(tmp_path, clock=clock, store=SqliteStore) as w:
        session_id = await w.new_session()
        await w.post(session_id, "start 1")
        (call_id,) = await w.started(1)
        clock.advance(30.0)
        peeked = await w.client.get(f"/api/sessions/{session_id}/calls/{call_id}")
        assert peeked.status_code == 200, peeked.text
        assert peeked.json()["elapsed"] == 30.0
        state = (await w.client.get(f"/api/sessions/{session_id}")).json()["state"]
        assert state["calls"][call_id]["elapsed"] == 30.0
        w.puppet.complete(call_id, "done")
        await w.idle(session_id)


async def test_the_page_names_a_call_as_its_snapshot_does(tmp_path: Path) -> None:
    """One vocabulary (issue 30): the page's API says ``call_id``, ``tool_name`` and
    ``tool_input``, as ``CallSnapshot`` does, and none of the old names."""
    async with web(tmp_path) as w:
        session_id = await w.new_session()
        await w.post(session_id, "start 1")
        (call_id,) = await w.started(1)
        await settle(w.runtime)
        snapshot = w.runtime.status(call_id)
        state = (await w.client.get(f"/api/sessions/{session_id}")).json()["state"]
        peeked = (await w.client.get(f"/api/sessions/{session_id}/calls/{call_id}")).json()
        for shown in (state["calls"][call_id], peeked):
            named = (shown["call_id"], shown["tool_name"], shown["tool_input"])
            assert named == (snapshot.call_id, snapshot.tool_name, snapshot.tool_input)
            assert not {"id", "tool", "args", "tool_call_id"} & shown.keys(), shown


async def test_unknown_ids_are_404_with_a_json_error(tmp_path: Path) -> None:
    async with web(tmp_path) as w:
        session_id = await w.new_session()
        for method, path in [
            ("GET", "/api/sessions/nope"),
            ("POST", "/api/sessions/nope/messages"),
            ("GET", "/api/sessions/nope/events"),
            ("GET", f"/api/sessions/{session_id}/calls/nope"),
            ("POST", f"/api/sessions/{session_id}/calls/nope/cancel"),
            ("GET", "/no/such/page"),
        ]:
            answer = await w.client.request(method, path, json={"text": "x"})
            assert answer.status_code == 404, (path, answer.text)
            assert set(answer.json()["error"]) == {"code", "message"}


async def test_bad_bodies_get_a_clear_error_and_change_nothing(tmp_path: Path) -> None:
    async with web(tmp_path) as w:
        session_id = await w.new_session()
        messages = f"/api/sessions/{session_id}/messages"
        cases: list[tuple[dict[str, Any], int, str]] = [
            ({"content": b"{not json", "headers": JSON}, 400, "bad_json"),
            ({"content": b"[1, 2]", "headers": JSON}, 400, "bad_request"),
            ({"json": {"text": "  "}}, 400, "bad_request"),
            ({"json": {"text": 7}}, 400, "bad_request"),
            ({"json": {"text": "hi", "reply_to": "1"}}, 400, "bad_request"),
            ({"content": b'{"text": "hi"}'}, 415, "unsupported_media_type"),
            ({"data": {"text": "hi"}}, 415, "unsupported_media_type"),
            ({"json": {"text": "x" * (MAX_BODY + 1)}}, 413, "too_large"),
        ]
        for request, status, code in cases:
            answer = await w.client.post(messages, **request)
            assert (answer.status_code, answer.json()["error"]["code"]) == (status, code), request
        assert w.session(session_id).requests == 0, "nothing was posted"
        assert w.session(session_id).chat == []


async def test_a_post_from_another_origin_is_refused(tmp_path: Path) -> None:
    async with web(tmp_path) as w:
        session_id = await w.new_session()
        answer = await w.client.post(
            f"/api/sessions/{session_id}/messages",
            json={"text": "hi"},
            headers={"Origin": "http://evil.example"},
        )
        assert (answer.status_code, answer.json()["error"]["code"]) == (403, "cross_origin")
        same = await w.client.post(
            f"/api/sessions/{session_id}/messages", json={"text": "hi"}, headers={"Origin": w.url}
        )
        assert same.status_code == 202


async def test_a_forged_host_is_refused_before_any_route(tmp_path: Path) -> None:
    """DNS rebinding: a site whose name resolves to 127.0.0.1 sends its own Host. Without a
    token only this machine's names are answered, GET and POST, page and stream alike."""
    async with web(tmp_path) as w:
        session_id = await w.new_session()
        evil = {"Host": "evil.example", "Origin": "http://evil.example"}
        messages = f"/api/sessions/{session_id}/messages"
        async with httpx.AsyncClient(base_url=w.url, timeout=10) as real:
            refused = [
                await real.get("/", headers=evil),
                await real.get("/api/sessions", headers=evil),
                await real.get(f"/api/sessions/{session_id}/events", headers=evil),
                await real.post("/api/sessions", json={}, headers=evil),
                await real.post(messages, json={"text": "x"}, headers=evil),
                await real.get("/api/sessions", headers={"Host": "127.0.0.1.evil.example"}),
            ]
            assert [r.status_code for r in refused] == [400] * 6
            assert {r.json()["error"]["code"] for r in refused} == {"unknown_host"}
            assert [s.session_id for s in w.host.list()] == [session_id], "nothing was made"
            assert w.host.get(session_id).history == [], "nothing was posted"
            port = w.url.rsplit(":", 1)[1]
            for name in (f"localhost:{port}", f"[::1]:{port}", f"127.0.0.1:{port}", "LOCALHOST"):
                answer = await real.get("/api/sessions", headers={"Host": name})
                assert answer.status_code == 200, name


async def test_allowed_hosts_admit_a_reverse_proxys_name(tmp_path: Path) -> None:
    async with web(tmp_path, allowed_hosts=("agents.internal",)) as w:
        headers = {"Host": "agents.internal:8443"}
        async with httpx.AsyncClient(base_url=w.url, timeout=10) as real:
            assert (await real.get("/api/sessions", headers=headers)).status_code == 200
            other = await real.get("/api/sessions", headers={"Host": "elsewhere.internal"})
            assert other.status_code == 400


async def test_a_cross_site_request_is_refused_but_on_the_top_page(tmp_path: Path) -> None:
    """What the browser marks cross-site (an <img> or a fetch from another site's page) is
    refused, so it opens no stored session; following a link to the list is still fine."""
    async with web(tmp_path) as w:
        session_id = await w.new_session()
        cross = {"Sec-Fetch-Site": "cross-site"}
        refused = [
            await w.client.get(f"/sessions/{session_id}", headers=cross),
            await w.client.get(f"/api/sessions/{session_id}", headers=cross),
            await w.client.get("/api/sessions", headers=cross),
        ]
        assert [r.status_code for r in refused] == [403] * 3
        assert {r.json()["error"]["code"] for r in refused} == {"cross_site"}
        assert (await w.client.get("/", headers=cross)).status_code == 200
        for own in ("same-origin", "none"):
            answer = await w.client.get("/api/sessions", headers={"Sec-Fetch-Site": own})
            assert answer.status_code == 200


async def test_every_response_forbids_framing_and_foreign_scripts(tmp_path: Path) -> None:
    async with web(tmp_path) as w:
        session_id = await w.new_session()
        answers = [
            await w.client.get("/"),
            await w.client.get(f"/sessions/{session_id}"),
            await w.client.get("/api/sessions"),
            await w.client.get("/api/sessions/nobody"),
            await w.client.get("/static/app.js"),
        ]
        for answer in answers:
            assert answer.headers["content-security-policy"] == (
                "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"
            ), answer.url
            assert answer.headers["x-content-type-options"] == "nosniff"
            assert answer.headers["referrer-policy"] == "no-referrer"
        for page in answers[:2]:
            assert "<script>" not in page.text, "the policy allows no inline script"


async def test_a_token_guards_every_request_the_stream_too(tmp_path: Path) -> None:
    async with web(tmp_path, token="s3cret") as w:
        refused = [
            await w.client.get("/"),
            await w.client.get("/api/sessions"),
            await w.client.post("/api/sessions", json={}),
            await w.client.get("/api/sessions", headers={"Authorization": "Bearer wrong"}),
            await w.client.get("/api/sessions?token=wrong"),
        ]
        assert [r.status_code for r in refused] == [401] * 5
        assert w.host.list() == [], "a refused POST made nothing"
        bearer = {"Authorization": "Bearer s3cret"}
        made = await w.client.post("/api/sessions", json={}, headers=bearer)
        session_id = made.json()["session_id"]
        page = await w.client.get("/?token=s3cret")
        assert page.status_code == 200 and page.cookies[TOKEN_COOKIE] == "s3cret"
        by_cookie = await w.client.get("/api/sessions")  # the page's cookie, as a browser keeps
        assert by_cookie.status_code == 200
        async with httpx.AsyncClient(base_url=w.url) as real:
            bare = await real.get(f"/api/sessions/{session_id}/events")
            assert bare.status_code == 401
        async with stream(w, session_id, headers=bearer) as events:
            (first,) = await until(events, lambda e: True)
            assert first.event == "snapshot"


# ------------------------------------------------------------------ the stream


async def test_a_deep_body_is_400_and_a_garbage_last_event_id_gets_a_snapshot(
    tmp_path: Path,
) -> None:
    async with web(tmp_path) as w:
        session_id = await w.new_session()
        deep = "[" * 30_000 + "]" * 30_000
        answer = await w.client.post(
            f"/api/sessions/{session_id}/messages",
            content=deep,
            headers={"Content-Type": "application/json"},
        )
        assert (answer.status_code, answer.json()["error"]["code"]) == (400, "bad_json")
        for garbage in (b"\xb2", b"9" * 5_000, b"-1", b"1e3"):  # b"\xb2" reads as "\u00b2"
            async with stream(w, session_id, last_event_id=garbage) as events:
                (first,) = await until(events, lambda e: True)
                assert first.event == "snapshot", garbage


async def test_the_stream_starts_with_a_snapshot_then_pushes_changes(tmp_path: Path) -> None:
    async with web(tmp_path) as w:
        session_id = await w.new_session()
        async with stream(w, session_id) as events:
            (snapshot,) = await until(events, lambda e: True)
            assert snapshot.event == "snapshot" and json.loads(snapshot.data)["chat"] == []
            await w.post(session_id, "start 2")
            seen = await until(events, call_event("running"))
            if not any(e.event == "chat" and "Started." in e.data for e in seen):
                seen += await until(events, lambda e: e.event == "chat" and "Started." in e.data)
            ids = [int(e.id) for e in seen]
            assert ids == sorted(ids) and len(set(ids)) == len(ids), "numbered in order"
            first = next(iter(w.puppet.calls))
            w.puppet.complete(first, "done")
            ended = await until(events, call_event("completed"))
            assert json.loads(ended[-1].data)["call"]["call_id"] == first


async def test_a_reconnect_with_last_event_id_misses_nothing(tmp_path: Path) -> None:
    async with web(tmp_path) as w:
        session_id = await w.new_session()
        async with stream(w, session_id) as events:
            await until(events, lambda e: True)
            await w.post(session_id, "start 1")
            seen = await until(events, call_event("running"))
            last = seen[-1].id
        (call_id,) = w.puppet.calls
        w.puppet.progress(call_id, {"percent": 50})  # while no page is connected
        w.puppet.complete(call_id, "done")
        await w.idle(session_id)
        async with stream(w, session_id, last_event_id=last) as events:
            missed = await until(events, call_event("completed"))
        assert missed[0].event != "snapshot", "it resumes, not restarts"
        assert int(missed[0].id) == int(last) + 1
        async with stream(w, session_id, last_event_id="999999") as events:
            (again,) = await until(events, lambda e: True)
        assert again.event == "snapshot", "an id from the future gets the whole page"
        state = json.loads(again.data)
        assert state["calls"][call_id]["status"] == "completed"


async def test_a_page_that_stops_reading_is_let_go_and_the_others_go_on(tmp_path: Path) -> None:
    """A page that takes nothing while megabytes wait for it is disconnected after
    ``stall_seconds`` (and what its socket held goes with it); a page that reads meanwhile
    gets every change."""
    big = "x" * 2_000_000
    async with web(tmp_path, stall_seconds=0.5) as w:
        session_id = await w.new_session()
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        try:
            host, port = w.url.removeprefix("http://").split(":")
            stalled.connect((host, int(port)))
            path = f"/api/sessions/{session_id}/events"
            stalled.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
            await w.streams_until(lambda counts: counts.open == 1)
            async with stream(w, session_id) as events, anyio.create_task_group() as group:
                await until(events, lambda e: e.event == "snapshot")
                await w.streams_until(lambda counts: counts.open == 2)
                read: list[ServerSentEvent] = []

                async def reading() -> None:
                    last = lambda e: e.event == "chat" and '"text": "3 x' in e.data  # noqa: E731
                    read.extend(await until(events, last))

                group.start_soon(reading)
                for number in range(4):
                    w.session(session_id).post(f"{number} {big}")
                    await w.idle(session_id)
                await w.streams_until(lambda counts: counts.open == 1)
            texts = [json.loads(e.data)["chat"] for e in read if e.event == "chat"]
            posted = [entry["text"][:2] for chat in texts for entry in chat]
            assert [f"{n} " for n in range(4)] == [t for t in posted if t != "ok"]
        finally:
            stalled.close()


async def test_a_progress_flood_is_coalesced(tmp_path: Path) -> None:
    """90 progress reports in one burst reach the page as a few call events, the last one
    showing the newest progress."""
    async with web(tmp_path) as w:
        session_id = await w.new_session()
        await w.post(session_id, "start 1")
        (call_id,) = await w.started(1)
        async with stream(w, session_id) as events:
            await until(events, lambda e: True)
            for percent in range(1, 91):
                w.puppet.progress(call_id, {"percent": percent})
            seen = await until(
                events,
                lambda e: e.event == "call" and json.loads(e.data)["call"]["percent"] == 90,
            )
        calls = [e for e in seen if e.event == "call"]
        assert 1 <= len(calls) <= 5, len(calls)


async def test_what_a_tool_or_user_wrote_is_data_not_markup(tmp_path: Path) -> None:
    """Escaping: the API carries payloads as JSON strings, and the page's script only ever
    writes text (no innerHTML); the browser tests check the DOM itself."""
    evil = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    async with web(tmp_path) as w:
        session_id = await w.new_session()
        await w.post(session_id, evil)
        await w.idle(session_id)
        state = (await w.client.get(f"/api/sessions/{session_id}")).json()["state"]
        assert state["chat"][0]["text"] == evil
        page = (await w.client.get(f"/sessions/{session_id}")).text
        assert evil not in page and "onerror" not in page
        for name in ("app.js", "words.js", "results.js", "list.js", "session.js"):
            served = await w.client.get(f"/static/{name}")
            assert served.status_code == 200, name
            script = served.text
            for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
                assert sink not in script, (name, sink)


async def test_a_board_sessions_page_shows_its_chat_and_the_board(tmp_path: Path) -> None:
    """A board session: the page's chat is seed 004's projection (a look at a call is not
    shown), and what the model reads next is the board."""
    async with web(tmp_path, config=AgentConfig(context_view="board")) as w:
        session_id = await w.new_session()
        await w.post(session_id, "start 1")
        (call_id,) = await w.started(1)
        await w.idle(session_id)
        state = (await w.client.get(f"/api/sessions/{session_id}")).json()["state"]
        assert state["view"] == "board"
        assert [(e["role"], e["text"]) for e in state["chat"]] == [
            ("user", "start 1"),
            ("agent", "Started."),
        ]
        assert state["chat"][1]["calls"] == [call_id]
        assert state["calls"][call_id]["status"] == "running"
        assert state["context"].startswith("[user] .. #1 user 'start 1'")  # its answer waits
        assert f'RUNNING as id "{call_id}"' in state["context"]


@pytest.mark.parametrize("view", ["transcript", "board"])
async def test_the_events_rebuild_the_page_exactly(tmp_path: Path, view: str) -> None:
    """Events carry only what changed (the chat from its first changed entry, the context's
    new lines); applied in order from the snapshot they give the page the server has, also
    when a board reorders its threads and rewrites the middle of what the model reads."""
    async with web(tmp_path, config=AgentConfig(context_view=view)) as w:
        session_id = await w.new_session()
        page: dict[str, Any] = {}
        async with stream(w, session_id) as events, anyio.create_task_group() as group:
            seen: list[ServerSentEvent] = []

            async def follow() -> None:
                async for event in events:
                    applied(page, event)
                    seen.append(event)

            group.start_soon(follow)

            async def step() -> None:  # each step its own publication: a look publishes
                await settle(w.runtime)  # a transcript turn waits for its calls: not idle
                await w.client.get(f"/api/sessions/{session_id}")

            await w.post(session_id, "start 2")
            first, second = await w.started(2)
            await step()
            w.puppet.progress(first, {"percent": 50})
            await w.post(session_id, "hello")
            await step()
            w.puppet.complete(first, "done")
            await step()
            reply: dict[str, Any] = {"text": "and the first?"}
            if view == "board":
                reply["reply_to"] = 1  # its thread moves last
            posted = await w.client.post(f"/api/sessions/{session_id}/messages", json=reply)
            assert posted.status_code == 202, posted.text
            await step()
            w.puppet.fail(second, "broke")
            await w.idle(session_id)
            shown = (await w.client.get(f"/api/sessions/{session_id}")).json()
            with anyio.fail_after(10):
                while not seen or int(seen[-1].id) < shown["last_event_id"]:
                    await anyio.lowlevel.checkpoint()
            group.cancel_scope.cancel()
        state = shown["state"]
        for part in ("title", "status", "access", "errors", "chat", "context"):
            assert page[part] == state[part], part
        quiet = {"elapsed"}
        for call_id, widget in state["calls"].items():
            mine = {k: v for k, v in page["calls"][call_id].items() if k not in quiet}
            assert mine == {k: v for k, v in widget.items() if k not in quiet}
        deltas = [json.loads(e.data) for e in seen if e.event == "chat"]
        assert any(delta["chat_from"] > 0 for delta in deltas), "not the whole chat each time"


@asynccontextmanager
async def other_host(tmp_path: Path, address: str | None = None) -> AsyncIterator[Host]:
    """A second host on the page's database, as another process would be."""
    async with (
        await open_store(address or tmp_path / "agentos.db") as store,
        running(model(), store=store) as (_, host),
    ):
        yield host


async def said(session: Session, words: str) -> None:
    session.post(words)
    with anyio.fail_after(5):
        await session.wait_idle()
    await session.commit()


def access_is(**expected: object) -> Callable[[ServerSentEvent], bool]:
    def matches(event: ServerSentEvent) -> bool:
        if event.event not in ("access", "snapshot"):
            return False
        access = json.loads(event.data)["access"]
        return all(access[name] == value for name, value in expected.items())

    return matches


async def test_a_session_another_live_process_holds_is_shown_read_only(
    tmp_path: Path, backend: Backend
) -> None:
    """The page shows a session another live host holds as the store has it, naming the
    holder; opening it, posting to it and cancelling in it are refused, and nothing is
    taken from that host (on either backend: with PostgreSQL the hosts may be machines)."""
    async with other_host(tmp_path, backend.address) as other:
        held = await other.create_session(AgentConfig(), session_id="held")
        await said(held, "hello")
        async with web(tmp_path, address=backend.address) as w:
            listed = (await w.client.get("/api/sessions")).json()["sessions"]
            assert [row["session_id"] for row in listed] == ["held"]
            shown = await w.client.get("/api/sessions/held")
            assert shown.status_code == 200, shown.text
            state = shown.json()["state"]
            access = {"open": False, "holder": other.holder, "here": w.host.holder}
            assert w.host.store is not None
            stored = await w.host.store.load_session("held")
            assert stored is not None
            assert state["access"] == access | {"changed_at": stored.updated_at}
            assert [e["text"] for e in state["chat"]] == ["hello", "ok"]
            opened = await w.client.post("/api/sessions/held/open", json={})
            assert opened.status_code == 409, opened.text
            assert opened.json()["error"]["code"] == "session_in_use"
            assert "steal" not in opened.json()["error"]["message"], "no Python for a person"
            posted = await w.client.post("/api/sessions/held/messages", json={"text": "mine?"})
            assert posted.status_code == 409
            assert posted.json()["error"]["code"] == "not_open"
            assert other.holder in posted.json()["error"]["message"]
        assert held.status == "idle" and held.errors == [], "the holder keeps its session"


async def test_take_over_runs_here_a_session_another_process_holds(tmp_path: Path) -> None:
    """The page's Take over: the lease is taken from the holder, which stops writing the
    session, and the page runs it; a session nobody knows is 404."""
    async with other_host(tmp_path) as other:
        held = await other.create_session(AgentConfig(), session_id="held")
        await said(held, "hello")
        async with web(tmp_path) as w:
            unknown = await w.client.post("/api/sessions/nope/take-over", json={})
            assert unknown.status_code == 404, unknown.text
            taken = await w.client.post("/api/sessions/held/take-over", json={})
            assert taken.status_code == 200, taken.text
            access = taken.json()["state"]["access"]
            assert (access["open"], access["holder"]) == (True, w.host.holder)
            assert (await other.holders()).get("held") != other.holder
            assert held.errors and "taken over" in held.errors[-1], "the holder stops writing"
            again = await w.client.post("/api/sessions/held/take-over", json={})
            assert again.status_code == 200, "taking over a session run here changes nothing"
            await w.post("held", "mine now")
            await w.idle("held")
            chat = (await w.client.get("/api/sessions/held")).json()["state"]["chat"]
            assert [e["text"] for e in chat] == ["hello", "ok", "mine now", "ok"]


async def test_a_session_this_server_cannot_run_is_not_taken_over_and_says_why(
    tmp_path: Path,
) -> None:
    """Issue 47: Take over of a session whose model function this server cannot import
    stole the lease, then failed with a bare 500: nobody ran the session. It is now a 409
    naming the model, and the holder keeps the session and goes on writing it; a message
    to it once nobody holds it is refused the same way."""
    async with other_host(tmp_path) as other:
        config = AgentConfig(model="agentos_not_here:reply")
        held = await other.create_session(config, session_id="held", provider=model())
        await said(held, "hello")
        async with web(tmp_path) as w:
            taken = await w.client.post("/api/sessions/held/take-over", json={})
            assert taken.status_code == 409, taken.text
            error = taken.json()["error"]
            assert error["code"] == "cannot_run"
            assert "Nothing was taken over." in error["message"]
            assert "agentos_not_here" in error["message"], "it names what is missing"
            assert (await other.holders())["held"] == other.holder, "the holder keeps it"
            await said(held, "still mine")
            assert held.errors == []
            await other.unload("held")
            posted = await w.client.post("/api/sessions/held/messages", json={"text": "x"})
            assert posted.status_code == 409, posted.text
            assert posted.json()["error"]["code"] == "cannot_run"
            assert "agentos_not_here" in posted.json()["error"]["message"]
            assert "held" not in await w.host.holders()


async def test_looking_at_a_stored_session_takes_no_lease(tmp_path: Path) -> None:
    """Reading a stored session's page, its stream and a call resumes nothing: another
    process can resume it meanwhile, without stealing."""
    async with other_host(tmp_path) as first:
        session = await first.create_session(AgentConfig(), session_id="s")
        await said(session, "hello")
        await first.unload("s")
    async with web(tmp_path) as w:
        for path in ("/api/sessions/s", "/api/sessions/s/calls/nope", "/sessions/s"):
            await w.client.get(path, headers={"Sec-Fetch-Site": "same-origin"})
        async with stream(w, "s") as events:
            (snapshot,) = await until(events, lambda e: e.event == "snapshot")
            assert json.loads(snapshot.data)["access"]["open"] is False
            assert w.host.list() == [], "nothing was resumed"
            assert "s" not in await w.host.holders()
            async with other_host(tmp_path) as second:
                resumed = await second.resume("s")
                assert resumed.status == "idle"
                await until(events, access_is(holder=second.holder))


async def test_open_resumes_a_stored_session_and_the_page_goes_live(tmp_path: Path) -> None:
    async with other_host(tmp_path) as first:
        await said(await first.create_session(AgentConfig(), session_id="s"), "hello")
    async with web(tmp_path) as w, stream(w, "s") as events:
        await until(events, access_is(open=False, holder=None))
        opened = await w.client.post("/api/sessions/s/open", json={})
        assert opened.status_code == 200, opened.text
        assert opened.json()["state"]["access"]["open"] is True
        await until(events, access_is(open=True, holder=w.host.holder))
        await w.post("s", "again")
        await w.idle("s")
        texts = [e["text"] for e in (await w.client.get("/api/sessions/s")).json()["state"]["chat"]]
        assert texts == ["hello", "ok", "again", "ok"]


async def test_a_session_taken_over_is_noticed_by_its_page_and_opened_again_once_free(
    tmp_path: Path,
) -> None:
    """Another process steals the session: its page says who holds it now (long before the
    next lease renewal), shows what that process writes, and Open takes it back once the
    other process has let it go."""
    async with web(tmp_path, lease_period=3600) as w:
        session_id = await w.new_session()
        await w.post(session_id, "hello")
        await w.idle(session_id)
        async with stream(w, session_id) as events:
            await until(events, access_is(open=True))
            async with other_host(tmp_path) as thief:
                stolen = await thief.resume(session_id, steal=True)
                await until(events, access_is(open=False, holder=thief.holder))
                refused = await w.client.post(f"/api/sessions/{session_id}/open", json={})
                assert refused.status_code == 409, refused.text
                await said(stolen, "theirs")
                seen = await until(events, lambda e: e.event == "chat" and "theirs" in e.data)
                assert seen
            await until(events, access_is(open=False, holder=None))
            opened = await w.client.post(f"/api/sessions/{session_id}/open", json={})
            assert opened.status_code == 200, opened.text
            await until(events, access_is(open=True, holder=w.host.holder))
            await w.post(session_id, "mine again")
            await w.idle(session_id)
            chat = (await w.client.get(f"/api/sessions/{session_id}")).json()["state"]["chat"]
            assert [e["text"] for e in chat] == ["hello", "ok", "theirs", "ok", "mine again", "ok"]


async def test_a_call_another_process_runs_shows_its_mirrored_progress(tmp_path: Path) -> None:
    """Read only, but live: the page shows a call the holder runs with the progress its
    mirror writes; peek shows it too, and the page offers no Cancel (the holder's own)."""
    puppet = Puppet()
    async with held_elsewhere(tmp_path, model(), puppet, "s", "start 1"):
        (call_id,) = puppet.calls
        async with web(tmp_path) as w, stream(w, "s") as events:
            puppet.progress(call_id, {"percent": 40})
            seen = await until(
                events, lambda e: e.event == "call" and json.loads(e.data)["call"]["percent"] == 40
            )
            widget = json.loads(seen[-1].data)["call"]
            shown = (widget["tool_name"], widget["status"], widget["final"])
            assert shown == ("puppet", "running", False)
            peeked = await w.client.get(f"/api/sessions/s/calls/{widget['call_id']}")
            assert peeked.status_code == 200, peeked.text
            assert peeked.json()["progress"] == [{"payload": {"percent": 40}}]
            cancel = await w.client.post(
                f"/api/sessions/s/calls/{widget['call_id']}/cancel", json={}
            )
            assert cancel.status_code == 409 and cancel.json()["error"]["code"] == "not_open"
            assert not puppet.calls[call_id].cancelled, "the holder's call runs on"


async def test_a_session_unloaded_here_turns_read_only_on_its_page(tmp_path: Path) -> None:
    async with web(tmp_path) as w:
        session_id = await w.new_session()
        await w.post(session_id, "hello")
        await w.idle(session_id)
        async with stream(w, session_id) as events:
            await until(events, access_is(open=True))
            await w.host.unload(session_id)
            await until(events, access_is(open=False, holder=None))
        posted = await w.client.post(f"/api/sessions/{session_id}/messages", json={"text": "x"})
        assert posted.status_code == 202, "writing to a session nobody runs opens it here"
        await w.idle(session_id)
        chat = (await w.client.get(f"/api/sessions/{session_id}")).json()["state"]["chat"]
        assert [entry["text"] for entry in chat] == ["hello", "ok", "x", "ok"]


async def test_two_opens_of_a_stored_session_at_once_resume_it_once(tmp_path: Path) -> None:
    async with web(tmp_path) as w:
        session_id = await w.new_session()
        await w.post(session_id, "hello")
        await w.idle(session_id)
        await w.host.unload(session_id)
        answers: list[httpx.Response] = []

        async def open_page() -> None:
            answers.append(await w.client.post(f"/api/sessions/{session_id}/open", json={}))

        async with anyio.create_task_group() as group:
            group.start_soon(open_page)
            group.start_soon(open_page)
        assert [answer.status_code for answer in answers] == [200, 200], answers[-1].text
        assert [e["text"] for e in answers[0].json()["state"]["chat"]] == ["hello", "ok"]
        assert len(w.host.list()) == 1


# ------------------------------------------------------------------ titles


async def test_a_rename_shows_on_the_page_at_once_and_in_the_list(tmp_path: Path) -> None:
    """Issue 30: a session's title is its first message until it is named; the name goes to
    its pages as a ``title`` event and is the list's title, and an empty one undoes it."""
    async with web(tmp_path) as w:
        session_id = await w.new_session()
        title = f"/api/sessions/{session_id}/title"
        await w.post(session_id, "hello\nthere")
        await w.idle(session_id)
        state = (await w.client.get(f"/api/sessions/{session_id}")).json()["state"]
        assert state["title"] == "hello there"
        async with stream(w, session_id) as events:
            await until(events, lambda e: e.event == "snapshot")
            renamed = await w.client.post(title, json={"title": " Greetings\n to all "})
            assert renamed.status_code == 200, renamed.text
            row = renamed.json()
            assert (row["session_id"], row["title"], row["live"]) == (
                session_id,
                "Greetings to all",
                True,
            )
            (event,) = await until(events, lambda e: e.event == "title")
            assert json.loads(event.data) == {"title": "Greetings to all"}
        (listed,) = (await w.client.get("/api/sessions")).json()["sessions"]
        assert listed["title"] == "Greetings to all"
        assert w.session(session_id).title == "Greetings to all"
        undone = await w.client.post(title, json={"title": ""})
        assert undone.status_code == 200 and undone.json()["title"] == "hello there"


async def test_a_stored_session_is_renamed_without_opening_it(tmp_path: Path) -> None:
    async with other_host(tmp_path) as first:
        await said(await first.create_session(AgentConfig(), session_id="s"), "hello")
        await first.unload("s")
    async with web(tmp_path) as w:
        shown = (await w.client.get("/api/sessions/s")).json()["state"]
        assert shown["title"] == "hello", "a stored session's first words"
        renamed = await w.client.post("/api/sessions/s/title", json={"title": "Stored"})
        assert renamed.status_code == 200, renamed.text
        assert (renamed.json()["title"], renamed.json()["live"]) == ("Stored", False)
        assert w.host.list() == [], "nothing was resumed"
        assert (await w.client.get("/api/sessions/s")).json()["state"]["title"] == "Stored"
        (listed,) = (await w.client.get("/api/sessions")).json()["sessions"]
        assert listed["title"] == "Stored"


async def test_a_bad_rename_gets_a_clear_error_and_changes_nothing(tmp_path: Path) -> None:
    """The rename endpoint is guarded as every POST is (JSON, this page's origin, this
    machine's names, not cross-site) and says what is wrong with a body."""
    async with web(tmp_path) as w:
        session_id = await w.new_session()
        await w.post(session_id, "hello")
        await w.idle(session_id)
        title = f"/api/sessions/{session_id}/title"
        cases: list[tuple[dict[str, Any], int, str]] = [
            ({"content": b"{not json", "headers": JSON}, 400, "bad_json"),
            ({"content": b'["Named"]', "headers": JSON}, 400, "bad_request"),
            ({"json": {}}, 400, "bad_request"),
            ({"json": {"title": 7}}, 400, "bad_request"),
            ({"json": {"title": None}}, 400, "bad_request"),
            ({"json": {"title": "x" * 81}}, 400, "bad_request"),
            ({"content": b'{"title": "Named"}'}, 415, "unsupported_media_type"),
            ({"data": {"title": "Named"}}, 415, "unsupported_media_type"),
            ({"json": {"title": "x" * (MAX_BODY + 1)}}, 413, "too_large"),
            (
                {"json": {"title": "Named"}, "headers": {"Origin": "http://evil.example"}},
                403,
                "cross_origin",
            ),
            (
                {"json": {"title": "Named"}, "headers": {"Sec-Fetch-Site": "cross-site"}},
                403,
                "cross_site",
            ),
        ]
        for request, status, code in cases:
            answer = await w.client.post(title, **request)
            assert (answer.status_code, answer.json()["error"]["code"]) == (status, code), request
        wrong = await w.client.post(title, json={"title": 7})
        assert "'title' must be a string" in wrong.json()["error"]["message"]
        long = await w.client.post(title, json={"title": "x" * 81})
        assert "at most 80 characters" in long.json()["error"]["message"]
        unknown = await w.client.post("/api/sessions/nope/title", json={"title": "Named"})
        assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "unknown_session")
        async with httpx.AsyncClient(base_url=w.url, timeout=10) as real:
            evil = {"Host": "evil.example", "Origin": "http://evil.example"}
            forged = await real.post(title, json={"title": "Named"}, headers=evil)
            assert (forged.status_code, forged.json()["error"]["code"]) == (400, "unknown_host")
        assert w.session(session_id).title == "hello", "nothing was renamed"
        assert w.host.store is not None
        stored = await w.host.store.load_session(session_id)
        assert stored is not None and stored.title is None


async def test_a_rename_needs_the_token(tmp_path: Path) -> None:
    async with web(tmp_path, token="s3cret") as w:
        bearer = {"Authorization": "Bearer s3cret"}
        made = await w.client.post("/api/sessions", json={}, headers=bearer)
        title = f"/api/sessions/{made.json()['session_id']}/title"
        refused = await w.client.post(title, json={"title": "Named"})
        assert (refused.status_code, refused.json()["error"]["code"]) == (401, "unauthorized")
        assert w.host.list()[0].title == ""
        named = await w.client.post(title, json={"title": "Named"}, headers=bearer)
        assert named.status_code == 200 and w.host.list()[0].title == "Named"


def test_the_listening_socket_sends_at_once_and_drops_a_stalled_reader() -> None:
    """``listen`` sets what asyncio leaves unset on ``create_server``'s sockets (answers
    written in two parts waited 40 ms for a delayed ACK), and the kernel's bound on a page
    that stops reading; accepted connections inherit both."""
    with (
        listen("127.0.0.1", 0, stall_seconds=2.5) as listening,
        socket.create_connection(listening.getsockname()[:2]),
    ):
        accepted, _ = listening.accept()
        with accepted:
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
            if hasattr(socket, "TCP_USER_TIMEOUT"):
                timeout = accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT)
                assert timeout == 2500


@pytest.mark.parametrize("stall_seconds", [0, -1, float("inf"), True, "30"])
async def test_a_stall_time_that_is_not_a_positive_number_is_refused(stall_seconds: Any) -> None:
    async with Runtime([]) as runtime:
        with pytest.raises(ValueError, match="stall_seconds must be a positive number"):
            make_app(Host(runtime, model()), runtime, stall_seconds=stall_seconds)


async def test_a_streaming_reply_grows_on_the_page_and_its_call_shows_once_whole(
    tmp_path: Path,
) -> None:
    """Issue 28: the real SDK streams from the stand-in; the page's stream carries the reply
    as it forms, and the call it asks for as soon as its ``tool_use`` block is whole, while
    the rest of the reply has not arrived."""
    async with streaming_a_call() as (api, provider), web(tmp_path, provider=provider) as w:
        session_id = await w.new_session()
        async with stream(w, session_id) as events:
            (snapshot,) = await until(events, lambda e: True)
            assert json.loads(snapshot.data)["streaming"] is None
            await w.post(session_id, "look")
            shown = await until(
                events, lambda e: e.event == "streaming" and '"calls": [{' in e.data
            )
            growing = [json.loads(e.data)["streaming"] for e in shown if e.event == "streaming"]
            assert all(reply["text"].startswith("Let") for reply in growing)
            forming = growing[-1]
        assert forming == {
            "text": "Let me look.",
            "calls": [
                {
                    "provider_call_id": "toolu_p",
                    "tool_name": "puppet",
                    "tool_input": {"label": "p"},
                }
            ],
        }
        assert w.puppet.calls == {}, "the machine sees the reply once it is whole"
        w.session(session_id).stop()
        assert await anyio.to_thread.run_sync(api.client_closed.wait, 10)
