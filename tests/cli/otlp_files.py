"""OTLP JSON span files of many tool calls, for ``mcp-otel report``'s scale test and benchmark.

``write_tool_calls`` writes CLIENT spans as mcp-otel ends them (``finish_span``) through the real
OTLP JSON file exporter, the way ``mcp-otel run`` writes them; ``repeat`` makes a large file from a
small one, so a million calls take seconds to write and their summary is known exactly.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from pathlib import Path

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind

from mcp_otel import semconv
from mcp_otel.model.outcome import CallOutcome, finish_span
from mcp_otel.run.otlp_file import JsonLinesSpanExporter
from mcp_otel.semconv import CancelReason

SERVERS = 5
TOOLS = 20
# (outcome, weight): a production-like mix.
MIX = (
    (CallOutcome.ok(), 70),
    (CallOutcome.failed("tool_error"), 10),
    (CallOutcome.failed("-32603", "Internal error", rpc_code=-32603), 5),
    (CallOutcome.cancelled(CancelReason.CALLER), 15),
)


def write_tool_calls(path: Path, calls: int, seed: int = 1) -> Counter[tuple[str, str]]:
    """Write ``calls`` tool calls (server-0..4, tool_0..19, the mix above, durations of 1-100 ms)
    to ``path``; returns how many calls each (server, outcome) has."""
    provider = TracerProvider(resource=Resource.create({"service.name": "agent"}))
    provider.add_span_processor(
        BatchSpanProcessor(JsonLinesSpanExporter(path), max_queue_size=calls + 512, max_export_batch_size=512)
    )
    tracer = provider.get_tracer(semconv.INSTRUMENTATION_SCOPE)
    draw = random.Random(seed)
    outcomes, weights = zip(*MIX, strict=True)
    written: Counter[tuple[str, str]] = Counter()
    for index in range(calls):
        server, tool = f"server-{index % SERVERS}", f"tool_{index % TOOLS}"
        attributes = {
            semconv.MCP_METHOD_NAME: semconv.METHOD_TOOLS_CALL,
            semconv.MCP_SERVER_NAME: server,
            semconv.GEN_AI_TOOL_NAME: tool,
            semconv.GEN_AI_OPERATION_NAME: semconv.OPERATION_EXECUTE_TOOL,
            semconv.MCP_PROTOCOL_VERSION: "2025-11-25",
            semconv.JSONRPC_REQUEST_ID: str(index),
            semconv.NETWORK_TRANSPORT: semconv.TRANSPORT_PIPE,
            semconv.MCP_SERVER_VERSION: "1.0.0",
        }
        started = time.time_ns() - int(draw.uniform(0.001, 0.1) * 1e9)
        span = tracer.start_span(f"tools/call {tool}", kind=SpanKind.CLIENT, attributes=attributes, start_time=started)
        outcome = draw.choices(outcomes, weights)[0]
        finish_span(span, outcome)
        written[server, outcome.outcome.value] += 1
    provider.shutdown()
    return written


def repeat(source: Path, target: Path, times: int) -> None:
    """``target``: ``source``'s lines ``times`` over."""
    lines = source.read_bytes()
    with target.open("wb") as out:
        for _ in range(times):
            out.write(lines)
