"""The operation-duration histograms, read back exactly with the SDK's in-memory metric reader."""

from __future__ import annotations

import random
import string
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricsData
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import INVALID_SPAN, SpanKind

from mcp_otel import semconv
from mcp_otel.model.config import Settings
from mcp_otel.model.metrics import CallMetrics, NameBound
from mcp_otel.model.outcome import CallOutcome
from tests.harness import HANDSHAKE_VERSION, open_session
from tests.server.test_server_spans import call, client_cancel
from tests.servers.tools import SERVER_NAME

pytestmark = pytest.mark.anyio


def histogram_points(reader: InMemoryMetricReader | MetricsData | None, name: str) -> list[Any]:
    """The points of histogram ``name``, from a reader (collected now) or collected data."""
    data = reader.get_metrics_data() if isinstance(reader, InMemoryMetricReader) else reader
    return [
        point
        for resource in (data.resource_metrics if data else [])
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == name
        for point in metric.data.data_points
    ]


def tool_call_points(reader: InMemoryMetricReader | MetricsData | None, name: str) -> list[Any]:
    """The points of ``tools/call`` requests (every other request has points of its own)."""
    return [point for point in histogram_points(reader, name) if point.attributes["mcp.method.name"] == "tools/call"]


def counts(points: list[Any]) -> Counter[tuple[Any, ...]]:
    """Calls per (tool, outcome, error.type, rpc.response.status_code), from the histogram counts."""
    result: Counter[tuple[Any, ...]] = Counter()
    for point in points:
        attributes = point.attributes
        key = (
            attributes["gen_ai.tool.name"],
            attributes["tool.outcome"],
            attributes.get("error.type"),
            attributes.get("rpc.response.status_code"),
        )
        result[key] += point.count
    return result


async def scripted_calls(session: Any) -> None:
    for tool in ("ok", "ok", "ok", "tool_error", "tool_error", "rpc_error"):
        await call(session, tool)
    await client_cancel(session)


@pytest.mark.parametrize("sampled", [True, False], ids=["sampled", "all-traces-dropped"])
async def test_duration_histograms(sampled: bool, instrument: Callable[..., Any]) -> None:
    reader = InMemoryMetricReader()
    tracer_provider = None if sampled else TracerProvider(sampler=ALWAYS_OFF)
    settings: dict[str, Any] = {"meter_provider": MeterProvider(metric_readers=[reader])}
    if tracer_provider is not None:
        settings["tracer_provider"] = tracer_provider
    instrument(**settings)
    async with open_session("memory") as session:
        await session.list_tools()
        await scripted_calls(session)

    both_sides = {
        ("ok", "ok", None, None): 3,
        ("tool_error", "failed", "tool_error", None): 2,
        ("slow", "cancelled", None, None): 1,
    }
    # A caller fault: the sender's error, not the receiver's (semconv); both points carry the code.
    expected = {
        semconv.MCP_CLIENT_OPERATION_DURATION: Counter({**both_sides, ("rpc_error", "failed", "-32602", "-32602"): 1}),
        semconv.MCP_SERVER_OPERATION_DURATION: Counter({**both_sides, ("rpc_error", "failed", None, "-32602"): 1}),
    }
    for name in (semconv.MCP_CLIENT_OPERATION_DURATION, semconv.MCP_SERVER_OPERATION_DURATION):
        points = tool_call_points(reader, name)
        assert counts(points) == expected[name], name
        for point in points:
            assert tuple(point.explicit_bounds) == semconv.DURATION_BUCKETS
            assert point.attributes["mcp.request.outcome"] == point.attributes["tool.outcome"]
            assert point.attributes["mcp.server.name"] == SERVER_NAME
            assert point.attributes["mcp.protocol.version"] == HANDSHAKE_VERSION
            # Never per-request or per-session values.
            assert not {"jsonrpc.request.id", "mcp.session.id"} & set(point.attributes)
    data = reader.get_metrics_data()
    for name in expected:
        methods = set()
        for point in histogram_points(data, name):  # execute_tool on tools/call and nothing else
            method = point.attributes["mcp.method.name"]
            methods.add(method)
            assert point.attributes.get("gen_ai.operation.name") == ("execute_tool" if method == "tools/call" else None)
        assert {"tools/call", "tools/list"} <= methods
    units = {
        metric.name: metric.unit
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }
    assert units == {
        semconv.MCP_CLIENT_OPERATION_DURATION: "s",
        semconv.MCP_SERVER_OPERATION_DURATION: "s",
        semconv.MCP_CLIENT_SESSION_DURATION: "s",
        semconv.MCP_SERVER_SESSION_DURATION: "s",
    }


@pytest.mark.parametrize("transport", ["memory", "stdio"])
async def test_each_exemplar_links_a_point_to_its_own_request(
    transport: str, instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    """With the SDK's default exemplar filter, a point's exemplars are spans of its own requests:
    same side, tool and outcome (not the caller's span, nor a span of the other side)."""
    reader = InMemoryMetricReader()
    instrument(meter_provider=MeterProvider(metric_readers=[reader]))
    async with open_session(transport) as session:
        await session.list_tools()
        for tool in ("ok", "tool_error", "ok"):
            await call(session, tool)

    spans = {
        (span.context.trace_id, span.context.span_id): span
        for span in exporter.get_finished_spans()
        if span.attributes and span.attributes.get("mcp.method.name") == "tools/call"
    }
    sides = [(semconv.MCP_CLIENT_OPERATION_DURATION, SpanKind.CLIENT)]
    if transport == "memory":  # over stdio the server records in its own process
        sides.append((semconv.MCP_SERVER_OPERATION_DURATION, SpanKind.SERVER))
    data = reader.get_metrics_data()  # once: a collection hands each exemplar out once
    for name, kind in sides:
        points = tool_call_points(data, name)
        assert sorted(point.attributes["tool.outcome"] for point in points) == ["failed", "ok"], name
        for point in points:
            assert point.exemplars, (name, dict(point.attributes))
            for exemplar in point.exemplars:
                span = spans[(exemplar.trace_id, exemplar.span_id)]
                assert span.kind is kind
                assert span.attributes is not None
                assert span.attributes["gen_ai.tool.name"] == point.attributes["gen_ai.tool.name"]
                assert span.attributes["tool.outcome"] == point.attributes["tool.outcome"]


def test_name_bound_keeps_the_first_n() -> None:
    bound = NameBound(3)
    assert [bound(name) for name in ["a", "b", "a", "c", "d", "b", "e"]] == [
        "a",
        "b",
        "a",
        "c",
        "_OTHER",
        "b",
        "_OTHER",
    ]


def test_ten_thousand_random_tool_names_make_at_most_n_plus_one_values() -> None:
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("test")
    metrics = CallMetrics(meter, Settings(max_metric_names=50))
    generator = random.Random(7)
    for _ in range(10_000):
        name = "".join(generator.choices(string.printable, k=generator.randint(1, 40)))
        attributes = metrics.attributes({"gen_ai.tool.name": name, "mcp.server.name": name[:3]})
        metrics.record(SpanKind.CLIENT, 0.0, attributes, INVALID_SPAN, CallOutcome.ok())
    points = histogram_points(reader, semconv.MCP_CLIENT_OPERATION_DURATION)
    assert len({point.attributes["gen_ai.tool.name"] for point in points}) == 51
    assert len({point.attributes["mcp.server.name"] for point in points}) <= 51
    assert sum(point.count for point in points) == 10_000
