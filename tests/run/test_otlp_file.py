"""``mcp-otel run``'s file exporters write what the OpenTelemetry OTLP JSON file exporter writes.

Where that exporter is installed (it needs the SDK 1.45.1; the lowest-versions environment has the
SDK 1.30), the same spans and metrics go through both and every line must decode to the same
value. Everywhere, the lines are OTLP JSON that ``mcp-otel report`` reads.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from mcp_otel import semconv
from mcp_otel.run.calls import read_calls

# The exporters come with the sdk extra (lowest-mcp1 installs the package without it).
pytest.importorskip("opentelemetry.exporter.otlp.proto.common", reason="the sdk extra is not installed")
from mcp_otel.model.config import RUN_FILE_ENV
from mcp_otel.run.otlp_file import JsonLinesMetricExporter, JsonLinesSpanExporter

RESOURCE = Resource.create({"service.name": "agent", "service.instance.id": "one"})


def telemetry(span_exporter: Any, metric_exporter: Any) -> None:
    """A parent span, a tool call with every kind of attribute value, an event, an error status,
    a link; a histogram point with an exemplar, and a counter."""
    tracer_provider = TracerProvider(resource=RESOURCE)
    tracer_provider.add_span_processor(SimpleSpanProcessor(span_exporter))
    reader = PeriodicExportingMetricReader(metric_exporter, export_interval_millis=3_600_000)
    meter_provider = MeterProvider(resource=RESOURCE, metric_readers=[reader])
    tracer = tracer_provider.get_tracer(semconv.INSTRUMENTATION_SCOPE, "1.2.3")
    meter = meter_provider.get_meter(semconv.INSTRUMENTATION_SCOPE)
    with tracer.start_as_current_span("agent step") as step:
        span = tracer.start_span(
            "tools/call search",
            kind=SpanKind.CLIENT,
            attributes={
                "mcp.method.name": "tools/call",
                "gen_ai.tool.name": "search",
                "tool.outcome": "failed",
                "mcp.request.outcome": "failed",
                "error.type": "tool_error",
                "mcp.server.name": "weather",
                "jsonrpc.request.id": "7",
                "count": 3,
                "ratio": 0.25,
                "flag": True,
                "methods": ["elicitation/create", "sampling/createMessage"],
            },
            links=[Link(step.get_span_context())],
        )
        span.add_event("mcp.input_required", {"mcp.request.rounds": 1})
        span.set_status(Status(StatusCode.ERROR))
        span.end()
        histogram = meter.create_histogram(semconv.MCP_CLIENT_OPERATION_DURATION, unit="s")
        histogram.record(0.5, {"tool.outcome": "failed", "gen_ai.tool.name": "search"})
    meter.create_counter("calls").add(2, {"side": "client"})
    reader.force_flush()
    meter_provider.shutdown()
    tracer_provider.shutdown()


def lines(text: str) -> list[Any]:
    return [json.loads(line) for line in text.splitlines()]


def without_times(value: Any) -> Any:
    """The value with its timestamps left out (two runs of ``telemetry`` differ only there)."""
    if isinstance(value, dict):
        return {key: without_times(item) for key, item in value.items() if not key.endswith("UnixNano")}
    if isinstance(value, list):
        return [without_times(item) for item in value]
    return value


def test_lines_equal_the_otlp_json_file_exporters() -> None:
    upstream = pytest.importorskip(
        "opentelemetry.exporter.otlp.json.file", reason="the OTLP JSON file exporter needs the SDK 1.45.1"
    )
    FileMetricExporter, FileSpanExporter = upstream.FileMetricExporter, upstream.FileSpanExporter

    theirs, ours = io.StringIO(), io.StringIO()
    telemetry(FileSpanExporter(stream=theirs), FileMetricExporter(stream=theirs))
    telemetry(JsonLinesSpanExporter(stream=ours), JsonLinesMetricExporter(stream=ours))
    expected, written = lines(theirs.getvalue()), lines(ours.getvalue())
    assert len(written) == len(expected) == 4  # two span lines, two metric lines
    # Ids are random per run: the same shape (hex of the same width), then all else equal.
    for mine, their in zip(written, expected, strict=True):
        assert without_times(_ids_masked(mine)) == without_times(_ids_masked(their))


def _ids_masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: f"hex{len(item)}"
            if key in ("traceId", "spanId", "parentSpanId") and _is_hex(item)
            else _ids_masked(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_ids_masked(item) for item in value]
    return value


def _is_hex(text: Any) -> bool:
    return isinstance(text, str) and all(character in "0123456789abcdef" for character in text)


def test_ids_are_hex_and_link_the_spans() -> None:
    stream = io.StringIO()
    telemetry(JsonLinesSpanExporter(stream=stream), JsonLinesMetricExporter(stream=stream))
    tool_line, step_line = lines(stream.getvalue())[:2]
    (call,) = tool_line["resourceSpans"][0]["scopeSpans"][0]["spans"]
    (step,) = step_line["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert (len(call["traceId"]), len(call["spanId"])) == (32, 16)
    assert call["parentSpanId"] == step["spanId"]
    assert call["links"][0]["spanId"] == step["spanId"]
    assert (call["kind"], call["status"]["code"]) == (3, 2)  # enums as integers
    metrics = lines(stream.getvalue())[2]["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]
    (histogram,) = [metric for metric in metrics if metric["name"] == semconv.MCP_CLIENT_OPERATION_DURATION]
    (exemplar,) = histogram["histogram"]["dataPoints"][0]["exemplars"]
    assert (exemplar["traceId"], exemplar["spanId"]) == (step["traceId"], step["spanId"])


def test_the_run_file_is_shared_and_report_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Made without arguments (as the SDK's configurator makes them), both write the run's file."""
    run_file = tmp_path / "run.jsonl"
    monkeypatch.setenv(RUN_FILE_ENV, str(run_file))
    telemetry(JsonLinesSpanExporter(), JsonLinesMetricExporter())
    written = lines(run_file.read_text())
    assert [next(iter(line)) for line in written] == [
        "resourceSpans",
        "resourceSpans",
        "resourceMetrics",
        "resourceMetrics",
    ]
    calls, problems = read_calls([run_file], "client")
    assert problems == []
    assert [(call.tool, call.outcome.value, call.error_type, call.server) for call in calls] == [
        ("search", "failed", "tool_error", "weather")
    ]


def test_no_run_file_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(RUN_FILE_ENV, raising=False)
    with pytest.raises(ValueError, match=RUN_FILE_ENV):
        JsonLinesSpanExporter()


def test_a_failed_write_fails_the_export_and_never_raises() -> None:
    stream = io.StringIO()
    exporter = JsonLinesSpanExporter(stream=stream)
    stream.close()
    provider = TracerProvider(resource=RESOURCE)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    provider.get_tracer("test").start_span("x").end()  # must not raise
    exporter.shutdown()


def _generations(path: Path) -> list[Path]:
    from mcp_otel.run.calls import with_generations

    return with_generations(path)


def test_past_its_size_the_file_rotates_and_keeps_its_generations(tmp_path: Path) -> None:
    """Each line whole in one generation; ``PATH.1`` the newest rotated one; past ``keep`` the
    oldest dropped; a line bigger than the cap goes alone into a fresh file."""
    from mcp_otel.run.otlp_file import LineStream

    path = tmp_path / "server.jsonl"
    stream = LineStream(str(path), max_bytes=1000, keep=2)
    for number in range(30):  # 100 bytes a line: ten a file
        line = json.dumps({"n": number, "pad": ""})
        stream.write(json.dumps({"n": number, "pad": "x" * (99 - len(line))}) + "\n")
    stream.write(json.dumps({"n": 30, "pad": "x" * 3000}) + "\n")
    stream.close()
    assert [p.name for p in _generations(path)] == ["server.jsonl.2", "server.jsonl.1", "server.jsonl"]
    kept = [json.loads(line)["n"] for p in _generations(path) for line in p.read_text().splitlines()]
    assert kept == list(range(10, 31))  # the first ten dropped
    assert [len(p.read_text().splitlines()) for p in _generations(path)] == [10, 10, 1]
    assert all(p.stat().st_size <= 1000 for p in _generations(path)[:-1])


# A writer process: LINES lines of its own, through a small, rotating stream, as fast as it can.
_WRITER = """
import json, sys
from mcp_otel.run.otlp_file import LineStream
path, who, lines = sys.argv[1], sys.argv[2], int(sys.argv[3])
stream = LineStream(path, max_bytes=20_000, keep=1_000)
for number in range(lines):
    stream.write(json.dumps({"who": who, "n": number, "pad": "y" * (number * 37 % 7000)}) + "\\n")
stream.close()
"""


def test_two_processes_writing_one_file_lose_and_tear_no_line(tmp_path: Path) -> None:
    """Two proxies of one name (two desktop clients running the same server) write the same file
    at once, rotating it under each other: every line of both is there once, whole."""
    import subprocess
    import sys

    path, lines = tmp_path / "server.jsonl", 400
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), who, str(lines)]) for who in ("first", "second")
    ]
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    generations = _generations(path)
    assert len(generations) > 20  # it rotated, many times, under both
    seen = [json.loads(line) for p in generations for line in p.read_text().splitlines()]
    assert sorted((line["who"], line["n"]) for line in seen) == sorted(
        (who, number) for who in ("first", "second") for number in range(lines)
    )


def test_spans_are_encoded_as_the_protobuf_encoders_and_json_mapping_encode_them() -> None:
    """The span exporter writes OTLP JSON straight from the spans (the proxy writes one batch per
    few requests, and protobuf's path cost more CPU than the relay's serving); the same spans
    through the SDK's protobuf encoder and protobuf's JSON mapping decode to the same value:
    every kind of value (nested, empty, non-finite, bytes, None), a remote parent, a trace state,
    events, links, dropped counts, statuses, resources and scopes with and without schemas."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import SpanLimits
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, TraceState, set_span_in_context

    from mcp_otel.run.otlp_json import otlp_json_line, spans_json_line

    spans: list[Any] = []
    resources = [RESOURCE, Resource({"service.name": "proxy"}, schema_url="https://opentelemetry.io/schemas/1.26.0")]
    for resource in resources:
        provider = TracerProvider(resource=resource, span_limits=SpanLimits(max_attributes=12, max_events=2))
        exporter = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        plain = provider.get_tracer("plain")
        scoped = provider.get_tracer("scoped", "1.0", schema_url="https://example.com/s", attributes={"a": 1})
        remote = SpanContext(
            0xABC, 0xDEF, is_remote=True, trace_flags=TraceFlags(1), trace_state=TraceState([("k", "v")])
        )
        values: dict[str, Any] = {
            "s": "text",
            "empty": "",
            "i": -(2**63),
            "zero": 0,
            "f": 1.0,
            "nan": float("nan"),
            "inf": float("inf"),
            "ninf": float("-inf"),
            "t": True,
            "false": False,
            "strings": ["a", ""],
            "nothing": [],
        }
        with plain.start_as_current_span(
            "outer", kind=SpanKind.SERVER, context=set_span_in_context(NonRecordingSpan(remote))
        ) as outer:
            span = scoped.start_span(
                "every value", attributes=values, links=[Link(outer.get_span_context(), {"l": 1.5})]
            )
            span.set_attribute("over the limit", 1)  # dropped: one past max_attributes
            for n in range(3):  # one past max_events
                span.add_event(f"event {n}", {"n": n})
            span.set_status(Status(StatusCode.ERROR, "it failed"))
            span.end()
            ok = plain.start_span("", kind=SpanKind.PRODUCER)
            ok.set_status(Status(StatusCode.OK))
            ok.end()
        spans += exporter.get_finished_spans()
        provider.shutdown()
    assert len(spans) == 6
    written = json.loads(spans_json_line(spans))
    expected = json.loads(otlp_json_line(encode_spans(spans)))
    assert _as_older_encoders_write(written, expected) == expected


def _as_older_encoders_write(written: Any, expected: Any) -> Any:
    """What the installed encoder leaves out, left out: before the SDK 1.32 (make lowest has
    1.30) a scope's attributes and schema, and the span flags."""
    scopes = [entry for item in expected["resourceSpans"] for entry in item["scopeSpans"]]
    if not any("attributes" in entry["scope"] for entry in scopes):
        for item in written["resourceSpans"]:
            for entry in item["scopeSpans"]:
                entry["scope"].pop("attributes", None)
                entry.pop("schemaUrl", None)
    spans = [span for entry in scopes for span in entry["spans"]]
    if not any("flags" in span for span in spans):
        for item in written["resourceSpans"]:
            for entry in item["scopeSpans"]:
                for span in entry["spans"]:
                    span.pop("flags", None)
                    for link in span.get("links", []):
                        link.pop("flags", None)
    return written


def test_a_lone_surrogate_is_escaped_not_an_error() -> None:
    """msgspec writes the lines; a string with a lone surrogate (bytes that were not UTF-8,
    decoded with surrogateescape) is not UTF-8 it can write, and json escapes it instead."""
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from mcp_otel.run.otlp_json import spans_json_line

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=RESOURCE)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    provider.get_tracer("t").start_span("odd", attributes={"value": "caf\udcff"}).end()
    (span,) = json.loads(spans_json_line(exporter.get_finished_spans()))["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert span["attributes"] == [{"key": "value", "value": {"stringValue": "caf\udcff"}}]
