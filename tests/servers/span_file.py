"""Span export for server subprocesses: JSON lines in the file named by MCP_OTEL_TEST_SPAN_FILE.

The SDK's console exporter writes and flushes each span as it ends, so spans survive the
process being stopped.
"""

from __future__ import annotations

import json
import os
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

SPAN_FILE_ENV = "MCP_OTEL_TEST_SPAN_FILE"


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

    out = open(path, "a", encoding="utf-8")  # noqa: SIM115 (open for the life of the process)
    provider = TracerProvider()
    provider.add_span_processor(
        SimpleSpanProcessor(ConsoleSpanExporter(out=out, formatter=lambda span: span.to_json(indent=None) + "\n"))
    )
    # Global too, so that any span the SDK itself makes (if not suppressed) lands in the file.
    trace.set_tracer_provider(provider)
    McpInstrumentor().instrument(tracer_provider=provider)
