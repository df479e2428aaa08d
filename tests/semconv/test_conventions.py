"""Every span and metric point of a scenario of every request kind, both directions, checked
against the MCP semantic conventions' rules (``mcp_model.json``): zero violations. In memory on
the installed SDK major (and on mcp 2.x over its 2026-07-28 direct path), with both sides
instrumented in this process; the stdio proxy's own check is in tests/proxy/test_stdio_proxy.py.
The checker itself is shown to catch each kind of violation, and its documented differences are
the ones docs/semconv.md lists."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_otel import semconv
from tests.semconv.checker import Point, Span, model, point_violations, same_as_spans, span_violations
from tests.test_requests import CASES, DIRECT, MEMORY, TRANSPORTS, Agent, session_to

pytestmark = pytest.mark.anyio

DOCS = Path(__file__).resolve().parents[2] / "docs" / "semconv.md"


def spans_of(exporter: InMemorySpanExporter) -> list[Span]:
    """Our spans (other instrumentations' are not ours to check)."""
    return [
        Span(
            span.name,
            span.kind.name,
            span.status.status_code.name,
            span.status.description,
            dict(span.attributes or {}),
        )
        for span in exporter.get_finished_spans()
        if span.instrumentation_scope is not None and span.instrumentation_scope.name == semconv.INSTRUMENTATION_SCOPE
    ]


def points_of(reader: InMemoryMetricReader) -> list[Point]:
    data = reader.get_metrics_data()
    return [
        Point(metric.name, dict(point.attributes or {}))
        for resource in (data.resource_metrics if data else [])
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name.startswith("mcp.")
        for point in metric.data.data_points
    ]


@pytest.mark.parametrize("transport", [t for t in TRANSPORTS if t in (MEMORY, DIRECT)])
async def test_every_request_kind_follows_the_conventions(
    transport: str, instrument: Callable[..., Any], exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    reader = InMemoryMetricReader()
    instrument(meter_provider=MeterProvider(metric_readers=[reader]))
    ran = set()
    for case in CASES:
        if case.applies(transport):
            continue
        agent = Agent()
        async with session_to(transport, agent, tmp_path / "unused.jsonl") as session:
            await case.drive(session, agent)
        ran.add(case.method)
    spans, points = spans_of(exporter), points_of(reader)
    # Every kind the scenario has, checked: each request kind both ways, and the errors.
    assert {span.attributes["mcp.method.name"] for span in spans} >= ran | {"initialize"} - (
        {"initialize"} if transport == DIRECT else set()
    )
    assert {span.kind for span in spans} == {"CLIENT", "SERVER"}
    assert any("rpc.response.status_code" in span.attributes for span in spans)
    assert {point.metric for point in points} >= {
        semconv.MCP_CLIENT_OPERATION_DURATION,
        semconv.MCP_SERVER_OPERATION_DURATION,
    }
    violations = [v for span in spans for v in span_violations(span)]
    violations += [v for point in points for v in point_violations(point)]
    violations += same_as_spans(spans, points)
    assert violations == []


# --- the checker can fail -----------------------------------------------------------------------

TOOL_CALL = {
    "mcp.method.name": "tools/call",
    "gen_ai.tool.name": "t",
    "gen_ai.operation.name": "execute_tool",
    "jsonrpc.request.id": "1",
}


@pytest.mark.parametrize(
    ("span", "violation"),
    [
        # The caller's fault recorded as the server's (what mcp-otel did before issue 49).
        (
            Span(
                "tools/call t",
                "SERVER",
                "UNSET",
                None,
                {**TOOL_CALL, "error.type": "-32602", "rpc.response.status_code": "-32602"},
            ),
            "error.type '-32602' with the operation not failed",
        ),
        (
            Span(
                "tools/call t",
                "SERVER",
                "ERROR",
                None,
                {**TOOL_CALL, "error.type": "-32602", "rpc.response.status_code": "-32602"},
            ),
            "code -32602 is the caller's",
        ),
        (
            Span("tools/call t", "CLIENT", "UNSET", None, {**TOOL_CALL, "rpc.response.status_code": "-32602"}),
            "code -32602 is an error on this side",
        ),
        (
            Span("tools/call t", "SERVER", "UNSET", None, {**TOOL_CALL, "rpc.response.status_code": "-32603"}),
            "code -32603 is an error on this side",
        ),
        (
            Span(
                "tools/list",
                "CLIENT",
                "UNSET",
                None,
                {"mcp.method.name": "tools/list", "gen_ai.operation.name": "execute_tool", "jsonrpc.request.id": "1"},
            ),
            "execute_tool on tools/call and on nothing else",
        ),
        (Span("tools/call", "CLIENT", "UNSET", None, {**TOOL_CALL}), "the name is not"),
        (
            Span("tools/call t", "SERVER", "UNSET", None, {**TOOL_CALL, "server.address": "h"}),
            "server.address is not defined",
        ),
        (
            Span("tools/call t", "CLIENT", "UNSET", None, {**TOOL_CALL, "mcp.made.up": "x"}),
            "mcp.made.up is not defined",
        ),
        (
            Span(
                "tools/call t",
                "CLIENT",
                "UNSET",
                None,
                {**TOOL_CALL, "mcp.protocol.version": "2026-07-28", "mcp.session.id": "s"},
            ),
            "mcp.session.id must not be set",
        ),
        (
            Span(
                "resources/read",
                "CLIENT",
                "UNSET",
                None,
                {"mcp.method.name": "resources/read", "jsonrpc.request.id": "1"},
            ),
            "mcp.resource.uri",
        ),
        (Span("tools/call t", "CLIENT", "ERROR", "x", {**TOOL_CALL}), "error.type None with the operation failed"),
    ],
)
def test_the_checker_finds_each_violation(span: Span, violation: str) -> None:
    assert any(violation in found for found in span_violations(span)), span_violations(span)


def test_the_checker_finds_points_that_disagree_with_their_spans() -> None:
    span = Span(
        "tools/call t",
        "CLIENT",
        "ERROR",
        None,
        {**TOOL_CALL, "mcp.request.outcome": "failed", "error.type": "-32603", "rpc.response.status_code": "-32603"},
    )
    point = Point(
        semconv.MCP_CLIENT_OPERATION_DURATION,
        {
            "mcp.method.name": "tools/call",
            "gen_ai.operation.name": "execute_tool",
            "mcp.request.outcome": "failed",
            "error.type": "-32603",
        },
    )
    assert span_violations(span) == []
    assert same_as_spans([span], [point]) != []  # its status code left out of the point
    session = Point(semconv.MCP_SERVER_SESSION_DURATION, {"network.transport": "pipe"})
    (found,) = point_violations(session)
    assert found.endswith(f"{session.metric}: network.transport is not defined there")


def test_the_documented_differences_are_the_checkers() -> None:
    """docs/semconv.md's table of differences names each one the checker allows, and no other."""
    documented = set(re.findall(r"^\| `([a-z0-9-]+)` \|", DOCS.read_text(), re.MULTILINE))
    assert documented == set(model()["differences"])
    for extension in model()["extensions"]:
        assert f"`{extension}`" in DOCS.read_text(), extension
