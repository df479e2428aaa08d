"""Trace context in params._meta: ours on the wire, the caller's meta kept, SDK spans suppressed."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.conftest import tool_call_spans
from tests.harness import MCP_MAJOR, TRANSPORTS, open_session

pytestmark = pytest.mark.anyio


def traceparent_ids(meta: dict[str, Any]) -> tuple[str, str]:
    _version, trace_id, span_id, _flags = meta["traceparent"].split("-")
    return trace_id, span_id


async def whoami(session: Any, **kwargs: Any) -> dict[str, Any]:
    result = await session.call_tool("whoami", {}, **kwargs)
    return dict(json.loads(result.content[0].text))


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_wire_carries_our_span_and_the_callers_meta(
    transport: str, instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    instrument()
    caller_meta = {"example.com/request": "r-1"}
    async with open_session(transport) as session:
        meta = await whoami(session, meta=caller_meta)
    assert caller_meta == {"example.com/request": "r-1"}  # the caller's dict is not changed
    assert meta["example.com/request"] == "r-1"
    (span,) = tool_call_spans(exporter.get_finished_spans())
    context = span.get_span_context()
    assert traceparent_ids(meta) == (f"{context.trace_id:032x}", f"{context.span_id:016x}")


async def test_the_wire_carries_the_callers_current_trace(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    from opentelemetry import trace

    instrument()
    tracer = trace.get_tracer("agent")
    async with open_session("memory") as session:
        with tracer.start_as_current_span("agent step") as parent:
            meta = await whoami(session)
    (span,) = tool_call_spans(exporter.get_finished_spans())
    assert span.parent is not None
    assert span.parent.span_id == parent.get_span_context().span_id
    assert traceparent_ids(meta)[0] == f"{parent.get_span_context().trace_id:032x}"


@pytest.mark.mcp1
async def test_propagation_can_be_turned_off(instrument: Callable[..., Any]) -> None:
    instrument(propagate=False)
    async with open_session("memory") as session:
        meta = await whoami(session)
    assert "traceparent" not in meta


@pytest.mark.mcp2
@pytest.mark.parametrize("transport", ["memory", "stdio"])
async def test_sdk_client_spans_can_be_kept(
    transport: str, instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    instrument(sdk_spans="keep")
    async with open_session(transport) as session:
        meta = await whoami(session)
    spans = tool_call_spans(exporter.get_finished_spans())
    ours = [span for span in spans if span.instrumentation_scope.name == "mcp_otel"]
    theirs = [span for span in spans if span.instrumentation_scope.name == "mcp-python-sdk"]
    assert len(ours) == 1
    assert len(theirs) == 1
    assert theirs[0].name == "MCP send tools/call whoami"
    assert theirs[0].parent is not None
    assert theirs[0].parent.span_id == ours[0].get_span_context().span_id
    # The SDK injects its own span's context over ours.
    assert traceparent_ids(meta)[1] == f"{theirs[0].get_span_context().span_id:016x}"
    assert ours[0].attributes["jsonrpc.request.id"] == theirs[0].attributes["jsonrpc.request.id"]


@pytest.mark.mcp2
async def test_uninstrumented_mcp2_makes_its_own_client_span(exporter: InMemorySpanExporter) -> None:
    """The baseline the suppression is measured against: without us, mcp 2.x has a span."""
    async with open_session("memory") as session:
        await whoami(session)
    names = [span.name for span in tool_call_spans(exporter.get_finished_spans())]
    assert names == ["MCP send tools/call whoami"]


def test_harness_major_matches_installed_sdk() -> None:
    import mcp

    assert (MCP_MAJOR == 2) == hasattr(mcp, "Client")
