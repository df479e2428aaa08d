"""Notifications as the conventions model them: a CLIENT span for each notification sent and a
SERVER span for each one received, named by its method, parented to the request it concerns
(a cancel's, a progress report's), with no outcome and no duration point; progress and log
messages only with ``trace_progress_and_logs``. And a request the mcp 1.x SDK refuses before any
handler sees it still has its SERVER span. Both sides instrumented in this process, on the
installed major, over the SDK's in-memory transport."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.harness import MCP_MAJOR, open_session
from tests.metrics.test_metrics import histogram_points
from tests.semconv.checker import Span, span_violations
from tests.semconv.test_conventions import spans_of
from tests.servers import highlevel_server

pytestmark = pytest.mark.anyio

OUTCOME_ATTRIBUTES = {"mcp.request.outcome", "error.type", "rpc.response.status_code", "mcp.request.result_type"}


def notifications(spans: list[Span], method: str) -> dict[str, list[Span]]:
    """The spans of ``method`` by kind."""
    found: dict[str, list[Span]] = {"CLIENT": [], "SERVER": []}
    for span in spans:
        if span.attributes["mcp.method.name"] == method:
            found[span.kind].append(span)
    return found


def ids(exporter: InMemorySpanExporter) -> dict[str, tuple[int, int | None]]:
    """(span id, parent span id) of each of our spans, by kind and name."""
    return {
        f"{span.kind.name} {span.name}": (span.context.span_id, span.parent.span_id if span.parent else None)
        for span in exporter.get_finished_spans()
        if span.context is not None
    }


async def test_a_notification_has_a_span_per_side_and_nothing_else(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    reader = InMemoryMetricReader()
    instrument(meter_provider=MeterProvider(metric_readers=[reader]))
    async with open_session("memory") as session:
        await session.list_tools()
    spans = spans_of(exporter)
    initialized = notifications(spans, "notifications/initialized")
    assert [len(initialized["CLIENT"]), len(initialized["SERVER"])] == [1, 1]
    for span in (*initialized["CLIENT"], *initialized["SERVER"]):
        assert span.name == "notifications/initialized"
        assert span.status == "UNSET"
        assert not OUTCOME_ATTRIBUTES & set(span.attributes)  # no answer: no outcome
        assert "jsonrpc.request.id" not in span.attributes
        assert span_violations(span) == []
    if MCP_MAJOR == 2:  # the SDK carries the sender's context in the notification's _meta
        found = ids(exporter)
        assert found["SERVER notifications/initialized"][1] == found["CLIENT notifications/initialized"][0]
    for name in ("mcp.client.operation.duration", "mcp.server.operation.duration"):
        methods = {point.attributes["mcp.method.name"] for point in histogram_points(reader, name)}
        assert methods == {"initialize", "tools/list"}  # no point of a notification


async def test_a_cancel_is_a_child_of_the_call_it_cancels(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    instrument(send_cancel=True)  # mcp 1.x clients tell the server only when asked; 2.x always
    async with open_session("memory") as session:
        with anyio.move_on_after(0.3):
            await session.call_tool("slow", {"seconds": 5})
        with anyio.fail_after(10):  # the server's span of the cancel ends as it is received
            while not notifications(spans_of(exporter), "notifications/cancelled")["SERVER"]:  # noqa: ASYNC110
                await anyio.sleep(0.02)
    found = ids(exporter)
    sent, received = found["CLIENT notifications/cancelled"], found["SERVER notifications/cancelled"]
    assert sent[1] == found["CLIENT tools/call slow"][0]
    if MCP_MAJOR == 2:  # the sender's context in _meta: the sent one's child
        assert received[1] == sent[0]
    else:  # none in _meta: the call it cancels, as the receiver handles it
        assert received[1] == found["SERVER tools/call slow"][0]
    spans = notifications(spans_of(exporter), "notifications/cancelled")
    for span in (*spans["CLIENT"], *spans["SERVER"]):
        assert not OUTCOME_ATTRIBUTES & set(span.attributes)
        assert span.attributes["mcp.server.name"] == "test-server"


@pytest.mark.parametrize("traced", [False, True])
async def test_progress_and_log_messages_only_with_the_setting(
    traced: bool, instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    instrument(trace_progress_and_logs=traced)
    reports: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        reports.append(done)

    async with open_session("memory", highlevel_server.build_server()) as session:
        await session.call_tool("chatty", {}, progress_callback=progress)
    assert reports == [1, 2]  # the application sees the same, traced or not
    spans = spans_of(exporter)
    progress_spans = notifications(spans, "notifications/progress")
    log_spans = notifications(spans, "notifications/message")
    counts = [len(progress_spans["CLIENT"]), len(progress_spans["SERVER"]), len(log_spans["CLIENT"])]
    assert counts == ([2, 2, 1] if traced else [0, 0, 0])
    if traced:
        found = ids(exporter)
        call = found["CLIENT tools/call chatty"][0]
        handled = found["SERVER tools/call chatty"][0]
        # Sent while the tool call is handled: the handler's span is the parent.
        parents = {
            span.context.span_id: span.parent.span_id if span.parent else None for span in exporter.get_finished_spans()
        }
        for span in exporter.get_finished_spans():
            if span.name == "notifications/progress" and span.kind.name == "CLIENT":
                assert parents[span.context.span_id] == handled
            if span.name == "notifications/progress" and span.kind.name == "SERVER" and MCP_MAJOR == 1:
                assert parents[span.context.span_id] == call  # the request its token names
        assert all(span_violations(span) == [] for span in spans)


@pytest.mark.mcp1
async def test_a_request_the_sdk_refuses_before_dispatch_has_its_server_span(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    """mcp 1.x answers params it cannot validate with -32602 in its receive loop, before any
    handler: the caller's fault, recorded as such (no error.type, status UNSET, the code)."""
    from tests.server.test_hostile_input import exchange

    instrument()
    malformed = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": 5}}
    (answer,) = await exchange([malformed])
    assert answer["error"]["code"] == -32602
    (span,) = [s for s in spans_of(exporter) if s.kind == "SERVER" and s.attributes["mcp.method.name"] == "tools/call"]
    assert span.status == "UNSET"
    assert {
        key: span.attributes.get(key)
        for key in ("mcp.request.outcome", "error.type", "rpc.response.status_code", "jsonrpc.request.id")
    } == {
        "mcp.request.outcome": "failed",
        "error.type": None,
        "rpc.response.status_code": "-32602",
        "jsonrpc.request.id": "7",
    }
