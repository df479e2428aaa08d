"""Notifications as the conventions model them: a CLIENT span for each notification sent and a
SERVER span for each one received, named by its method, parented to the request it concerns
(a cancel's, a progress report's), with no outcome and no duration point; progress and log
messages only with ``trace_progress_and_logs``; one SERVER span of each on an mcp 2.x server (the
SDK's own skipped); the agent's ``notifications/initialized`` carries its context. And a request
the SDK refuses before any handler sees it still has its SERVER span, named by its tool. Both
sides instrumented in this process, on the installed major, over the SDK's in-memory transport;
where the receiver's context must not leak from the sender's (cancels, the handshake), a server
subprocess over stdio (of either major, MCP_OTEL_PEER_PYTHON naming the other's Python)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.harness import MCP_MAJOR, open_session, stdio_parameters
from tests.metrics.test_metrics import histogram_points
from tests.node.conftest import Span as NodeSpan
from tests.node.conftest import python_file_spans
from tests.processes import unavailable
from tests.semconv.checker import Point, Span, point_violations, span_violations
from tests.semconv.test_conventions import spans_of
from tests.servers import highlevel_server

pytestmark = pytest.mark.anyio

OUTCOME, TOOL, CODE = "mcp.request.outcome", "gen_ai.tool.name", "rpc.response.status_code"
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
    # No context in its _meta (neither major puts one there): the call it cancels, as the receiver
    # handles it (mcp 2.x's dispatcher cancels the handler before it hands the notification on).
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


@pytest.mark.mcp2
@pytest.mark.parametrize("sdk_spans", ["suppress", "keep"])
async def test_a_cancel_without_trace_context_has_one_span_on_an_mcp2_server(
    sdk_spans: str, tmp_path: Path, instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    """An mcp 2.x server (stdio subprocess, its own SDK's OpenTelemetryMiddleware on) receives the
    Python client's cancel of a call it stopped waiting for, without trace context in ``_meta``:
    one SERVER span of it (ours; the SDK's own too only with ``sdk_spans=keep``), the child of
    the cancelled call's SERVER span, in its trace."""
    span_file = tmp_path / "server.jsonl"
    parameters = stdio_parameters("tests.servers.v2_server", span_file)
    parameters.env["OTEL_INSTRUMENTATION_MCP_SDK_SPANS"] = sdk_spans
    instrument()
    from mcp.client.stdio import stdio_client  # looked up after instrumenting

    async with (
        stdio_client(parameters, errlog=sys.stderr) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        with anyio.move_on_after(0.3):
            await session.call_tool("slow", {"seconds": 5})
        with anyio.fail_after(10):  # the cancel is written as it is received
            while not [s for s in _file_spans(span_file) if s.name == "notifications/cancelled"]:  # noqa: ASYNC110
                await anyio.sleep(0.02)
    server_spans = _file_spans(span_file)
    (cancelled_call,) = [  # ours (with sdk_spans=keep, the SDK's own too: without an outcome)
        s for s in server_spans if (s.kind, s.name) == ("SERVER", "tools/call slow") and OUTCOME in s.attributes
    ]
    assert (cancelled_call.attributes[OUTCOME], cancelled_call.attributes["mcp.request.cancel.reason"]) == (
        "cancelled",
        "client",
    )
    received = [s for s in server_spans if s.name == "notifications/cancelled"]
    (ours,) = [s for s in received if s.parent_id == cancelled_call.span_id]
    assert (ours.kind, ours.trace_id, ours.status) == ("SERVER", cancelled_call.trace_id, "UNSET")
    assert (ours.attributes["mcp.method.name"], ours.attributes["mcp.server.name"]) == (
        "notifications/cancelled",
        "test-server",
    )
    sdk = [(s.kind, s.trace_id, s.parent_id) for s in received if s is not ours]
    # The SDK's own only when kept: inside ours.
    assert sdk == ([] if sdk_spans == "suppress" else [("SERVER", ours.trace_id, ours.span_id)])


def _file_spans(path: Path) -> list[NodeSpan]:
    """The spans the server wrote so far."""
    return python_file_spans(path) if path.exists() else []


async def test_a_tools_call_refused_before_its_handler_names_its_tool(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    """A ``tools/call`` whose arguments are not an object: mcp 1.x refuses it -32602 in its receive
    loop, before any handler; mcp 2.x in its own validation of the params. On both its SERVER span
    and its duration point name the tool the request names, bounded by ``max_name_length``, and
    follow the conventions."""
    from tests.server.test_hostile_input import exchange

    reader = InMemoryMetricReader()
    instrument(meter_provider=MeterProvider(metric_readers=[reader]), max_name_length=16)
    refused = [
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "ok", "arguments": "not an object"}},
        {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "n" * 10_000, "arguments": [1]}},
    ]
    answers = await exchange(refused)
    assert [(answer["id"], answer["error"]["code"]) for answer in answers] == [(7, -32602), (8, -32602)]
    cut = "n" * 15 + "…"
    spans = [s for s in spans_of(exporter) if s.kind == "SERVER" and s.attributes["mcp.method.name"] == "tools/call"]
    assert [
        (
            s.name,
            s.status,
            *(s.attributes.get(key) for key in (TOOL, OUTCOME, "error.type", CODE, "jsonrpc.request.id")),
        )
        for s in spans
    ] == [
        ("tools/call ok", "UNSET", "ok", "failed", None, "-32602", "7"),
        (f"tools/call {cut}", "UNSET", cut, "failed", None, "-32602", "8"),
    ]
    points = [
        Point("mcp.server.operation.duration", dict(point.attributes))
        for point in histogram_points(reader, "mcp.server.operation.duration")
        if point.attributes["mcp.method.name"] == "tools/call"
    ]
    assert sorted((p.attributes.get(TOOL), p.attributes[OUTCOME], p.attributes.get(CODE)) for p in points) == [
        (cut, "failed", "-32602"),
        ("ok", "failed", "-32602"),
    ]
    assert [v for s in spans for v in span_violations(s)] + [v for p in points for v in point_violations(p)] == []


PEER_PYTHON = os.environ.get("MCP_OTEL_PEER_PYTHON")
OTHER_MAJOR = 3 - MCP_MAJOR


@pytest.mark.parametrize("server_major", [MCP_MAJOR, OTHER_MAJOR])
async def test_the_agents_initialized_notification_is_the_parent_of_the_servers_span(
    server_major: int, tmp_path: Path, instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    """The agent's ``notifications/initialized`` (sent by the SDK without params) carries its CLIENT
    span's context in ``params._meta``: a Python server of either major (stdio subprocess) accepts
    it as it is (nothing dropped, the handshake completes: the call after it is served) and its
    one SERVER span of it is that span's child."""
    if server_major != MCP_MAJOR and not PEER_PYTHON:
        unavailable("MCP_OTEL_PEER_PYTHON (the other major's python) not set")
    span_file, server_log = tmp_path / "server.jsonl", tmp_path / "server.log"
    python = sys.executable if server_major == MCP_MAJOR else PEER_PYTHON
    parameters = stdio_parameters(f"tests.servers.v{server_major}_server", span_file, python=python)
    instrument()
    from mcp.client.stdio import stdio_client  # looked up after instrumenting

    with server_log.open("w") as errlog:  # the server's log, read after
        async with (
            stdio_client(parameters, errlog=errlog) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            assert [content.text for content in (await session.call_tool("ok", {})).content] == ["ok"]
    (sent,) = [s for s in exporter.get_finished_spans() if s.name == "notifications/initialized"]
    received = [s for s in _file_spans(span_file) if s.name == "notifications/initialized"]
    assert [(s.kind, s.trace_id, s.parent_id) for s in received] == [
        ("SERVER", f"{sent.context.trace_id:032x}", f"{sent.context.span_id:016x}")
    ]
    assert "notifications/initialized" not in server_log.read_text()  # not dropped, nor warned of
