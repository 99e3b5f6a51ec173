"""What OpenTelemetry tracing costs a turn (issue 28, part 3).

A 1-call turn (a message, a zero-latency scripted model asking for one tool that returns
at once, the model's answer) on a host with tracing off, and on a host reporting to a
``TracerProvider`` with a ``BatchSpanProcessor`` whose exporter drops the spans (as an
application's would send them, off the loop); the two alternate in rounds of 200 turns,
7 rounds each. ``otel.turn_us`` and ``otel.traced_turn_us`` are the medians of the
rounds' per-turn times; ``otel.turn_overhead_ratio`` is traced over untraced. Each
traced turn makes four spans (``invoke_agent``, two ``chat``, ``execute_tool``).
``otel.noop_tracer_ratio`` is the same turn reporting to OpenTelemetry's no-op tracer:
what agentos itself adds, apart from what the SDK's spans cost
(``otel.sdk_span_us``: one span started and ended with three attributes, in a loop).

``otel.sdk_turn_spans_us`` is the SDK alone making a 1-call turn's four spans, with their
attributes, parents and the request's current context, in a loop with nothing else
running: the floor no runtime making these spans goes below. ``otel.floor_ratio`` is the
ratio a turn would have if tracing cost only that; ``otel.overhead_vs_sdk_floor`` is
what tracing adds to the turn over that floor (1.0: nothing beyond the SDK's own work).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence

from benchmarks._common import Figures
from benchmarks._common import run_measure
from benchmarks._common import turn_us

ROUNDS = 7
TURNS = 200


async def per_turn_us(tracer_provider: object | None) -> float:
    return await turn_us(TURNS, tracer_provider=tracer_provider)


def traced() -> object:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    class Dropped(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropped()))
    return provider


class NoOp:
    """A tracer provider whose spans do nothing: what agentos does around them."""

    def get_tracer(self, name: str) -> object:
        from opentelemetry.trace import NoOpTracer

        return NoOpTracer()


def sdk_span_us(provider: object) -> float:
    tracer = provider.get_tracer("bench")  # type: ignore[attr-defined]
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "x", "k": 1}
    started = time.perf_counter()
    for _ in range(10_000):
        tracer.start_span("chat m", attributes=attributes).end()
    return (time.perf_counter() - started) / 10_000 * 1e6


def sdk_turn_spans_us(provider: object) -> float:
    """The SDK making a 1-call turn's spans as a session does (``_sessions/spans.py``)."""
    from opentelemetry import context
    from opentelemetry import trace

    tracer = provider.get_tracer("bench")  # type: ignore[attr-defined]
    usage = {
        "gen_ai.usage.input_tokens": 1,
        "gen_ai.usage.output_tokens": 2,
        "gen_ai.usage.cache_read.input_tokens": 0,
        "gen_ai.usage.cache_creation.input_tokens": 0,
    }

    def chat(parent: object) -> None:
        span = tracer.start_span(
            "chat m",
            context=parent,
            kind=trace.SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "scripted",
                "gen_ai.request.model": "m",
            },
        )
        context.detach(context.attach(trace.set_span_in_context(span)))
        span.set_attributes(usage)
        span.end()

    def one_turn() -> None:
        turn = tracer.start_span(
            "invoke_agent agent",
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "agent",
                "gen_ai.conversation.id": "s" * 36,
            },
            links=[],
        )
        parent = trace.set_span_in_context(turn)
        chat(parent)
        call = tracer.start_span(
            "execute_tool noop",
            context=parent,
            links=[],
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "noop",
                "gen_ai.tool.call.id": "toolu_1",
            },
        )
        call.set_attribute("agentos.call.id", "c" * 36)
        call.end()
        chat(parent)
        turn.end()

    started = time.perf_counter()
    for _ in range(5_000):
        one_turn()
    return (time.perf_counter() - started) / 5_000 * 1e6


async def measure() -> Figures:
    try:
        provider = traced()
    except ImportError:
        return {"otel.skipped": "opentelemetry-sdk is not installed: pip install 'agentos[otel]'"}
    plain: list[float] = []
    with_spans: list[float] = []
    no_op: list[float] = []
    for _ in range(ROUNDS):
        plain.append(await per_turn_us(None))
        with_spans.append(await per_turn_us(provider))
        no_op.append(await per_turn_us(NoOp()))
    off, on = statistics.median(plain), statistics.median(with_spans)
    floor = sdk_turn_spans_us(provider)
    return {
        "otel.turn_us": round(off, 1),
        "otel.traced_turn_us": round(on, 1),
        "otel.turn_overhead_ratio": round(on / off, 3),
        "otel.noop_tracer_ratio": round(statistics.median(no_op) / off, 3),
        "otel.sdk_span_us": round(sdk_span_us(provider), 1),
        "otel.sdk_turn_spans_us": round(floor, 1),
        "otel.floor_ratio": round((off + floor) / off, 3),
        "otel.overhead_vs_sdk_floor": round((on - off) / floor, 2),
    }


if __name__ == "__main__":
    run_measure(measure)
