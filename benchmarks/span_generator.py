"""Traces of one tool call each, as mcp-otel writes them (its CLIENT span, then its SERVER span
from a second service), sent over OTLP/HTTP as fast as one process can: the load of
``gateway_sizing.py``.

    python benchmarks/span_generator.py ENDPOINT FIRST COUNT

Outcomes are drawn 70% ok, 10% failed (tool errors), 20% cancelled, seeded by FIRST.
"""

from __future__ import annotations

import random
import sys

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer, set_span_in_context

from mcp_otel import semconv
from mcp_otel.semconv import CancelReason, ErrorType, Outcome

OUTCOMES = {Outcome.OK: 70, Outcome.FAILED: 10, Outcome.CANCELLED: 20}
TOOLS = 20


def tracer(endpoint: str, service: str) -> tuple[TracerProvider, Tracer]:
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    exporter = OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces", timeout=30)
    batches = BatchSpanProcessor(
        exporter, max_queue_size=200_000, max_export_batch_size=1000, schedule_delay_millis=100
    )
    provider.add_span_processor(batches)
    return provider, provider.get_tracer(semconv.INSTRUMENTATION_SCOPE)


def main(endpoint: str, first: int, count: int) -> None:
    (agent_provider, client), (server_provider, server) = (
        tracer(endpoint, "sizing-agent"),
        tracer(endpoint, "sizing-server"),
    )
    draw = random.Random(first)
    for index in range(first, first + count):
        outcome = draw.choices(list(OUTCOMES), list(OUTCOMES.values()))[0].value
        tool = f"tool_{index % TOOLS}"
        attributes = {
            semconv.MCP_METHOD_NAME: semconv.METHOD_TOOLS_CALL,
            semconv.MCP_SERVER_NAME: "sizing",
            semconv.GEN_AI_TOOL_NAME: tool,
            semconv.GEN_AI_OPERATION_NAME: semconv.OPERATION_EXECUTE_TOOL,
            semconv.MCP_PROTOCOL_VERSION: "2025-11-25",
            semconv.JSONRPC_REQUEST_ID: str(index),
            semconv.MCP_REQUEST_OUTCOME: outcome,
            semconv.TOOL_OUTCOME: outcome,
        }
        if outcome == Outcome.FAILED.value:
            attributes[semconv.ERROR_TYPE] = ErrorType.TOOL_ERROR
        if outcome == Outcome.CANCELLED.value:
            attributes[semconv.MCP_REQUEST_CANCEL_REASON] = CancelReason.CALLER.value
            attributes[semconv.TOOL_CANCEL_REASON] = CancelReason.CALLER.value
        status = Status(StatusCode.ERROR if outcome == Outcome.FAILED.value else StatusCode.UNSET)
        name = f"{semconv.METHOD_TOOLS_CALL} {tool}"
        span = client.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)
        child = server.start_span(name, set_span_in_context(span), SpanKind.SERVER, attributes)
        for each in (child, span):
            each.set_status(status)
            each.end()
    agent_provider.shutdown()
    server_provider.shutdown()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
