"""SERVER spans over streamable HTTP on 127.0.0.1, in a separate instrumented process: client
address, session id, the parent across processes, and how each protocol era cancels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.conftest import HttpServer, tool_call_spans
from tests.harness import open_http_session
from tests.processes import wait_until
from tests.server.test_server_spans import client_cancel

pytestmark = pytest.mark.anyio


def server_span_of(http_server: HttpServer, client_span: ReadableSpan, timeout: float = 5) -> dict[str, Any]:
    """The one SERVER span whose parent is ``client_span`` (waits for the server to end it)."""
    parent = f"0x{client_span.get_span_context().span_id:016x}"

    def children() -> list[dict[str, Any]]:
        return [s for s in http_server.spans() if s["parent_id"] == parent and s["kind"] == "SpanKind.SERVER"]

    wait_until(lambda: bool(children()), timeout, f"the SERVER span under {parent}")
    matches = children()
    assert len(matches) == 1, matches
    return matches[0]


async def test_http_server_spans(
    http_server: HttpServer, instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    instrument()
    async with open_http_session(http_server.url) as session:
        session_id = (await session.call_tool("session", {})).content[0].text
        await session.call_tool("ok", {})
        await session.call_tool("fails", {})
    for client_span in tool_call_spans(exporter.get_finished_spans()):
        span = server_span_of(http_server, client_span)
        attributes = span["attributes"]
        assert span["name"] == client_span.name
        assert span["context"]["trace_id"] == f"0x{client_span.get_span_context().trace_id:032x}"
        assert attributes["network.transport"] == "tcp"
        assert attributes["client.address"] == "127.0.0.1"
        assert isinstance(attributes["client.port"], int)
        assert attributes["mcp.session.id"] == session_id
        assert attributes["jsonrpc.request.id"] == client_span.attributes["jsonrpc.request.id"]
        assert attributes["tool.outcome"] == client_span.attributes["tool.outcome"]  # one string, both sides
        assert attributes.get("error.type") == client_span.attributes.get("error.type")


async def test_http_client_cancel(
    http_server: HttpServer, instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    """2025-era streamable HTTP: the cancel is a notifications/cancelled POST."""
    instrument()
    async with open_http_session(http_server.url) as session:
        await client_cancel(session)
        (client_span,) = tool_call_spans(exporter.get_finished_spans())
        # The cancel POST and closing the session are separate requests; had the session closed
        # first, the server would rightly report a disconnect. Stay until it has seen the cancel.
        span = await anyio.to_thread.run_sync(server_span_of, http_server, client_span)
    assert span["status"]["status_code"] == "UNSET"
    assert span["attributes"]["tool.outcome"] == "cancelled"
    assert span["attributes"]["tool.cancel.reason"] == "client"
    assert client_span.attributes["tool.outcome"] == "cancelled"


@pytest.mark.mcp2
async def test_http_2026_cancel_closes_the_stream(
    http_server: HttpServer, instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    """2026-07-28 streamable HTTP: the client cancels by closing the request's stream."""
    from mcp import Client

    instrument()
    async with Client(http_server.url) as client:
        with anyio.move_on_after(0.3):
            await client.call_tool("slow", {})
    (client_span,) = tool_call_spans(exporter.get_finished_spans())
    span = server_span_of(http_server, client_span)
    assert span["attributes"]["mcp.protocol.version"] == "2026-07-28"
    assert span["status"]["status_code"] == "UNSET"
    assert span["attributes"]["tool.outcome"] == "cancelled"
    assert span["attributes"]["tool.cancel.reason"] == "disconnect"
    assert "mcp.session.id" not in span["attributes"]
