"""Streamed answers (issue 28, part 1): the real SDK's streaming parser against the
loopback stand-in, which sends each reply as the API's server-sent events.

A listener (and ``Session.streaming``, with ``on_change``) sees the reply grow, a
``tool_use`` block as soon as it is whole; the turn machine still sees one reply. A
stream that breaks mid-reply is one failed request, asked again within the retry budget;
a stop during a stream closes it at once.
"""

from __future__ import annotations

import os
import pty
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from agentos import AgentConfig
from agentos import AnthropicProvider
from agentos import ModelRequest
from agentos import PartialReply
from agentos import ProviderError
from agentos import StreamingProvider
from agentos.testing import MessagesStandIn
from agentos.testing import Reply
from agentos.testing import error_body
from agentos.testing import message_body
from agentos.testing import sse
from tests.support.backends import running
from tests.support.cli import read_all
from tests.support.cli import start

pytestmark = pytest.mark.anyio

MODEL = "claude-test-model"
HELLO = ModelRequest(model=MODEL, system="", messages=[{"role": "user", "content": "Hi"}])
ANSWER = "The weather in Oslo is clear, and in Bergen it rains, as ever."
TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}}
CALLS = message_body([{"type": "text", "text": "Let me look."}, TOOL_USE], "tool_use")


@pytest.fixture
async def provider(api: MessagesStandIn) -> AsyncIterator[AnthropicProvider]:
    made = AnthropicProvider(api_key="sk-test", base_url=api.url, max_retries=1)
    yield made
    await made.aclose()


def answer(text: str = ANSWER, **stream: Any) -> Reply:
    return Reply(200, message_body([{"type": "text", "text": text}]), chunk=5, **stream)


async def test_the_reply_grows_in_order_and_a_tool_use_shows_once_whole(
    api: MessagesStandIn, provider: AnthropicProvider
) -> None:
    api.script(Reply(200, CALLS, chunk=3))
    seen: list[PartialReply] = []

    response = await provider.stream(HELLO, seen.append)

    assert isinstance(provider, StreamingProvider)
    assert api.requests[0].body["stream"] is True
    texts = [partial.text for partial in seen if not partial.tool_uses]
    assert texts == ["Let", "Let me", "Let me lo", "Let me look."], "three characters a delta"
    assert seen[-1] == PartialReply("Let me look.", (TOOL_USE,)), "the block, once whole"
    assert response.content == [{"type": "text", "text": "Let me look."}, TOOL_USE]
    assert response.stop_reason == "tool_use"


async def test_a_stream_that_breaks_is_asked_again_and_the_listener_starts_over(
    api: MessagesStandIn, provider: AnthropicProvider
) -> None:
    api.script(answer(stop_after=6), answer("Second time lucky."))
    seen: list[PartialReply] = []

    response = await provider.stream(HELLO, seen.append)

    assert response.text == "Second time lucky."
    assert len(api.requests) == 2
    restart = seen.index(PartialReply())
    assert seen[restart - 1].text == ANSWER[:15], "three deltas arrived before the break"
    assert seen[-1].text == "Second time lucky."


@pytest.mark.parametrize(
    ("then", "kind", "asked"),
    [
        ("break", "connection", 2),
        (error_body("overloaded_error", "Overloaded"), "overloaded", 2),
        (error_body("api_error", "Internal server error"), "server_error", 2),
        (error_body("invalid_request_error", "prompt is too long"), "bad_request", 1),
    ],
)
async def test_a_stream_broken_every_time_is_one_failed_request_after_the_retries(
    api: MessagesStandIn, provider: AnthropicProvider, then: Any, kind: str, asked: int
) -> None:
    api.always = answer(stop_after=4, then=then)

    with pytest.raises(ProviderError) as caught:
        await provider.stream(HELLO, lambda partial: None)

    assert caught.value.kind == kind
    assert len(api.requests) == asked, "max_retries=1: a broken stream is asked once more"
    assert "\n" not in caught.value.message


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(sse("event: message_start\ndata: {not json\n\n"), id="data-not-json"),
        pytest.param(
            sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}}),
            id="delta-before-start",
        ),
        pytest.param(b"", id="no-events"),
    ],
)
async def test_events_that_are_not_a_messages_stream_are_malformed(
    api: MessagesStandIn, provider: AnthropicProvider, body: bytes
) -> None:
    api.always = Reply(200, body, {"content-type": "text/event-stream"})

    with pytest.raises(ProviderError) as caught:
        await provider.stream(HELLO, lambda partial: None)

    assert caught.value.kind == "malformed_response"
    assert len(api.requests) == 1, "not asked again"


async def test_a_session_shows_its_reply_as_it_forms(
    api: MessagesStandIn, provider: AnthropicProvider
) -> None:
    api.script(answer())
    async with running(provider) as (_, host):
        session = await host.create_session(AgentConfig(model=MODEL))
        shown: list[str | None] = []
        session.on_change(
            lambda: shown.append(None if session.streaming is None else session.streaming.text)
        )
        session.post("Weather?")
        with anyio.fail_after(10):
            await session.wait_idle()
    growing = [text for text in shown if text]
    assert growing == [ANSWER[:end] for end in range(5, len(ANSWER) + 5, 5)]
    assert session.streaming is None
    assert session.replies == [ANSWER], "the machine saw one whole reply"
    after = shown.index(ANSWER) + 1
    assert shown[after] is None, "once whole, the reply is the history's"


async def test_a_stop_during_a_stream_closes_it_at_once(
    api: MessagesStandIn, provider: AnthropicProvider
) -> None:
    api.script(answer(stop_after=5, then="hang"))
    async with running(provider) as (_, host):
        session = await host.create_session(AgentConfig(model=MODEL))
        streaming = anyio.Event()
        session.on_change(lambda: None if session.streaming is None else streaming.set())
        session.post("Weather?")
        with anyio.fail_after(10):
            await streaming.wait()
        assert not api.client_closed.is_set()
        session.stop()
        closed = await anyio.to_thread.run_sync(api.client_closed.wait, 10)
    assert closed, "the stand-in saw the connection closed"
    assert session.ended and session.streaming is None
    assert len(api.requests) == 1


@pytest.mark.parametrize("live", [False, True], ids=["plain", "live-display"])
def test_agentos_run_on_a_terminal_prints_the_answer_as_it_streams(
    api: MessagesStandIn, env: dict[str, str], live: bool
) -> None:
    """The stand-in holds the stream after a few words: they are on the terminal while the
    command still runs; then the rest follows, and the answer is printed once. With stderr on
    the terminal too, the words grow in the live display and the answer stays printed."""
    api.script(answer(stop_after=5, then="pause"))  # two deltas: the first ten characters
    model = {"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": api.url}
    controller, terminal = pty.openpty()
    streams: dict[str, Any] = {"stdout": terminal}
    if live:
        streams["stderr"] = terminal
    process = start({**env, **model, "TERM": "xterm", "COLUMNS": "100"}, "run", "hi", **streams)
    os.close(terminal)
    shown = bytearray()
    reader = threading.Thread(target=read_all, args=(controller, shown))
    reader.start()
    try:
        deadline = time.monotonic() + 30
        while ANSWER[:10].encode() not in shown:
            assert time.monotonic() < deadline, shown.decode(errors="replace")
            assert process.poll() is None, shown.decode(errors="replace")
            time.sleep(0.01)  # another process writes to the terminal: nothing to await
        assert process.poll() is None, "the words showed while the reply was still coming"
        assert ANSWER.encode() not in shown
        api.resume.set()
        process.communicate(timeout=30)
    finally:
        api.resume.set()
        process.kill()
        reader.join(timeout=10)
        os.close(controller)
    screen = shown.decode(errors="replace")
    assert process.returncode == 0, screen
    if live:  # the display redraws the growing words; the answer is then printed, a line
        assert f"{ANSWER}\r\n" in screen, screen
    else:
        assert screen.count(ANSWER) == 1, screen


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        pytest.param(
            sse(
                {"type": "message_start", "message": message_body([], None)},
                {"type": "error", "error": "boom"},
            ),
            "server_error",
            id="error-event-without-a-body",
        ),
        pytest.param(
            sse(
                {"type": "message_start", "message": message_body([], None)},
                {
                    "type": "content_block_delta",
                    "index": 3,
                    "delta": {"type": "text_delta", "text": "x"},
                },
            ),
            "malformed_response",
            id="delta-of-no-block",
        ),
    ],
)
async def test_odd_events_become_a_provider_error(
    api: MessagesStandIn, provider: AnthropicProvider, body: bytes, kind: str
) -> None:
    api.always = Reply(200, body, {"content-type": "text/event-stream"})

    with pytest.raises(ProviderError) as caught:
        await provider.stream(HELLO, lambda partial: None)

    assert caught.value.kind == kind


async def test_a_broken_stream_and_the_sdks_retries_share_one_budget(api: MessagesStandIn) -> None:
    """max_retries=2 is three requests in all, however they fail: a broken stream, then
    the SDK retrying a 529 with what is left."""
    api.script(answer(stop_after=4))
    api.always = Reply(529, error_body("overloaded_error", "Overloaded"), {"retry-after-ms": "1"})
    provider = AnthropicProvider(api_key="sk-test", base_url=api.url, max_retries=2)
    try:
        with pytest.raises(ProviderError) as caught:
            await provider.stream(HELLO, lambda partial: None)
    finally:
        await provider.aclose()
    assert caught.value.kind == "overloaded"
    assert len(api.requests) == 3


def test_streamed_words_cannot_drive_the_terminal(
    api: MessagesStandIn, env: dict[str, str]
) -> None:
    """What the model writes reaches a terminal escaped, as it streams too."""
    api.script(answer("Sunny\x1b]0;pwned\x07 and \x1b[2Jwarm."))
    model = {"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": api.url}
    controller, terminal = pty.openpty()
    process = start({**env, **model, "TERM": "xterm"}, "run", "hi", stdout=terminal)
    os.close(terminal)
    shown = bytearray()
    reader = threading.Thread(target=read_all, args=(controller, shown))
    reader.start()
    try:
        process.communicate(timeout=30)
    finally:
        reader.join(timeout=10)
        os.close(controller)
    screen = shown.decode(errors="replace")
    assert process.returncode == 0, screen
    assert "\x1b]0;" not in screen and "\x1b[2J" not in screen, repr(screen)
    assert "pwned" in screen and "warm." in screen
