"""Instruments before ``mcp`` is imported, then calls tools; prints the spans as JSON lines."""

import json
import sys

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_otel import McpInstrumentor

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
assert "mcp" not in sys.modules
McpInstrumentor().instrument(tracer_provider=provider)
assert "mcp" not in sys.modules, "instrument() must not import mcp"

import anyio  # noqa: E402

from tests.agents.simple_agent import main  # noqa: E402  (imports mcp now)

anyio.run(main)
for span in exporter.get_finished_spans():
    print(json.dumps({"name": span.name, "attributes": dict(span.attributes or {})}))
