"""The exit budget of the OTLP exporters (run_configurator): nothing changes until the process
exits; then an export that would start after its signal's timeout fails at once, and one still
running then is abandoned."""

from __future__ import annotations

import time
from typing import Any

import pytest

from mcp_otel.run.configurator import DEFAULT_EXPORT_TIMEOUT, _BoundedExporter, _ExitClock, bound_exit, export_timeout


class SlowExporter:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.exports = 0
        self.shut = False

    def export(self, batch: Any) -> str:
        self.exports += 1
        time.sleep(self.seconds)
        return "SUCCESS"

    def shutdown(self) -> None:
        self.shut = True


def test_before_exit_exports_go_straight_through() -> None:
    inner = SlowExporter(0.2)
    exporter = _BoundedExporter(inner, _ExitClock(), 0.05, "FAILURE")
    assert exporter.export([]) == "SUCCESS"  # longer than the budget, which has not started
    exporter.shutdown()
    assert inner.shut  # everything else is the exporter's own


def test_at_exit_an_export_ends_by_the_budget() -> None:
    clock = _ExitClock()
    inner = SlowExporter(5.0)
    exporter = _BoundedExporter(inner, clock, 0.3, "FAILURE")
    clock.start()
    started = time.monotonic()
    assert exporter.export([]) == "FAILURE"
    assert time.monotonic() - started < 1.0
    assert exporter.export([]) == "FAILURE"  # the budget is spent: no new export starts
    assert inner.exports == 1


def test_at_exit_a_quick_export_still_succeeds() -> None:
    clock = _ExitClock()
    exporter = _BoundedExporter(SlowExporter(0.01), clock, 2.0, "FAILURE")
    clock.start()
    assert exporter.export([]) == "SUCCESS"


@pytest.mark.parametrize(
    ("variables", "traces", "metrics"),
    [
        ({}, DEFAULT_EXPORT_TIMEOUT, DEFAULT_EXPORT_TIMEOUT),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "3"}, 3.0, 3.0),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "3", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "1.5"}, 1.5, 3.0),
        ({"OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "7"}, DEFAULT_EXPORT_TIMEOUT, 7.0),
        ({"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "soon"}, DEFAULT_EXPORT_TIMEOUT, DEFAULT_EXPORT_TIMEOUT),
    ],
)
def test_each_signal_gets_its_own_export_timeout(
    monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], traces: float, metrics: float
) -> None:
    """Resolved as the SDK's OTLP exporters resolve it, so exit waits no longer than they would once."""
    for signal in ("", "_TRACES", "_METRICS"):
        monkeypatch.delenv(f"OTEL_EXPORTER_OTLP{signal}_TIMEOUT", raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert (export_timeout("traces"), export_timeout("metrics")) == (traces, metrics)


def test_bound_exit_wraps_the_sdks_otlp_exporters_with_their_signals_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader, PeriodicExportingMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # Whole seconds: the SDK 1.30's OTLP exporters read them as integers.
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "2")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "4")
    endpoint = "http://127.0.0.1:9"  # never contacted: nothing is exported
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    reader = PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=endpoint), export_interval_millis=3_600_000)
    meter_provider = MeterProvider(metric_readers=[reader, InMemoryMetricReader()])
    try:
        assert bound_exit(tracer_provider, meter_provider) is not None
        (processor,) = tracer_provider._active_span_processor._span_processors
        batch = getattr(processor, "_batch_processor", None)  # the SDK 1.3x processor holds it itself
        spans = processor.span_exporter if batch is None else batch._exporter  # type: ignore[attr-defined]
        metrics = reader._exporter
        assert isinstance(spans, _BoundedExporter)
        assert isinstance(metrics, _BoundedExporter)
        assert (spans._seconds, metrics._seconds) == (2.0, 4.0)
        assert (type(spans._inner), type(metrics._inner)) == (OTLPSpanExporter, OTLPMetricExporter)
    finally:
        tracer_provider.shutdown()
        meter_provider.shutdown()


def test_bound_exit_leaves_other_exporters_alone() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(InMemorySpanExporter()))
    try:
        assert bound_exit(tracer_provider, None) is None
    finally:
        tracer_provider.shutdown()
