"""AnthropicProvider: the real SDK client against a loopback stand-in of the Messages API.

The stand-in (``agentos.testing.MessagesStandIn``) serves scripted replies to ``POST
/v1/messages`` on 127.0.0.1, as streams since the provider streams, and records what it
received, so these tests exercise the SDK's own request building, retrying and stream
parsing without touching the network.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agentos import AgentConfig
from agentos import AnthropicProvider
from agentos import ModelPrices
from agentos import ModelRequest
from agentos import ProviderError
from agentos import SessionStatistics
from agentos import tool
from agentos.testing import MessagesStandIn
from agentos.testing import Reply
from agentos.testing import error_body
from agentos.testing import message_body
from agentos.testing import settle
from agentos.turns import Message
from agentos.turns import TranscriptView
from agentos.turns import ViewInput
from tests.support.backends import running

pytestmark = pytest.mark.anyio

MODEL = "claude-test-model"
SONNET = ModelPrices(input=3, output=15, cache_write=3.75, cache_read=0.3)
"""The stand-in's model, priced as Sonnet is."""
JSON = {"content-type": "application/json"}
# The SDK waits as long as `retry-after-ms` (or `retry-after`, in seconds) says, but
# only if it is > 0: "0" falls back to its own backoff of about half a second.
QUICK_RETRY = {**JSON, "retry-after-ms": "1"}


@pytest.fixture(autouse=True)
def _no_proxy_or_ambient_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep every request on loopback and every setting in the test's hands."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)


MakeProvider = Callable[..., AnthropicProvider]


@pytest.fixture
async def make_provider(api: MessagesStandIn) -> AsyncIterator[MakeProvider]:
    """Providers on the stand-in (key "sk-test", no retries unless asked); closed after."""
    made: list[AnthropicProvider] = []

    def make(**options: Any) -> AnthropicProvider:
        options = {"api_key": "sk-test", "base_url": api.url, "max_retries": 0, **options}
        provider = AnthropicProvider(**options)
        made.append(provider)
        return provider

    yield make
    for provider in made:
        await provider.aclose()


USAGE = {"input_tokens": 12, "output_tokens": 5, "cache_read_input_tokens": None}


WEATHER_TOOL = {
    "name": "weather",
    "description": "The weather in a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}
HELLO = ModelRequest(
    model=MODEL,
    system="Be brief.",
    messages=[{"role": "user", "content": "Say hello."}],
    tools=[WEATHER_TOOL],
    max_tokens=64,
)


async def test_text_reply_and_the_request_as_sent(
    api: MessagesStandIn, make_provider: MakeProvider
) -> None:
    hello = message_body([{"type": "text", "text": "Hello!", "citations": None}], usage=USAGE)
    api.script(Reply(200, hello))

    response = await make_provider().complete(HELLO)

    assert response.content == [{"type": "text", "text": "Hello!"}]
    assert response.text == "Hello!"
    assert response.stop_reason == "end_turn"
    assert dict(response.usage) == {"input_tokens": 12, "output_tokens": 5}  # null left out
    [seen] = api.requests
    assert (seen.method, seen.path) == ("POST", "/v1/messages")
    assert seen.headers["x-api-key"] == "sk-test"
    assert "authorization" not in seen.headers  # not also as a bearer token
    assert "anthropic-version" in seen.headers
    assert seen.body == {
        "model": MODEL,
        "max_tokens": 64,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "Say hello."}],
        "tools": [WEATHER_TOOL],
        "stream": True,  # the provider streams; the stand-in answered with events
    }


async def test_the_prompt_cache_counts_are_kept(
    api: MessagesStandIn, make_provider: MakeProvider
) -> None:
    cached = {**USAGE, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 0}
    api.script(Reply(200, message_body([{"type": "text", "text": "Hi"}], usage=cached)))
    response = await make_provider().complete(HELLO)
    assert dict(response.usage) == cached


async def test_tool_use_blocks_become_plain_dicts(
    api: MessagesStandIn, make_provider: MakeProvider
) -> None:
    thinking = {"type": "thinking", "thinking": "The user wants weather.", "signature": "sig"}
    use = {
        "type": "tool_use",
        "id": "toolu_01",
        "name": "weather",
        "input": {"city": "Paris", "units": None},
    }
    api.script(
        Reply(
            200,
            message_body(
                [
                    thinking,
                    {"type": "text", "text": "Checking."},
                    {**use, "caller": {"type": "direct"}},
                    {"type": "block_from_the_future", "detail": 1},
                ],
                stop_reason="tool_use",
            ),
        )
    )
    request = ModelRequest(model=MODEL, system="", messages=[{"role": "user", "content": "?"}])

    response = await make_provider().complete(request)

    assert response.content == [
        thinking,
        {"type": "text", "text": "Checking."},
        use,  # None inside the input is the model's, and kept; `caller` is dropped.
        {"type": "block_from_the_future", "detail": 1},
    ]
    assert response.stop_reason == "tool_use"
    assert [t["id"] for t in response.tool_uses] == ["toolu_01"]
    # An empty system prompt and no tools are left out of the request.
    [seen] = api.requests
    assert "system" not in seen.body and "tools" not in seen.body


async def test_rate_limit_then_success_is_retried_by_the_sdk(
    api: MessagesStandIn, make_provider: MakeProvider
) -> None:
    api.script(
        Reply(429, error_body("rate_limit_error", "slow down"), QUICK_RETRY),
        Reply(200, message_body([{"type": "text", "text": "ok"}])),
    )

    response = await make_provider(max_retries=2).complete(HELLO)

    assert response.text == "ok"
    assert [s.headers["x-stainless-retry-count"] for s in api.requests] == ["0", "1"]


OVERLOADED = error_body("overloaded_error", "Overloaded")


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (500, error_body("api_error", "Internal server error"), "server_error"),
        (529, OVERLOADED, "overloaded"),
        (
            429,
            error_body("rate_limit_error", "Number of requests has exceeded your rate limit"),
            "rate_limited",
        ),
    ],
)
async def test_failing_every_time_gives_up_after_the_sdk_retries(
    api: MessagesStandIn, make_provider: MakeProvider, status: int, body: dict[str, Any], kind: str
) -> None:
    api.always = Reply(status, body, QUICK_RETRY)

    with pytest.raises(ProviderError) as caught:
        await make_provider(max_retries=2).complete(HELLO)

    error = caught.value
    assert (error.kind, error.status) == (kind, status)
    assert len(api.requests) == 3  # max_retries + 1, and not one more
    assert f"HTTP {status}, 3 attempts" in error.message
    assert body["error"]["message"] in error.message
    assert "\n" not in error.message


async def test_rejected_key_is_not_retried(
    api: MessagesStandIn, make_provider: MakeProvider
) -> None:
    api.always = Reply(401, error_body("authentication_error", "invalid x-api-key"), QUICK_RETRY)

    with pytest.raises(ProviderError) as caught:
        await make_provider(max_retries=3).complete(HELLO)

    assert (caught.value.kind, caught.value.status) == ("rejected_key", 401)
    assert "the API key was rejected" in caught.value.message
    assert "ANTHROPIC_API_KEY" in caught.value.message
    assert len(api.requests) == 1


@pytest.mark.parametrize(
    ("status", "kind_in_body", "message"),
    [
        (400, "invalid_request_error", "max_tokens: 999999 > 64000, which is the maximum"),
        (404, "not_found_error", "model: claude-test-model"),
        (422, "invalid_request_error", "messages.0.role: Input should be 'user'"),
    ],
)
async def test_bad_request_carries_the_api_message(
    api: MessagesStandIn, make_provider: MakeProvider, status: int, kind_in_body: str, message: str
) -> None:
    api.always = Reply(status, error_body(kind_in_body, message))

    with pytest.raises(ProviderError) as caught:
        await make_provider(max_retries=3).complete(HELLO)

    assert (caught.value.kind, caught.value.status) == ("bad_request", status)
    assert message in caught.value.message
    assert len(api.requests) == 1


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(Reply(200, b"this is not json"), id="json-content-type-but-not-json"),
        pytest.param(Reply(200, b""), id="empty-body"),
        pytest.param(Reply(200, b"<html>gateway</html>", {"content-type": "text/html"}), id="html"),
        pytest.param(Reply(200, [1, 2]), id="json-array"),
        pytest.param(Reply(200, {"id": "msg_01", "type": "message"}), id="missing-fields"),
        pytest.param(Reply(200, {**message_body([]), "content": "Hello"}), id="content-is-text"),
        pytest.param(Reply(200, message_body([1])), id="block-is-a-number"),
        pytest.param(Reply(200, message_body([{"type": "text"}])), id="text-without-text"),
        pytest.param(
            Reply(200, message_body([{"type": "tool_use", "name": "weather"}])),
            id="tool-use-without-id",
        ),
        pytest.param(Reply(200, {**message_body([]), "stop_reason": None}), id="no-stop-reason"),
    ],
)
async def test_malformed_success_body(
    api: MessagesStandIn, make_provider: MakeProvider, reply: Reply
) -> None:
    api.script(reply)

    with pytest.raises(ProviderError) as caught:
        await make_provider(max_retries=3).complete(HELLO)

    assert caught.value.kind == "malformed_response"
    assert "\n" not in caught.value.message
    assert len(api.requests) == 1


def test_missing_key_fails_at_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)

    with pytest.raises(ProviderError) as caught:
        AnthropicProvider()

    assert caught.value.kind == "missing_key"
    assert "set ANTHROPIC_API_KEY" in caught.value.message
    assert "\n" not in caught.value.message


async def test_key_and_base_url_from_the_environment(
    api: MessagesStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    api.script(Reply(200, message_body([{"type": "text", "text": "hi"}])))
    provider = AnthropicProvider(max_retries=0)
    try:
        assert (await provider.complete(HELLO)).text == "hi"
    finally:
        await provider.aclose()
    assert api.requests[0].headers["x-api-key"] == "sk-from-env"


async def test_connection_refused(make_provider: MakeProvider) -> None:
    with socket.socket() as probe:  # a loopback port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    # max_retries=0: the SDK retries connection errors too, with ~0.5 s backoff.
    provider = make_provider(base_url=f"http://127.0.0.1:{closed_port}")

    with pytest.raises(ProviderError) as caught:
        await provider.complete(HELLO)

    assert caught.value.kind == "connection"
    assert caught.value.status is None
    assert f"127.0.0.1:{closed_port}" in caught.value.message


async def test_timeout_is_a_connection_error(
    api: MessagesStandIn, make_provider: MakeProvider
) -> None:
    api.script(Reply(200, message_body([{"type": "text", "text": "late"}]), delay=0.3))

    with pytest.raises(ProviderError) as caught:
        await make_provider(timeout=0.05).complete(HELLO)

    assert caught.value.kind == "connection"
    assert "timed out" in caught.value.message


class CityInput(BaseModel):
    city: str


@tool
async def weather(args: CityInput) -> dict[str, str]:
    """The weather in a city."""
    return {"city": args.city, "sky": "clear"}


async def test_a_session_talks_to_the_stand_in_through_the_sdk(
    api: MessagesStandIn, make_provider: MakeProvider
) -> None:
    api.script(
        Reply(
            200,
            message_body(
                [
                    {
                        "type": "tool_use",
                        "id": "toolu_w1",
                        "name": "weather",
                        "input": {"city": "Oslo"},
                    }
                ],
                stop_reason="tool_use",
            ),
        ),
        Reply(200, message_body([{"type": "text", "text": "Clear in Oslo."}])),
    )
    async with running(make_provider(), weather) as (_, host):
        session = await host.create_session(AgentConfig(model=MODEL))
        session.post("Weather in Oslo?")
        with anyio.fail_after(5):
            await session.wait_idle()
    assert session.replies == ["", "Clear in Oslo."]
    assert session.errors == []
    first, second = (seen.body for seen in api.requests)
    assert [tool["name"] for tool in first["tools"]][:1] == ["weather"]
    assert second["messages"][-1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_w1",
                "content": '{"city": "Oslo", "sky": "clear"}',
            }
        ],
    }


class CacheTheConversation:
    """A context view that puts a prompt-cache breakpoint on the last block it sends."""

    def build(self, view_input: ViewInput) -> list[Message]:
        messages = TranscriptView().build(view_input)
        last = messages[-1]
        blocks = [dict(block) for block in last["content"]]
        blocks[-1]["cache_control"] = {"type": "ephemeral"}
        return [*messages[:-1], {**last, "content": blocks}]


async def test_a_cache_breakpoint_is_sent_as_given_and_cache_usage_is_counted(
    api: MessagesStandIn, make_provider: MakeProvider
) -> None:
    """Issue 12 (the board's cache points): a block's ``cache_control`` reaches the API as
    it is, and the cache reads and writes the API reports add up in the session's statistics."""
    tool_use = {"type": "tool_use", "id": "toolu_w1", "name": "weather", "input": {"city": "Oslo"}}
    api.script(
        Reply(
            200,
            message_body(
                [tool_use],
                stop_reason="tool_use",
                usage={"input_tokens": 30, "output_tokens": 7, "cache_creation_input_tokens": 25},
            ),
        ),
        Reply(
            200,
            message_body(
                [{"type": "text", "text": "Clear in Oslo."}],
                usage={
                    "input_tokens": 8,
                    "output_tokens": 4,
                    "cache_read_input_tokens": 25,
                    "cache_creation_input_tokens": None,
                },
            ),
        ),
    )
    view = CacheTheConversation()
    async with running(make_provider(), weather, view=view) as (_, host):
        session = await host.create_session(AgentConfig(model=MODEL, prices=SONNET))
        session.post("Weather in Oslo?")
        with anyio.fail_after(5):
            await session.wait_idle()
    assert session.errors == []
    first, second = (seen.body for seen in api.requests)
    assert first["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Weather in Oslo?", "cache_control": {"type": "ephemeral"}}
            ],
        }
    ]
    assert second["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert first["system"] == session.config.system_prompt, "a transcript's system: as given"
    assert "cache_control" not in session.history[0]["content"][0], "the history is not marked"
    spent = session.statistics()
    assert spent == SessionStatistics(
        requests=2,
        input_tokens=38,
        output_tokens=11,
        cache_read_input_tokens=25,
        cache_creation_input_tokens=25,
        cost_usd=spent.cost_usd,
    )
    assert spent.cost_usd == pytest.approx((38 * 3 + 11 * 15 + 25 * 3.75 + 25 * 0.3) / 1e6)
    assert spent.cache_hit_ratio == pytest.approx(25 / (38 + 25 + 25))


async def test_a_rejected_key_ends_the_turn_with_a_recorded_error(
    api: MessagesStandIn, make_provider: MakeProvider
) -> None:
    api.always = Reply(401, error_body("authentication_error", "invalid x-api-key"))
    async with running(make_provider()) as (_, host):
        session = await host.create_session(AgentConfig(model=MODEL))
        session.post("hello")
        with anyio.fail_after(5):
            await session.wait_idle()
    assert len(session.errors) == 1
    assert session.errors[0].startswith("rejected_key:")
    assert session.statistics() == SessionStatistics(requests=1), "a failed request counts"
    assert session.history == [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]


def test_the_command_line_asks_the_stand_in_and_says_where(
    api: MessagesStandIn, tmp_path: Path
) -> None:
    """Issue 11: `agentos run` names the endpoint it talks to, and asks it through the SDK."""
    api.always = Reply(200, message_body([{"type": "text", "text": "Hi from the stand-in."}]))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTOS_"))},
        "ANTHROPIC_API_KEY": "sk-test",
        "ANTHROPIC_BASE_URL": api.url,
        "AGENTOS_DB": str(tmp_path / "agentos.db"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "agentos.cli", "run", "hello"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == f"model: Anthropic API at {api.url} (ANTHROPIC_BASE_URL)"
    assert json.loads(done.stdout)["messages"] == ["Hi from the stand-in."]
    (seen,) = api.requests
    assert seen.body["messages"][0]["content"][0]["text"] == "hello"


NODE_LINE = re.compile(r"^ *(?:ok|\.\.) #\d+ ", re.MULTILINE)


async def test_a_board_session_talks_to_the_stand_in_through_the_sdk(
    api: MessagesStandIn, make_provider: MakeProvider
) -> None:
    """Issue 12: a board session's every request is the board, one user message of text
    blocks (no tool blocks), the notation in the system prompt (a cache breakpoint, as the
    board may have no stable prefix to mark) and ``new_thread`` offered;
    the model's tool_use still runs the tool, and its last word reaches the person's chat."""
    tool_use = {"type": "tool_use", "id": "toolu_w1", "name": "weather", "input": {"city": "Oslo"}}
    api.script(
        Reply(200, message_body([tool_use], stop_reason="tool_use")),
        Reply(200, message_body([{"type": "text", "text": "Clear in Oslo."}])),
    )
    config = AgentConfig(model=MODEL, context_view="board")
    async with running(make_provider(), weather) as (runtime, host):
        session = await host.create_session(config)
        session.post("Weather in Oslo?")
        with anyio.fail_after(5):
            while len(api.requests) < 2 or not session.idle:  # the result wakes the node
                await settle(runtime)
                await session.wait_idle()
                await anyio.lowlevel.checkpoint()
    assert session.errors == []
    bodies = [seen.body for seen in api.requests]
    assert len(bodies) == 2
    for body in bodies:
        (message,) = body["messages"]
        assert message["role"] == "user"
        assert {block["type"] for block in message["content"]} == {"text"}, message
        nodes = [block["text"] for block in message["content"]]
        assert all(len(NODE_LINE.findall(n)) == 1 or n.startswith(">>") for n in nodes), nodes
        marks = sum("cache_control" in block for block in message["content"])
        assert marks + 1 <= 4, "a block per node; the API takes four breakpoints at most"
        (system,) = body["system"]  # marked, so tools and system are cached on every step
        assert system["cache_control"] == {"type": "ephemeral"}
        assert "message board" in system["text"]
        assert {"weather", "new_thread"} <= {tool["name"] for tool in body["tools"]}
    second = "".join(block["text"] for block in bodies[1]["messages"][0]["content"])
    assert 'weather(city="Oslo") completed' in second, "the outcome is on the board"
    assert "tool_use" not in second and "tool_result" not in second
    assert [(entry.role, entry.text) for entry in session.chat][-1] == ("agent", "Clear in Oslo.")
