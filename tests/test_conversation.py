"""A conversation's calls together: the ``gen_ai.conversation.id`` the application puts in
OpenTelemetry baggage is on both sides' spans (in memory, in a server process across stdio, and
on the proxy's), travelling in ``_meta`` with the trace context, never on a metric point; and
``mcp-otel report --conversation`` shows one conversation's calls."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import baggage, context
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from mcp_otel.cli.main import main
from mcp_otel.run.otlp_file import JsonLinesSpanExporter
from mcp_otel.semconv import GEN_AI_CONVERSATION_ID
from tests.harness import open_session
from tests.metrics.test_metrics import histogram_points
from tests.proxy.test_stdio_proxy import finished, proxied_session
from tests.server.test_server_spans import call
from tests.servers.span_file import span_dict

pytestmark = pytest.mark.anyio

CONVERSATION = "conversation-42"


@contextmanager
def in_conversation(conversation: str) -> Iterator[None]:
    """As an agent framework sets it: the id in the current context's baggage."""
    token = context.attach(baggage.set_baggage(GEN_AI_CONVERSATION_ID, conversation))
    try:
        yield
    finally:
        context.detach(token)


def tool_calls(spans: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    """(kind, tool, conversation) of each tools/call span, sorted."""
    return sorted(
        (span["kind"].removeprefix("SpanKind."), span["name"], span["attributes"].get(GEN_AI_CONVERSATION_ID))
        for span in spans
        if span["attributes"].get("mcp.method.name") == "tools/call"
    )


async def test_both_sides_record_it_and_no_point_does(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    reader = InMemoryMetricReader()
    instrument(meter_provider=MeterProvider(metric_readers=[reader]))
    async with open_session("memory") as session:
        with in_conversation(CONVERSATION):
            await call(session, "ok")
        await call(session, "tool_error")  # outside any conversation
    spans = [span_dict(span) for span in exporter.get_finished_spans()]
    # The server's handler runs in the server's own tasks: it learns the id from _meta only.
    assert tool_calls(spans) == [
        ("CLIENT", "tools/call ok", CONVERSATION),
        ("CLIENT", "tools/call tool_error", None),
        ("SERVER", "tools/call ok", CONVERSATION),
        ("SERVER", "tools/call tool_error", None),
    ]
    for name in ("mcp.client.operation.duration", "mcp.server.operation.duration"):
        points = histogram_points(reader, name)
        assert points
        assert all(GEN_AI_CONVERSATION_ID not in point.attributes for point in points)


async def test_it_reaches_a_server_process_and_the_proxy(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    instrument()
    span_file = tmp_path / "server.jsonl"
    async with open_session("stdio", span_file=span_file) as session:
        with in_conversation(CONVERSATION):
            await call(session, "ok")
    server = [json.loads(line) for line in span_file.read_text().splitlines()]
    assert tool_calls(server) == [("SERVER", "tools/call ok", CONVERSATION)]

    output = tmp_path / "proxy.jsonl"
    async with proxied_session(output) as session:
        with in_conversation(CONVERSATION):
            await call(session, "ok")
    assert tool_calls(finished(output)) == [("SERVER", "tools/call ok", CONVERSATION)]


def test_report_shows_one_conversations_calls_across_servers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "calls.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesSpanExporter(path)))
    tracer = provider.get_tracer("test")
    for server, conversation in (("a", CONVERSATION), ("b", CONVERSATION), ("b", "another"), ("c", None)):
        attributes = {"mcp.method.name": "tools/call", "gen_ai.tool.name": "t", "mcp.server.name": server}
        if conversation:
            attributes[GEN_AI_CONVERSATION_ID] = conversation
        attributes["mcp.request.outcome"] = "ok"
        tracer.start_span("tools/call t", kind=SpanKind.CLIENT, attributes=attributes).end()
    provider.shutdown()
    assert main(["report", str(path), "--conversation", CONVERSATION, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {row["name"]: row["calls"] for row in rows} == {"a": 1, "b": 1}
