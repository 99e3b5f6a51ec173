"""A loopback stand-in of the Anthropic Messages API, for tests and benchmarks.

``MessagesStandIn`` serves scripted replies to ``POST /v1/messages`` on 127.0.0.1 and
records what it received, so the real ``anthropic`` SDK (its request building, retries,
and its streaming parser) is exercised offline. A request that asks to stream gets a
scripted message as the server-sent events the API sends (``message_start``, each
block's start, deltas and stop, ``message_delta``, ``message_stop``); a stream can be
slowed, broken, failed or held open mid-way.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from types import TracebackType
from typing import Any

JSON_HEADERS: Mapping[str, str] = {"content-type": "application/json"}


@dataclass(frozen=True)
class Reply:
    """One scripted HTTP response.

    ``body``: bytes and str are sent as they are, anything else as JSON; a 200 reply whose
    body is a message (``message_body``) is sent as events when the request streams.
    ``delay``: seconds before the response. For a stream: ``chunk`` characters per delta,
    ``event_delay`` seconds between events, and after ``stop_after`` events either the
    connection is closed (``then="break"``), an ``error`` event is sent (``then=error``
    body), nothing more is sent until the client closes (``then="hang"``), or the rest
    follows once the stand-in's ``resume`` is set (``then="pause"``).
    """

    status: int
    body: object
    headers: Mapping[str, str] = field(default_factory=lambda: dict(JSON_HEADERS))
    delay: float = 0.0
    chunk: int = 8
    event_delay: float = 0.0
    stop_after: int | None = None
    then: str | Mapping[str, Any] = "break"

    def encoded(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        return json.dumps(self.body).encode()

    def streams(self, seen: Seen) -> bool:
        """Whether this reply goes out as events: the request streams and it is a message."""
        streaming = isinstance(seen.body, dict) and seen.body.get("stream") is True
        message = isinstance(self.body, dict) and self.body.get("type") == "message"
        return streaming and message and self.status == 200


@dataclass(frozen=True)
class Seen:
    """One request the stand-in received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


def error_body(kind: str, message: str) -> dict[str, Any]:
    """An error body in the shape the Messages API sends."""
    return {"type": "error", "error": {"type": kind, "message": message}}


def message_body(
    content: list[Any],
    stop_reason: str | None = "end_turn",
    usage: Mapping[str, Any] | None = None,
    *,
    model: str = "claude-test-model",
) -> dict[str, Any]:
    """A Messages reply holding ``content``."""
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": dict(usage if usage is not None else {"input_tokens": 12, "output_tokens": 5}),
    }


def sse(*events: Mapping[str, Any] | str) -> bytes:
    """Server-sent events as the API frames them (a str is sent as it is, unframed)."""
    return b"".join(_frame(event) for event in events)


def _frame(event: Mapping[str, Any] | str) -> bytes:
    if isinstance(event, str):
        return event.encode()
    return f"event: {event.get('type')}\ndata: {json.dumps(event)}\n\n".encode()


def message_events(message: Mapping[str, Any], chunk: int = 8) -> list[dict[str, Any]]:
    """The events the API streams for ``message``: text and tool input in ``chunk``-sized
    deltas, every other block whole."""
    usage = dict(message.get("usage") or {})
    start_usage = {**usage, "output_tokens": 1}
    head = {**message, "content": [], "stop_reason": None, "usage": start_usage}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": head}, {"type": "ping"}]
    for index, block in enumerate(message.get("content") or []):
        events.extend(_block_events(index, block, max(1, chunk)))
    delta = {"stop_reason": message.get("stop_reason"), "stop_sequence": None}
    tail = {"output_tokens": usage.get("output_tokens", 0)}
    events.append({"type": "message_delta", "delta": delta, "usage": tail})
    events.append({"type": "message_stop"})
    return events


def _block_events(index: int, block: object, chunk: int) -> Iterator[dict[str, Any]]:
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text" and isinstance(block, dict) and isinstance(block.get("text"), str):
        yield {
            "type": "content_block_start",
            "index": index,
            "content_block": {**block, "text": ""},
        }
        text = block["text"]
        for at in range(0, len(text), chunk):
            delta = {"type": "text_delta", "text": text[at : at + chunk]}
            yield {"type": "content_block_delta", "index": index, "delta": delta}
    elif kind == "tool_use" and isinstance(block, dict) and "input" in block:
        yield {
            "type": "content_block_start",
            "index": index,
            "content_block": {**block, "input": {}},
        }
        raw = json.dumps(block["input"])
        for at in range(0, len(raw), chunk):
            delta = {"type": "input_json_delta", "partial_json": raw[at : at + chunk]}
            yield {"type": "content_block_delta", "index": index, "delta": delta}
    else:
        yield {"type": "content_block_start", "index": index, "content_block": block}
    yield {"type": "content_block_stop", "index": index}


class MessagesStandIn:
    """The stand-in: replies from a queue (``script``), then ``always`` (if set); remembers
    every request in ``requests``. Use it as a context manager; ``url`` is its address
    (give it to ``AnthropicProvider(base_url=...)`` or ``ANTHROPIC_BASE_URL``).
    ``client_closed`` is set when a client closed a stream before its end; setting
    ``resume`` lets streams paused by ``then="pause"`` go on. ``first_delta_at`` holds,
    for each stream, when (``time.time()``) its first delta was sent."""

    def __init__(self) -> None:
        self.queue: deque[Reply] = deque()
        self.always: Reply | None = None
        self.requests: list[Seen] = []
        self.client_closed = threading.Event()
        self.resume = threading.Event()
        self.first_delta_at: list[float] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.stand_in = self
        host, port = self._server.server_address[:2]
        self.url = f"http://{host!s}:{port}"
        self._thread: threading.Thread | None = None

    def __enter__(self) -> MessagesStandIn:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stopping.set()  # streams held open end
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def script(self, *replies: Reply) -> None:
        self.queue.extend(replies)

    def next_reply(self, seen: Seen) -> Reply:
        with self._lock:
            self.requests.append(seen)
            if seen.method != "POST" or seen.path != "/v1/messages":
                return Reply(404, error_body("not_found_error", f"no route {seen.path}"))
            if self.queue:
                return self.queue.popleft()
            if self.always is not None:
                return self.always
            return Reply(418, error_body("test_error", "the test scripted no reply for this"))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    stand_in: MessagesStandIn


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length", "0")))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        seen = Seen("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        stand_in = self.server.stand_in
        reply = stand_in.next_reply(seen)
        if reply.delay:
            time.sleep(reply.delay)
        try:
            if reply.streams(seen):
                self._stream(reply, stand_in)
            else:
                self._send(reply)
        except (BrokenPipeError, ConnectionResetError):
            stand_in.client_closed.set()  # the client gave up first

    def _send(self, reply: Reply) -> None:
        payload = reply.encoded()
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _stream(self, reply: Reply, stand_in: MessagesStandIn) -> None:
        assert isinstance(reply.body, dict)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()  # HTTP/1.0: the stream ends when the connection closes
        events = message_events(reply.body, reply.chunk)
        first = True
        for sent, event in enumerate(events):
            if sent == reply.stop_after:
                if reply.then != "pause":
                    self._then(reply, stand_in)
                    return
                self.wfile.flush()
                while not stand_in.resume.wait(0.01):
                    if stand_in._stopping.is_set():
                        self.close_connection = True  # held streams end with the stand-in
                        return
            if reply.event_delay and sent:
                time.sleep(reply.event_delay)
            if event["type"] == "content_block_delta" and first:
                first = False
                stand_in.first_delta_at.append(time.time())
            self.wfile.write(_frame(event))
            self.wfile.flush()

    def _then(self, reply: Reply, stand_in: MessagesStandIn) -> None:
        if isinstance(reply.then, Mapping):
            self.wfile.write(_frame(reply.then))
        elif reply.then == "hang":
            self.wfile.flush()
            while not stand_in._stopping.is_set():
                if self._client_gone(0.01):
                    stand_in.client_closed.set()
                    return
        self.close_connection = True

    def _client_gone(self, wait: float) -> bool:
        readable, _, _ = select.select([self.connection], [], [], wait)
        if not readable:
            return False
        try:
            peeked: bytes = self.connection.recv(1, socket.MSG_PEEK)
        except OSError:
            return True
        return peeked == b""

    def log_message(self, format: str, *args: Any) -> None:
        pass
