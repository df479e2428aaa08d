"""fastmcp's ``Client`` (3.x on mcp 1.x, 4.x on mcp 2.x): one CLIENT span per call, ours, with
the right outcome.

fastmcp makes a CLIENT span of its own around ``ClientSession.call_tool``; by default it is
suppressed: through fastmcp 4.x's own ``suppress_fastmcp_telemetry``, and on 3.x (which has no
such switch) by a non-recording span in its place.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from tests.conftest import tool_call_spans
from tests.harness import HAS_FASTMCP, MCP_MAJOR

if HAS_FASTMCP:
    from tests.servers.fastmcp_server import SERVER_NAME, build_server

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not HAS_FASTMCP, reason="fastmcp is not installed"),
]


async def run(tool: str, **kwargs: Any) -> Any:
    from fastmcp import Client

    async with Client(build_server()) as client:
        try:
            return await client.call_tool(tool, {}, **kwargs)
        except Exception as exc:
            return exc


@pytest.mark.parametrize(
    ("tool", "kwargs", "status", "outcome", "error_type"),
    [
        ("ok", {}, StatusCode.UNSET, "ok", None),
        ("fails", {}, StatusCode.ERROR, "failed", "tool_error"),
        ("fails", {"raise_on_error": False}, StatusCode.ERROR, "failed", "tool_error"),
        ("slow", {"timeout": 0.3}, StatusCode.ERROR, "failed", "timeout"),
    ],
)
async def test_fastmcp_client_calls(
    tool: str,
    kwargs: dict[str, Any],
    status: StatusCode,
    outcome: str,
    error_type: str | None,
    instrument: Callable[..., Any],
    exporter: InMemorySpanExporter,
) -> None:
    uninstrumented = await run(tool, **kwargs)
    exporter.clear()
    instrument()
    observed = await run(tool, **kwargs)
    assert type(observed) is type(uninstrumented)
    assert str(observed) == str(uninstrumented)

    spans = tool_call_spans(exporter.get_finished_spans())
    assert [span.instrumentation_scope.name for span in spans] == ["mcp_otel"]
    (span,) = spans
    assert span.name == f"tools/call {tool}"
    assert span.status.status_code == status
    assert span.attributes["tool.outcome"] == outcome
    assert span.attributes.get("error.type") == error_type
    assert span.attributes["mcp.server.name"] == SERVER_NAME


async def test_fastmcp_client_cancel(instrument: Callable[..., Any], exporter: InMemorySpanExporter) -> None:
    from fastmcp import Client

    instrument()
    async with Client(build_server()) as client:
        task = asyncio.ensure_future(client.call_tool("slow", {}))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    (span,) = tool_call_spans(exporter.get_finished_spans())
    assert span.status.status_code == StatusCode.UNSET
    assert span.attributes["tool.outcome"] == "cancelled"
    assert span.attributes["tool.cancel.reason"] == "caller"
    assert "error.type" not in span.attributes


async def test_fastmcp_wire_context_is_ours(instrument: Callable[..., Any], exporter: InMemorySpanExporter) -> None:
    instrument()
    result = await run("whoami")
    meta = json.loads(result.content[0].text)
    (span,) = tool_call_spans(exporter.get_finished_spans())
    assert meta["traceparent"].split("-")[2] == f"{span.get_span_context().span_id:016x}"


async def test_fastmcp_spans_can_be_kept(instrument: Callable[..., Any], exporter: InMemorySpanExporter) -> None:
    instrument(sdk_spans="keep")
    await run("ok")
    scopes = sorted(span.instrumentation_scope.name for span in tool_call_spans(exporter.get_finished_spans()))
    # mcp 1.x makes no spans of its own.
    assert scopes == (["fastmcp", "mcp_otel"] if MCP_MAJOR == 1 else ["fastmcp", "mcp-python-sdk", "mcp_otel"])


async def test_a_fastmcp_proxy_makes_one_span_per_hop(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    """agent -> fastmcp proxy -> fastmcp server, in one process: one CLIENT and one SERVER span per
    hop, ours (the proxy's own ``client_span`` toward its backend suppressed too), in one trace."""
    from fastmcp import Client
    from fastmcp.server import create_proxy

    instrument()
    async with Client(create_proxy(build_server())) as client:
        await client.call_tool("ok", {})
    spans = tool_call_spans(exporter.get_finished_spans()) + tool_call_spans(
        exporter.get_finished_spans(), SpanKind.SERVER
    )
    assert sorted((span.kind.name, span.instrumentation_scope.name) for span in spans) == [
        ("CLIENT", "mcp_otel"),
        ("CLIENT", "mcp_otel"),
        ("SERVER", "mcp_otel"),
        ("SERVER", "mcp_otel"),
    ]
    by_parent = {span.parent.span_id if span.parent else None: span for span in spans}
    chain = [by_parent[None]]
    while chain[-1].context.span_id in by_parent:
        chain.append(by_parent[chain[-1].context.span_id])
    assert [span.kind.name for span in chain] == ["CLIENT", "SERVER", "CLIENT", "SERVER"]
    assert {span.context.trace_id for span in spans} == {chain[0].context.trace_id}
    assert {span.attributes["tool.outcome"] for span in spans} == {"ok"}
