"""``mcp-otel report`` on OTLP JSON files written by the real SDK file exporter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.json.file import FileMetricExporter, FileSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode

from mcp_otel.cli import main
from mcp_otel.outcome import CallOutcome, finish_span
from mcp_otel.semconv import CancelReason


def write_spans(
    path: Path, calls: list[tuple[str, str, CallOutcome | None, bool]], kind: SpanKind = SpanKind.CLIENT
) -> None:
    """Spans as the file exporter writes them: (server, tool, outcome, error) per call; an outcome
    of None makes a span without tool.outcome (another instrumentation), ERROR if ``error``."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    tracer = provider.get_tracer("test")
    for server, tool, outcome, error in calls:
        attributes = {"mcp.method.name": "tools/call", "gen_ai.tool.name": tool, "mcp.server.name": server}
        span = tracer.start_span(f"tools/call {tool}", kind=kind, attributes=attributes)
        if outcome is not None:
            finish_span(span, outcome)
        else:
            if error:
                span.set_status(Status(StatusCode.ERROR, "peer's error"))
            span.end()
    provider.shutdown()


OK = CallOutcome.ok()
TOOL_ERROR = CallOutcome.failed("tool_error")
TIMEOUT = CallOutcome.failed("timeout", "timed out")
CANCELLED = CallOutcome.cancelled(CancelReason.CALLER)


def run_report(capsys: pytest.CaptureFixture[str], *args: Any) -> tuple[int, str, str]:
    code = main(["report", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_mixed_files_by_server_and_by_tool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_spans(first, [("weather", "forecast", OK, False)] * 3 + [("weather", "forecast", TOOL_ERROR, False)])
    write_spans(second, [("weather", "alerts", CANCELLED, False), ("search", "find", TIMEOUT, False)])
    # Metrics lines in the same file are skipped.
    provider = MeterProvider(metric_readers=[PeriodicExportingMetricReader(FileMetricExporter(second))])
    provider.get_meter("test").create_counter("c").add(1)
    provider.shutdown()

    code, out, _ = run_report(capsys, first, second, "--format", "json")
    assert code == 0
    rows = {row["name"]: row for row in json.loads(out)}
    assert rows["weather"] | {"ok_latency_p50_s": None, "ok_latency_p95_s": None} == {
        "name": "weather",
        "calls": 5,
        "ok": 3,
        "failed": 1,
        "cancelled": 1,
        "declined": 0,  # the caller's cancel, not a person's no
        "failure_rate": 0.25,  # 1 / (3 + 1): the cancel is in neither
        "error_types": {"tool_error": 1},
        "ok_latency_p50_s": None,
        "ok_latency_p95_s": None,
        "derived_from_status": 0,
    }
    assert rows["weather"]["ok_latency_p50_s"] >= 0
    assert (rows["search"]["failed"], rows["search"]["failure_rate"], rows["search"]["error_types"]) == (
        1,
        1.0,
        {"timeout": 1},
    )

    code, out, _ = run_report(capsys, first, second, "--by", "tool", "--format", "json")
    assert code == 0
    assert {row["name"]: row["calls"] for row in json.loads(out)} == {"alerts": 1, "find": 1, "forecast": 4}

    code, out, _ = run_report(capsys, first, second)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "server",
        "calls",
        "ok",
        "failed",
        "cancelled",
        "declined",
        "failure",
        "rate",
        "top",
        "error.type",
        "ok",
        "p50",
        "ok",
        "p95",
    ]
    weather = next(line for line in lines if line.startswith("weather"))
    assert weather.split()[:7] == ["weather", "5", "3", "1", "1", "0", "25.0%"]
    assert "cancelled calls are left out" in out


def test_spans_without_tool_outcome_are_counted_by_status_and_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "other.jsonl"
    write_spans(path, [("legacy", "t", None, False), ("legacy", "t", None, True), ("legacy", "t", OK, False)])
    code, out, _ = run_report(capsys, path, "--format", "json")
    assert code == 0
    (row,) = json.loads(out)
    assert (row["ok"], row["failed"], row["cancelled"], row["derived_from_status"]) == (2, 1, 0, 2)
    code, out, _ = run_report(capsys, path)
    assert code == 0
    assert "legacy *" in out
    assert "counted by span status" in out


def test_server_side(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "server.jsonl"
    write_spans(path, [("s", "t", OK, False)], kind=SpanKind.SERVER)
    assert json.loads(run_report(capsys, path, "--format", "json")[1]) == []
    (row,) = json.loads(run_report(capsys, path, "--format", "json", "--side", "server")[1])
    assert row["ok"] == 1


def test_fail_above(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "spans.jsonl"
    write_spans(
        path, [("s", "t", OK, False)] * 9 + [("s", "t", TOOL_ERROR, False)] + [("s", "t", CANCELLED, False)] * 5
    )
    assert run_report(capsys, path, "--fail-above", "0.1")[0] == 0  # 10% is not above 10%
    code, _, err = run_report(capsys, path, "--fail-above", "0.05")
    assert code == 1
    assert "s: failure rate 10.0% is above 5.0%" in err


def test_empty_and_malformed_files_are_named_and_nothing_else_is_lost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good, empty, broken = tmp_path / "good.jsonl", tmp_path / "empty.jsonl", tmp_path / "broken.jsonl"
    write_spans(good, [("s", "t", OK, False)])
    empty.write_text("")
    write_spans(broken, [("s", "t", TOOL_ERROR, False)])
    with broken.open("a") as file:
        file.write('{"resourceSpans": [{"scopeSpans": [{"spans": [{"kind": 3, "attributes": 7}]}]}]}\n')
        file.write("{truncated\n")
    write_spans(broken, [("s", "t", OK, False)])

    code, out, err = run_report(capsys, good, empty, broken, tmp_path / "missing.jsonl", "--format", "json")
    assert code == 2
    (row,) = json.loads(out)
    assert (row["calls"], row["ok"], row["failed"]) == (3, 2, 1)  # every readable line counted
    assert f"{empty}: empty" in err
    assert f"{broken}:2: not OTLP JSON spans" in err
    assert f"{broken}:3: not JSON" in err
    assert f"{tmp_path / 'missing.jsonl'}: cannot read" in err


def test_by_method_and_method_filter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every request's span counts under its method; the default stays tool calls."""
    path = tmp_path / "spans.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    tracer = provider.get_tracer("test")
    requests = [
        ("initialize", CallOutcome.ok()),
        ("resources/read", CallOutcome.failed("-32603", rpc_code=-32603)),
        ("resources/read", CallOutcome.cancelled(CancelReason.CALLER)),
        ("resources/read", CallOutcome.ok()),
        ("tools/call", CallOutcome.ok()),
    ]
    for method, outcome in requests:
        attributes = {"mcp.method.name": method, "mcp.server.name": "s"}
        finish_span(tracer.start_span(method, kind=SpanKind.CLIENT, attributes=attributes), outcome, method=method)
    provider.shutdown()

    def report(*options: str) -> list[dict[str, Any]]:
        assert main(["report", str(path), "--format", "json", *options]) == 0
        rows: list[dict[str, Any]] = json.loads(capsys.readouterr().out)
        return rows

    by_method = {
        row["name"]: (row["calls"], row["ok"], row["failed"], row["cancelled"]) for row in report("--by", "method")
    }
    assert by_method == {"initialize": (1, 1, 0, 0), "resources/read": (3, 1, 1, 1), "tools/call": (1, 1, 0, 0)}
    (reads,) = report("--method", "resources/read")
    assert (reads["name"], reads["calls"], reads["failure_rate"], reads["derived_from_status"]) == ("s", 3, 0.5, 0)
    (tool_calls,) = report()
    assert (tool_calls["name"], tool_calls["calls"]) == ("s", 1)
    assert sum(row["calls"] for row in report("--method", "*")) == 5
