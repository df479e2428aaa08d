"""Where the proxy's telemetry goes, and what its service is called.

Always an OTLP JSON lines file that ``mcp-otel report`` reads (``--output``; by default one file
per proxied server in the per-user state directory, ``$XDG_STATE_HOME/mcp-otel/proxy``, else
``~/.local/state/mcp-otel/proxy``); with ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or the per-signal
endpoints) set, OTLP over HTTP too, configured by the SDK's own ``OTEL_*`` variables, as under
``mcp-otel run``. Exports run on the SDK's background threads: the relay never waits for them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from opentelemetry.metrics import Meter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Tracer

from mcp_otel.otlp_file import JsonLinesMetricExporter, JsonLinesSpanExporter, LineStream
from mcp_otel.run_configurator import bound_exit
from mcp_otel.safety import report_once
from mcp_otel.semconv import INSTRUMENTATION_SCOPE
from mcp_otel.service_names import names_the_service
from mcp_otel.version import __version__

_OTLP_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def state_directory(environ: Mapping[str, str] = os.environ) -> Path:
    base = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "mcp-otel" / "proxy"


def default_output(name: str, environ: Mapping[str, str] = os.environ) -> Path:
    return state_directory(environ) / f"{_UNSAFE.sub('_', name) or 'server'}.jsonl"


class ProxyTelemetry:
    """The proxy's tracer and meter, their exporters, and their bounded shutdown."""

    def __init__(self, output: Path, service_name: str, environ: Mapping[str, str] = os.environ) -> None:
        output.parent.mkdir(parents=True, exist_ok=True)
        resource = Resource.create({} if names_the_service(environ) else {"service.name": service_name})
        stream = LineStream(str(output))  # one writer for spans and metrics: whole lines
        self._tracer_provider = TracerProvider(resource=resource)
        self._tracer_provider.add_span_processor(BatchSpanProcessor(JsonLinesSpanExporter(stream=stream)))
        readers: list[MetricReader] = [PeriodicExportingMetricReader(JsonLinesMetricExporter(stream=stream))]
        if any(environ.get(name) for name in _OTLP_ENDPOINTS):
            try:
                from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

                self._tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
                readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
            except Exception as exc:
                report_once("could not set up the OTLP exporters; telemetry goes to the file only", exc)
        self._meter_provider = MeterProvider(resource=resource, metric_readers=readers)
        self._exit: Any = None
        try:
            self._exit = bound_exit(self._tracer_provider, self._meter_provider)
        except Exception as exc:
            report_once("could not bound the exporters' time at exit", exc)

    def tracer(self) -> Tracer:
        return self._tracer_provider.get_tracer(INSTRUMENTATION_SCOPE, __version__)

    def meter(self) -> Meter:
        return self._meter_provider.get_meter(INSTRUMENTATION_SCOPE, __version__)

    def flush(self) -> None:
        """Export what there is now (each exporter within its own timeout)."""
        for provider in (self._tracer_provider, self._meter_provider):
            try:
                provider.force_flush()
            except Exception as exc:
                report_once("could not export the telemetry so far", exc)

    def shutdown(self) -> None:
        """Export what is left: the file at once, OTLP within its export timeout."""
        if self._exit is not None:
            self._exit.start()
        for provider in (self._meter_provider, self._tracer_provider):
            try:
                provider.shutdown()
            except Exception as exc:
                report_once("could not export the last telemetry", exc)
