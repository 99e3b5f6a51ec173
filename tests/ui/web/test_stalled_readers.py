"""Pages that stop reading a long chat's event stream (issue 46, point 13): the server holds a
bounded buffer for each (the snapshot they start from is encoded once, for all of them, and
sent in pieces), answers meanwhile, and a page that reads again catches up.

The pages are raw sockets with a 4 KiB receive buffer over a real uvicorn server; what the
server holds is counted by ``tracemalloc`` (Python's allocations: no machine's speed in it).
"""

from __future__ import annotations

import gc
import json
import socket
import tracemalloc
from pathlib import Path
from typing import Any

import anyio
import pytest
from httpx_sse import ServerSentEvent

from tests.support.web import applied
from tests.support.web import web

pytestmark = pytest.mark.anyio

PAGES = 20
LONG = "x" * 250_000
HOLD_PER_PAGE = 256 * 1024
"""What one stalled page may cost the server beyond the snapshot they share: its share of the
connection's objects and what its socket's user-space buffer holds (64 KiB and a piece)."""


def stalled_page(url: str, path: str) -> socket.socket:
    """A page that asks for ``path``'s stream and reads nothing (a 4 KiB receive buffer)."""
    host, port = url.removeprefix("http://").split(":")
    page = socket.socket()
    page.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    page.connect((host, int(port)))
    page.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    return page


def read_events_until(page: socket.socket, last_id: int) -> list[ServerSentEvent]:
    """The events a stalled page reads once it reads again, up to the one ``last_id`` (the
    response is chunked: its chunks are put back together, then split into events)."""
    page.settimeout(10)
    received = b""
    while b"\r\n\r\n" not in received:
        received += page.recv(65536)
    head, body = received.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200"), head
    text, events = b"", []
    while True:
        while b"\r\n" not in body:
            body += page.recv(65536)
        size_line, rest = body.split(b"\r\n", 1)
        size = int(size_line, 16)
        while len(rest) < size + 2:
            rest += page.recv(65536)
        text, body = text + rest[:size], rest[size + 2 :]
        *whole, text = text.replace(b"\r\n", b"\n").split(b"\n\n")
        for block in whole:
            fields = dict(
                line.split(": ", 1)
                for line in block.decode().split("\n")
                if line and not line.startswith(":")
            )
            if fields:
                events.append(ServerSentEvent(fields["event"], fields["data"], fields["id"]))
                if int(fields["id"]) >= last_id:
                    return events


async def test_pages_that_stop_reading_a_long_chat_hold_a_bounded_buffer_each(
    tmp_path: Path,
) -> None:
    """20 pages open the stream of a session whose chat is 1 MB and read nothing while it
    changes: the server holds one snapshot for them all and a bounded buffer each (it held a
    snapshot of its own for every page, 2 MB each), answers the session's state meanwhile,
    and a page that reads again gets the snapshot and then the changes, ending as that state."""
    async with web(tmp_path, stall_seconds=None) as w:
        session_id = await w.new_session()
        for number in range(4):
            w.session(session_id).post(f"{number} {LONG}")
            await w.idle(session_id)
        size = len((await w.client.get(f"/api/sessions/{session_id}")).content)
        assert size > 2_000_000, "the chat and what the model reads: 1 MB each"
        gc.collect()
        tracemalloc.start()
        pages: list[socket.socket] = []
        try:
            before = tracemalloc.get_traced_memory()[0]
            path = f"/api/sessions/{session_id}/events"
            pages += [stalled_page(w.url, path) for _ in range(PAGES)]
            await w.streams_until(lambda counts: counts.open == PAGES)
            for number in range(3):
                await w.post(session_id, f"more {number}")
                await w.idle(session_id)
            shown = await w.client.get(f"/api/sessions/{session_id}")
            assert shown.status_code == 200, shown.text
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - before
            tracemalloc.stop()
            assert held < 2 * size + PAGES * HOLD_PER_PAGE, f"{held:,} bytes held"
            answer: dict[str, Any] = shown.json()
            events = await anyio.to_thread.run_sync(
                read_events_until, pages[0], answer["last_event_id"]
            )
        finally:
            tracemalloc.stop()
            for page in pages:
                page.close()
        assert [event.event for event in events[:1]] == ["snapshot"]
        page_state: dict[str, Any] = {}
        for event in events:
            applied(page_state, event)
        for part in ("chat", "context", "status"):
            assert page_state[part] == answer["state"][part], part
        assert [entry["text"] for entry in page_state["chat"][-2:]] == ["more 2", "ok"]
        assert json.loads(events[0].data)["chat"][0]["text"] == f"0 {LONG}"
