"""OpenTelemetry, only when the application asks for it (``agentos[otel]``).

agentos imports ``opentelemetry`` only if the application already has (``sys.modules``),
and reports spans only to a tracer provider it configured: the one given to
``Host(tracer_provider=...)``, else the global one once ``trace.set_tracer_provider``
has set it. Without either, tracing costs a dictionary lookup per session. Span and
attribute names follow the OpenTelemetry GenAI semantic conventions. The library never
sets a provider up; the command line is an application that does, when the standard
``OTEL_`` variables ask (``agentos/_ui/cli/tracing_setup.py``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING
from typing import Any

if TYPE_CHECKING:
    from opentelemetry.trace import Span
    from opentelemetry.trace import SpanContext
    from opentelemetry.trace import Tracer

INSTRUMENTATION = "agentos"


def configured_tracer(provider: object | None = None) -> Tracer | None:
    """The tracer to report to, or None: ``provider``'s, else the global provider's if the
    application set one (the default proxy and no-op providers mean: not configured)."""
    trace = sys.modules.get("opentelemetry.trace")
    if provider is None:
        if trace is None:
            return None
        provider = trace.get_tracer_provider()
        if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
            return None
    get_tracer = getattr(provider, "get_tracer", None)
    if get_tracer is None:
        raise TypeError(
            f"tracer_provider must be an OpenTelemetry TracerProvider, got {provider!r}"
        )
    tracer: Tracer = get_tracer(INSTRUMENTATION)
    return tracer


def traceparent(span: Span) -> str:
    """The span's context as a W3C ``traceparent`` header value."""
    context = span.get_span_context()
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"


def remote_context(trace_id: int, span_id: int) -> SpanContext | None:
    """A span of an earlier process (its ids, as ``traceparent`` or the store kept them),
    to link to; None if the ids are not valid."""
    from opentelemetry.trace import SpanContext
    from opentelemetry.trace import TraceFlags

    context = SpanContext(trace_id, span_id, is_remote=True, trace_flags=TraceFlags(1))
    return context if context.is_valid else None


def error_attributes(kind: str) -> dict[str, Any]:
    """``error.type`` as the conventions name it."""
    return {"error.type": kind}
