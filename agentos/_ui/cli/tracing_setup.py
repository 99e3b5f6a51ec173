"""Traces from the command line, when the standard OpenTelemetry variables ask for them.

The commands that run sessions set a tracer provider up from ``OTEL_TRACES_EXPORTER``
(``otlp``, ``console``, ``none``, or an installed exporter's name; a comma list) and the
OTLP endpoint variables (an endpoint alone means ``otlp``), and only then: without them
nothing of OpenTelemetry is imported. The library never configures a provider itself; it
reports to the global one, which this sets. Tracing never stops a command: what keeps it
from being set up (the extra not installed, an unknown exporter) is one line on stderr,
and the command runs on untraced. Nor does a collector that is down: the OTLP exporters give
up after ``EXPORT_TIMEOUT`` unless ``OTEL_EXPORTER_OTLP_TIMEOUT`` (or its ``TRACES`` form)
says otherwise, so the command ends within seconds, and what the SDK logs about it is one
``warning:`` line on stderr, once.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
import threading
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from importlib.metadata import entry_points
from typing import IO
from typing import TYPE_CHECKING
from typing import Any
from typing import cast

import click

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

INSTALL = "pip install 'agentos[otel]'"
SERVICE_NAME = "agentos"
"""``service.name`` unless ``OTEL_SERVICE_NAME`` (or ``OTEL_RESOURCE_ATTRIBUTES``) names one."""
ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
GRPC = "opentelemetry-exporter-otlp-proto-grpc"
TIMEOUTS = ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")
EXPORT_TIMEOUT = 2.0
"""Seconds an OTLP export may take, retries included, when no variable says: the SDK's 10 s
default held a command's exit that long when the collector was down."""


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
    said = _SaidOnce(_where(environ), warn)
    sdk = logging.getLogger("opentelemetry")
    if provider is not None:
        sdk.addHandler(said)
    try:
        yield
    finally:
        if provider is not None:
            try:
                provider.shutdown()
            finally:
                sdk.removeHandler(said)


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
        return OTLPSpanExporter(timeout=_export_timeout(environ))
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
        grpc_exporter: SpanExporter = GrpcSpanExporter(timeout=_export_timeout(environ))
        return grpc_exporter
    warn(f"no OTLP traces: protocol {protocol!r} is not one of http/protobuf or grpc")
    return None


def _export_timeout(environ: Mapping[str, str]) -> float | None:
    """``EXPORT_TIMEOUT``, or None when a variable sets the timeout (the exporter reads it)."""
    return None if any(environ.get(name, "").strip() for name in TIMEOUTS) else EXPORT_TIMEOUT


def _where(environ: Mapping[str, str]) -> str:
    """Where the OTLP traces go, as the variables say (the SDK's default when none does)."""
    if traces := environ.get(ENDPOINTS[0], "").strip():
        return traces
    return (environ.get(ENDPOINTS[1], "").strip() or "http://localhost:4318").rstrip("/") + (
        "/v1/traces"
    )


class _SaidOnce(logging.Handler):
    """What the OpenTelemetry SDK logs (a collector that does not answer: a 'Transient
    error' per retry, then 'Failed to export'), said as one ``warning:`` line, the first
    time only, instead of Python's last-resort handler printing each record on stderr,
    which otherwise carries the command's JSON lines."""

    def __init__(self, where: str, warn: Callable[[str], None]) -> None:
        super().__init__(logging.WARNING)
        self.where = where
        self.warn = warn
        self._said = False
        self._once = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        with self._once:
            if self._said:
                return
            self._said = True
        try:
            self.warn(_what_went_wrong(record, self.where))
        except Exception:
            self.handleError(record)


def _what_went_wrong(record: logging.LogRecord, where: str) -> str:
    message = record.getMessage()
    if "export" not in record.name and "export" not in message.lower():
        return f"traces: {_brief(message)}"
    reason = _os_reason(record.args) or _brief(message)
    return f"traces could not be sent to {where}: {reason}"


def _os_reason(found: object, depth: int = 0) -> str | None:
    """The words of the system error inside what a record logs (``Connection refused``),
    looking through exceptions' arguments, causes and ``reason``s."""
    if depth > 8 or found is None:
        return None
    if isinstance(found, OSError) and found.strerror:
        return str(found.strerror)
    inner: list[object] = []
    if isinstance(found, tuple | list):
        inner = list(found)
    elif isinstance(found, BaseException):
        inner = [*found.args, getattr(found, "reason", None), found.__cause__, found.__context__]
    for item in inner:
        if isinstance(item, BaseException | tuple | list) and (
            reason := _os_reason(item, depth + 1)
        ):
            return reason
    return None


def _brief(text: str, limit: int = 160) -> str:
    line = text.strip().splitlines()[0] if text.strip() else text
    return line if len(line) <= limit else line[: limit - 1] + "…"


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
