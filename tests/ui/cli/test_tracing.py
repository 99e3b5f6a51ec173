"""Traces from the command line (issue 47): the commands that run sessions send spans
when the standard OpenTelemetry variables ask, and only then.

A local OTLP/HTTP receiver (``POST /v1/traces``, decoded with the protobuf messages the
exporter comes with) reads back what ``agentos run`` and ``agentos say`` send; the
console exporter writes to stderr. The batch processor is told to wait ten minutes
(``OTEL_BSP_SCHEDULE_DELAY``), so the spans arrive only because the command flushes them
as it ends, Ctrl-C included.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.support import ROOT
from tests.support.cli import Result
from tests.support.cli import agentos
from tests.support.cli import start
from tests.support.import_watch import watched
from tests.support.skips import cannot_run

try:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
except ImportError:
    REASON = "the CLI tracing tests need agentos[otel]: pip install -e '.[test,otel]' (make test)"
    cannot_run("the CLI tracing tests", REASON, module=True)

ONLY_AT_THE_END = {"OTEL_BSP_SCHEDULE_DELAY": "600000"}
"""The batch processor's delay (ms): longer than any test, so only the flush sends."""
INSTALL = "pip install 'agentos[otel]'"


@dataclass(frozen=True)
class Span:
    service: str
    name: str
    trace_id: str
    attributes: dict[str, Any]


class Receiver:
    """An OTLP/HTTP trace endpoint on 127.0.0.1: the spans sent to it, decoded."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.spans: list[Span] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received(self.path, body)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"

    def received(self, path: str, body: bytes) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.paths.append(path)
        for resource_spans in request.resource_spans:
            resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    attributes = {a.key: _value(a.value) for a in span.attributes}
                    self.spans.append(
                        Span(resource["service.name"], span.name, span.trace_id.hex(), attributes)
                    )

    def names(self) -> set[str]:
        return {span.name for span in self.spans}


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return None if kind is None else getattr(value, kind)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    receiver = Receiver()
    serving = threading.Thread(target=receiver.server.serve_forever, daemon=True)
    serving.start()
    yield receiver
    receiver.server.shutdown()
    receiver.server.server_close()
    serving.join(timeout=10)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """As ``tests.support.cli``'s (offline, a database in ``tmp_path``), without the tester's
    OTEL_ variables."""
    unset = {"ANTHROPIC_API_KEY", "AGENTOS_DEBUG", "AGENTOS_DB"}
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in unset and not name.startswith("OTEL_")
    }
    return {**environment, "AGENTOS_DB": str(tmp_path / "agentos.db")}


def warnings(result: Result | subprocess.CompletedProcess[str]) -> list[str]:
    lines = (result.err if isinstance(result, Result) else result.stderr).splitlines()
    return [line for line in lines if line.startswith("warning:")]


def test_run_and_say_send_their_spans_to_an_otlp_endpoint(
    env: dict[str, str], receiver: Receiver
) -> None:
    """An endpoint alone asks for OTLP (service "agentos"); OTEL_TRACES_EXPORTER=otlp with
    the traces endpoint (a whole URL) and a service name too."""
    asked = {**env, **ONLY_AT_THE_END, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}
    run = agentos(asked, "run", "--session-id", "s", "What's the weather in Paris?")
    assert (run.code, warnings(run)) == (0, []), run
    assert {"invoke_agent demo", "chat claude-sonnet-4-5", "execute_tool weather"} <= (
        receiver.names()
    )
    assert {span.service for span in receiver.spans} == {"agentos"}
    (turn,) = (span for span in receiver.spans if span.name == "invoke_agent demo")
    assert turn.attributes["gen_ai.conversation.id"] == "s"
    chats = [span for span in receiver.spans if span.name.startswith("chat")]
    assert {span.trace_id for span in chats} == {turn.trace_id}
    assert set(receiver.paths) == {"/v1/traces"}

    ran = len(receiver.spans)
    named = {
        **env,
        **ONLY_AT_THE_END,
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{receiver.endpoint}/traces/here",
        "OTEL_SERVICE_NAME": "desk",
    }
    say = agentos(named, "say", "s", "What's the weather in Oslo?")
    assert (say.code, warnings(say)) == (0, []), say
    said = receiver.spans[ran:]
    assert {"invoke_agent demo", "execute_tool weather"} <= {span.name for span in said}
    assert {span.service for span in said} == {"desk"}
    assert receiver.paths[-1] == "/traces/here"


def test_ctrl_c_sends_what_was_traced_before_it(
    env: dict[str, str],
    receiver: Receiver,
    quick_agent: str,
) -> None:
    asked = {**env, **ONLY_AT_THE_END, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}
    process = start(
        asked, "run", "--agent", quick_agent, "--wait-for-async", "Check Jane's calendar (30s)"
    )
    assert process.stderr is not None
    for line in process.stderr:
        if '"event": "started"' in line:
            break
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130, (out, err)
    assert {"invoke_agent quick", "chat claude-sonnet-4-5"} <= receiver.names(), err


def test_a_collector_that_is_down_is_one_warning_line_and_holds_nothing_up(
    env: dict[str, str],
) -> None:
    """Nothing listens at the endpoint: the command still ends at once with its answer on
    stdout; stderr is its usual lines and one warning naming where the traces should have
    gone, instead of the SDK's retries and failure printed as they happen (and the SDK's
    10 s export timeout held the exit meanwhile; 30 s here is a generous bound)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{probe.getsockname()[1]}"
    asked = {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}
    process = start(asked, "run", "What's the weather in Paris?")
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert json.loads(out)["status"] == "done", out
    model, *lines = err.splitlines()
    assert model.startswith("model: scripted"), err
    said = [line for line in lines if not line.startswith("{")]
    (warning,) = said
    assert warning == f"warning: traces could not be sent to {endpoint}/v1/traces: " + (
        "Connection refused"
    ), err


def test_the_console_exporter_writes_on_stderr_and_leaves_stdout_to_the_answer(
    env: dict[str, str],
) -> None:
    run = agentos({**env, "OTEL_TRACES_EXPORTER": "console"}, "run", "What's the weather in Paris?")
    assert run.code == 0, run
    assert run.json["status"] == "done"  # stdout is the answer alone
    spans = console_spans(run.err)
    assert {"invoke_agent demo", "execute_tool weather"} <= {span["name"] for span in spans}
    assert {span["resource"]["attributes"]["service.name"] for span in spans} == {"agentos"}


def console_spans(text: str) -> list[dict[str, Any]]:
    """The spans the console exporter wrote (an indented JSON object each) in ``text``."""
    spans, lines = [], iter(text.splitlines())
    for line in lines:
        if line == "{":
            body = [line]
            for line in lines:
                body.append(line)
                if line == "}":
                    break
            spans.append(json.loads("\n".join(body)))
    return spans


@pytest.mark.parametrize(
    "variables",
    [
        {},
        {"OTEL_SERVICE_NAME": "desk", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"},
        {"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "{endpoint}"},
        {"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "{endpoint}"},
    ],
    ids=["none-set", "others-only", "exporter-none", "sdk-disabled"],
)
def test_unasked_no_span_is_sent_and_no_sdk_imported(
    env: dict[str, str], receiver: Receiver, tmp_path: Path, variables: dict[str, str]
) -> None:
    given = {name: value.format(endpoint=receiver.endpoint) for name, value in variables.items()}
    done, imported = watched(
        {**env, **given},
        [],
        "agentos.cli",
        "run",
        "What's the weather in Paris?",
        report=tmp_path / "i",
    )
    assert done.returncode == 0, done.stderr
    assert receiver.spans == []
    assert not {m for m in imported if m.startswith(("opentelemetry.sdk", "opentelemetry.exp"))}
    assert "model: scripted" in done.stderr
    assert "warning" not in done.stderr
    assert "{\n" not in done.stderr  # no console span


def test_without_the_extra_one_line_says_how_to_get_it_and_the_command_runs(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The variables may be set for every program of a shell or a container: tracing that
    cannot be set up never stops the command."""
    asked = {**env, "OTEL_TRACES_EXPORTER": "otlp"}
    refused = ["opentelemetry.sdk", "opentelemetry.exporter"]
    done, _ = watched(asked, refused, "agentos.cli", "run", "hello", report=tmp_path / "i")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "done"
    (line,) = warnings(done)
    assert "OTEL_TRACES_EXPORTER=otlp" in line and INSTALL in line, line


def test_an_exporter_that_cannot_be_made_is_one_line_and_the_others_still_work(
    env: dict[str, str], tmp_path: Path
) -> None:
    asked = {
        **env,
        "OTEL_TRACES_EXPORTER": "otlp, nonesuch,console",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
    }
    refused = ["opentelemetry.exporter.otlp.proto.grpc"]  # not installed, if it ever is
    done, _ = watched(asked, refused, "agentos.cli", "run", "hello", report=tmp_path / "i")
    assert done.returncode == 0, done.stderr
    grpc, unknown = warnings(done)
    assert "opentelemetry-exporter-otlp-proto-grpc" in grpc and "http/protobuf" in grpc, grpc
    assert "'nonesuch'" in unknown, unknown
    assert "invoke_agent demo" in {span["name"] for span in console_spans(done.stderr)}


def test_a_tracer_provider_the_program_set_is_the_one_used(env: dict[str, str]) -> None:
    """A program that configured tracing itself (``opentelemetry-instrument``, say) and
    runs the command line keeps its provider: the variables add no second one."""
    program = """
import json
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from agentos.cli import run_cli

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
code = run_cli(["run", "hello"])
print(json.dumps({"code": code, "names": [s.name for s in exporter.get_finished_spans()]}))
"""
    done = subprocess.run(
        [sys.executable, "-c", program],
        env={**env, "OTEL_TRACES_EXPORTER": "console"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["code"] == 0, done.stderr
    assert "invoke_agent demo" in report["names"]
    assert console_spans(done.stderr) == []
