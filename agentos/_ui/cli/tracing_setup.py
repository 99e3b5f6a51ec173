"""Traces from the command line, when the standard OpenTelemetry variables ask for them.

The commands that run sessions set a tracer provider up from ``OTEL_TRACES_EXPORTER``
(``otlp``, ``console``, ``none``, or an installed exporter's name; a comma list) and the
OTLP endpoint variables (an endpoint alone means ``otlp``), and only then: without them
nothing of OpenTelemetry is imported. The library never configures a provider itself; it
reports to the global one, which this sets. Tracing never stops a command: what keeps it
from being set up (the extra not installed, an unknown exporter) is one line on stderr,
and the command runs on untraced.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from importlib.metadata import entry_points
from typing import IO, TYPE_CHECKING, Any, cast

import click

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

INSTALL = "pip install 'agentos[otel]'"
SERVICE_NAME = "agentos"
"""``service.name`` unless ``OTEL_SERVICE_NAME`` (or ``OTEL_RESOURCE_ATTRIBUTES``) names one."""
ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
GRPC = "opentelemetry-exporter-otlp-proto-grpc"


def traced(command: click.Command) -> None:
    """Make ``command`` trace its sessions when the environment asks, flushing what it
    traced when it ends, however it ends (Ctrl-C too)."""
    callback = command.callback
    assert callback is not None

    @functools.wraps(callback)
    def with_traces(*args: Any, **kwargs: Any) -> Any:
        with traces_from_environment(os.environ, _warn):
            return callback(*args, **kwargs)

    command.callback = with_traces


@contextmanager
def traces_from_environment(
    environ: Mapping[str, str], warn: Callable[[str], None]
) -> Iterator[None]:
    """The global tracer provider the variables ask for, for the block; shut down (its
    spans exported) when the block ends. Nothing when they do not ask."""
    names = exporters_asked(environ)
    provider = _provider(names, environ, warn) if names else None
    try:
        yield
    finally:
        if provider is not None:
            provider.shutdown()


def exporters_asked(environ: Mapping[str, str]) -> list[str]:
    """The trace exporters the environment names: ``OTEL_TRACES_EXPORTER``'s list (without
    ``none``), else ``otlp`` if an OTLP endpoint is set; none if ``OTEL_SDK_DISABLED``."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    listed = environ.get("OTEL_TRACES_EXPORTER", "").lower().split(",")
    names = [name.strip() for name in listed if name.strip()]
    if not names:
        return ["otlp"] if any(environ.get(name, "").strip() for name in ENDPOINTS) else []
    return [name for name in dict.fromkeys(names) if name != "none"]


def _provider(
    names: list[str], environ: Mapping[str, str], warn: Callable[[str], None]
) -> TracerProvider | None:
    asked = _who_asked(environ)
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        warn(
            f"no traces: {asked} asks for them, but the OpenTelemetry SDK is not "
            f"installed ({INSTALL})"
        )
        return None
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return None  # one is set already (opentelemetry-instrument, say): agentos uses it
    exporters = [exporter for name in names if (exporter := _exporter(name, environ, warn))]
    if not exporters:
        return None
    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": SERVICE_NAME}))
    provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return provider


def _exporter(
    name: str, environ: Mapping[str, str], warn: Callable[[str], None]
) -> SpanExporter | None:
    """The exporter ``name`` means, or None after saying why there is none."""
    try:
        if name == "console":
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter

            # stderr: stdout carries the command's own output (JSON, the MCP protocol).
            return ConsoleSpanExporter(out=cast(IO[str], _CurrentStderr()))
        if name == "otlp":
            return _otlp(environ, warn)
        found = next(iter(entry_points(group="opentelemetry_traces_exporter", name=name)), None)
        if found is None:
            warn(
                f"no {name!r} traces: OTEL_TRACES_EXPORTER takes otlp, console, none "
                "or the name of an installed exporter"
            )
            return None
        exporter: SpanExporter = found.load()()
        return exporter
    except Exception as error:  # a bad OTEL_ variable, say: traced or not, the command runs
        warn(f"no {name!r} traces: {type(error).__name__}: {error}")
        return None


def _otlp(environ: Mapping[str, str], warn: Callable[[str], None]) -> SpanExporter | None:
    protocol = (
        environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    if protocol == "http/protobuf":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            warn(f"no OTLP traces: the OTLP exporter is not installed ({INSTALL})")
            return None
        return OTLPSpanExporter()
    if protocol == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # type: ignore[import-not-found, unused-ignore]
                OTLPSpanExporter as GrpcSpanExporter,
            )
        except ImportError:
            warn(
                f"no OTLP traces: protocol grpc needs {GRPC}, which agentos[otel] does not "
                f"bring (pip install {GRPC}, or OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf)"
            )
            return None
        grpc_exporter: SpanExporter = GrpcSpanExporter()
        return grpc_exporter
    warn(f"no OTLP traces: protocol {protocol!r} is not one of http/protobuf or grpc")
    return None


def _who_asked(environ: Mapping[str, str]) -> str:
    if environ.get("OTEL_TRACES_EXPORTER", "").strip():
        return f"OTEL_TRACES_EXPORTER={environ['OTEL_TRACES_EXPORTER'].strip()}"
    return next(name for name in ENDPOINTS if environ.get(name, "").strip())


class _CurrentStderr:
    """Writes to ``sys.stderr`` as it is when written to: while ``agentos chat`` draws on
    the terminal, Textual holds stderr, and spans go where it sends prints."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def _warn(line: str) -> None:
    click.echo(f"warning: {line}", err=True)
