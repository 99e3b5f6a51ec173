"""OpenTelemetry spans (issue 28, part 3), read back from the SDK's in-memory exporter.

A turn is ``invoke_agent``, each model request ``chat`` under it with its usage, each
call ``execute_tool`` with its progress as events: under the turn when the turn waits
for it, else in a trace of its own linked to the turn. A cancelled call says
``error.type``; after a restart, a call found lost is ``orphaned`` and links to the
earlier trace, as does the first turn. An MCP call carries its span's context in
``_meta``. Nothing is imported or reported unless tracing is configured.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from collections.abc import Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentos import AgentConfig
from agentos import Host
from agentos import ModelResponse
from agentos import ScriptedProvider
from agentos import SqliteStore
from agentos import ToolPolicy
from agentos import YieldOnTimeout
from agentos.testing import HeldProvider
from agentos.testing import Puppet
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from tests.support.skips import cannot_run

try:
    import opentelemetry.sdk  # noqa: F401
except ImportError:
    REASON = "the tracing tests need opentelemetry-sdk: pip install -e '.[test,otel]' (make test)"
    cannot_run("the tracing tests", REASON, module=True)

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from tests.support import ROOT
from tests.support.backends import running
from tests.support.backends import running_agent
from tests.support.mcp_stdio import TOOLS_SERVER

pytestmark = pytest.mark.anyio

USAGE = {"input_tokens": 30, "output_tokens": 7, "cache_read_input_tokens": 20}
BACKGROUND = AgentConfig(name="helper", async_yield_strategy=YieldOnTimeout(milliseconds=20))
WAITING = BACKGROUND.model_copy(update={"policy": ToolPolicy(rules={"puppet": "run_sync"})})


def model() -> ScriptedProvider:
    """``go`` starts a puppet call; its outcome, or anything else, gets a text."""
    return ScriptedProvider(
        (
            lambda r: last_user_text(r) == "go",
            lambda r: ModelResponse(
                tool_calls(("puppet", {"label": "p"})).content, "tool_use", USAGE
            ),
        ),
        (lambda r: bool(last_tool_results(r)), lambda r: text("got it")),
        (lambda r: True, lambda r: text("ok")),
    )


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


def provider_for(exporter: InMemorySpanExporter) -> TracerProvider:
    traced = TracerProvider()
    traced.add_span_processor(SimpleSpanProcessor(exporter))
    return traced


@asynccontextmanager
async def traced_host(
    exporter: InMemorySpanExporter, puppet: Puppet, **host: Any
) -> AsyncIterator[Host]:
    tracing = provider_for(exporter)
    async with running(model(), puppet.tool, tracer_provider=tracing, **host) as (_, opened):
        yield opened


def named(spans: Sequence[ReadableSpan], prefix: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name.startswith(prefix)]


async def started(host: Host, puppet: Puppet) -> str:
    with anyio.fail_after(10):
        while not puppet.calls or not all(puppet.started(c) for c in puppet.calls):
            await settle(host.runtime)
            await anyio.lowlevel.checkpoint()
    return next(iter(puppet.calls))


async def test_a_turn_its_requests_and_a_call_that_outlives_it(
    exporter: InMemorySpanExporter,
) -> None:
    puppet = Puppet()
    async with traced_host(exporter, puppet) as host:
        session = await host.create_session(BACKGROUND, session_id="s1")
        session.post("go")
        call_id = await started(host, puppet)
        with anyio.fail_after(10):
            await session.wait_idle()  # the turn yielded: the call goes on
        puppet.progress(call_id, {"percent": 40})
        puppet.complete(call_id, "done")
        with anyio.fail_after(10):
            await session.wait_settled()
    spans = exporter.get_finished_spans()
    first, second = named(spans, "invoke_agent helper")
    assert first.attributes is not None and first.attributes["gen_ai.conversation.id"] == "s1"
    assert first.attributes["gen_ai.operation.name"] == "invoke_agent"
    chats = named(spans, "chat claude-sonnet-4-5")
    assert [chat.parent.span_id for chat in chats if chat.parent] == [
        first.context.span_id,  # the calls
        first.context.span_id,  # the answer, with the call's placeholder
        second.context.span_id,  # the late outcome's turn
    ]
    usage = dict(chats[0].attributes or {})
    assert (usage["gen_ai.usage.input_tokens"], usage["gen_ai.usage.output_tokens"]) == (30, 7)
    assert usage["gen_ai.usage.cache_read.input_tokens"] == 20
    (tool,) = named(spans, "execute_tool puppet")
    assert tool.parent is None, "not the child of a turn that ended before it"
    assert [link.context.span_id for link in tool.links] == [first.context.span_id]
    assert tool.end_time is not None and first.end_time is not None
    assert tool.end_time > first.end_time
    attributes = dict(tool.attributes or {})
    assert attributes["agentos.call.id"] == call_id
    history_ids = [b["id"] for m in session.history for b in m["content"] if "id" in b]
    assert attributes["gen_ai.tool.call.id"] in history_ids
    assert [event.name for event in tool.events] == ["progress"]
    assert tool.status.status_code is StatusCode.UNSET


async def test_a_request_cut_by_the_host_closing_still_ends_its_span(
    exporter: InMemorySpanExporter,
) -> None:
    """The session's task is cancelled while the model thinks: the ``chat`` span ends."""
    held = HeldProvider(model(), lambda request: True)
    async with running(held, tracer_provider=provider_for(exporter)) as (_, host):
        session = await host.create_session(AgentConfig())
        session.post("hello")
        with anyio.fail_after(10):
            await held.asked.wait()
    (chat,) = named(exporter.get_finished_spans(), "chat ")
    assert chat.status.status_code is StatusCode.ERROR
    assert chat.attributes is not None and chat.attributes["error.type"] == "cancelled"


async def test_a_call_the_turn_waits_for_is_its_child(exporter: InMemorySpanExporter) -> None:
    puppet = Puppet()
    async with traced_host(exporter, puppet) as host:
        session = await host.create_session(WAITING)
        session.post("go")
        puppet.complete(await started(host, puppet), "done")
        with anyio.fail_after(10):
            await session.wait_idle()
    spans = exporter.get_finished_spans()
    (turn,) = named(spans, "invoke_agent")
    (tool,) = named(spans, "execute_tool")
    assert tool.parent is not None and tool.parent.span_id == turn.context.span_id
    assert tool.links == ()


async def test_a_cancelled_call_and_a_failed_request_say_their_error_type(
    exporter: InMemorySpanExporter,
) -> None:
    puppet = Puppet()
    async with traced_host(exporter, puppet) as host:
        session = await host.create_session(BACKGROUND)
        session.post("go")
        call_id = await started(host, puppet)
        host.runtime.cancel(call_id, "enough")
        with anyio.fail_after(10):
            await session.wait_settled()
    (tool,) = named(exporter.get_finished_spans(), "execute_tool")
    assert tool.attributes is not None and tool.attributes["error.type"] == "cancelled"
    assert tool.status.status_code is StatusCode.ERROR


async def test_after_a_restart_a_lost_call_is_orphaned_and_links_to_the_earlier_trace(
    exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    puppet = Puppet()
    async with await SqliteStore.open(tmp_path / "agentos.db") as store:
        async with traced_host(exporter, puppet, store=store) as host:
            session = await host.create_session(BACKGROUND, session_id="s1")
            session.post("go")
            await started(host, puppet)
            with anyio.fail_after(10):
                await session.wait_idle()
        (before,) = named(exporter.get_finished_spans(), "invoke_agent")
        exporter.clear()
        async with traced_host(exporter, Puppet(), store=store) as host:
            resumed = await host.resume("s1", config=BACKGROUND)
            await host.catch_up("s1", "(resumed)")
            with anyio.fail_after(10):
                await resumed.wait_idle()
    spans = exporter.get_finished_spans()
    (lost,) = named(spans, "execute_tool puppet")
    assert lost.attributes is not None and lost.attributes["error.type"] == "orphaned"
    earlier = (before.context.trace_id, before.context.span_id)
    assert [(link.context.trace_id, link.context.span_id) for link in lost.links] == [earlier]
    first_turn = named(spans, "invoke_agent")[0]
    assert [(link.context.trace_id, link.context.span_id) for link in first_turn.links] == [earlier]


async def test_an_mcp_call_carries_its_spans_context_to_the_server(
    exporter: InMemorySpanExporter,
) -> None:
    waits = ToolPolicy(rules={"trace_context": "run_sync"})
    config = AgentConfig(name="files", mcp_servers={"files": TOOLS_SERVER}, policy=waits)
    provider = ScriptedProvider(
        (lambda r: last_user_text(r) == "go", lambda r: tool_calls(("trace_context", {}))),
        (lambda r: True, lambda r: text("done")),
    )
    with anyio.fail_after(60):
        tracing = provider_for(exporter)
        async with running_agent(config, provider, tracer_provider=tracing) as (runtime, host):
            session = await host.create_session(config)
            session.post("go")
            await session.wait_idle()
            (call,) = runtime.list_calls(session.session_id)
            heard = call.result
    (tool,) = named(exporter.get_finished_spans(), "execute_tool trace_context")
    context = tool.context
    flags = int(context.trace_flags)
    assert heard == {"result": f"00-{context.trace_id:032x}-{context.span_id:016x}-{flags:02x}"}


def run_offline(program: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


SESSION = """
import anyio, sys
from agentos import Host, Runtime, ScriptedProvider
from agentos.testing import text
{setup}
async def main():
    model = ScriptedProvider((lambda r: True, lambda r: text("hi")))
    async with Runtime([]) as runtime, Host(runtime, model) as host:
        session = await host.create_session()
        session.post("hello")
        await session.wait_idle()
    {check}
anyio.run(main)
"""


def test_nothing_is_imported_or_reported_unless_tracing_is_configured() -> None:
    quiet = SESSION.format(setup="", check='print("opentelemetry" in " ".join(sys.modules))')
    done = run_offline(quiet)
    assert (done.returncode, done.stdout.strip()) == (0, "False"), done.stderr
    setup = (
        "from opentelemetry import trace\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from opentelemetry.sdk.trace.export import SimpleSpanProcessor\n"
        "from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter\n"
        "exporter = InMemorySpanExporter()\n"
        "provider = TracerProvider()\n"
        "provider.add_span_processor(SimpleSpanProcessor(exporter))\n"
        "trace.set_tracer_provider(provider)\n"
    )
    check = "print(sorted(span.name for span in exporter.get_finished_spans()))"
    done = run_offline(SESSION.format(setup=setup, check=check))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['chat claude-sonnet-4-5', 'invoke_agent agent']"


def test_the_anthropic_sdks_own_span_nests_under_the_chat_span() -> None:
    """With a global provider the ``anthropic`` SDK reports its API call's span itself;
    it is the child of agentos's ``chat`` span, not a second root."""
    setup = (
        "from opentelemetry import trace\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from opentelemetry.sdk.trace.export import SimpleSpanProcessor\n"
        "from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter\n"
        "from agentos import AgentConfig, AnthropicProvider\n"
        "from agentos.testing import MessagesStandIn, Reply, message_body\n"
        "exporter = InMemorySpanExporter()\n"
        "provider = TracerProvider()\n"
        "provider.add_span_processor(SimpleSpanProcessor(exporter))\n"
        "trace.set_tracer_provider(provider)\n"
    )
    program = f"""
import anyio
{setup}
from agentos import Host, Runtime

async def main():
    with MessagesStandIn() as api:
        api.script(Reply(200, message_body([{{"type": "text", "text": "hi"}}])))
        model = AnthropicProvider(api_key="sk-test", base_url=api.url, max_retries=0)
        async with Runtime([]) as runtime, Host(runtime, model) as host:
            session = await host.create_session(AgentConfig(model="claude-test-model"))
            session.post("hello")
            await session.wait_idle()
        await model.aclose()
    spans = {{span.name: span for span in exporter.get_finished_spans()}}
    sdk, chat = spans["anthropic.messages.create"], spans["chat claude-test-model"]
    print(sdk.parent is not None and sdk.parent.span_id == chat.context.span_id)

anyio.run(main)
"""
    done = run_offline(program)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
