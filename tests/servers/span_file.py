"""Span export for server subprocesses: JSON lines in the file named by MCP_OTEL_TEST_SPAN_FILE.

Each span is written and flushed as it ends, so spans survive the process being stopped.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

SPAN_FILE_ENV = "MCP_OTEL_TEST_SPAN_FILE"


class JsonLinesSpanExporter(SpanExporter):
    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed at shutdown)
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._lock:
            for span in spans:
                self._file.write(json.dumps(span_dict(span)) + "\n")
            self._file.flush()
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self._file.close()


def span_dict(span: ReadableSpan) -> dict[str, Any]:
    """A span as plain data (the SDK's JSON form), the same for in-process and file spans."""
    return dict(json.loads(span.to_json(indent=None)))


def install_span_file() -> None:
    """Instrument this (server) process, exporting to the span file, if one is named."""
    path = os.environ.get(SPAN_FILE_ENV)
    if not path:
        return
    from opentelemetry import trace

    from mcp_otel import McpInstrumentor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesSpanExporter(path)))
    # Global too, so that any span the SDK itself makes (if not suppressed) lands in the file.
    trace.set_tracer_provider(provider)
    McpInstrumentor().instrument(tracer_provider=provider)
