"""Client spans over streamable HTTP on 127.0.0.1: tcp, server address and port, session id."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from tests.conftest import HttpServer, tool_call_spans
from tests.harness import open_http_session
from tests.servers.tools import SERVER_NAME

pytestmark = pytest.mark.anyio


async def test_http_client_span(
    http_server: HttpServer, instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    instrument()
    async with open_http_session(http_server.url) as session:
        await session.list_tools()
        session_id = (await session.call_tool("session", {})).content[0].text
        await session.call_tool("ok", {})
        await session.call_tool("fails", {})
    assert session_id  # handshake-era streamable HTTP has a session
    spans = {span.name: span for span in tool_call_spans(exporter.get_finished_spans())}
    assert sorted(spans) == ["tools/call fails", "tools/call ok", "tools/call session"]
    port = urlsplit(http_server.url).port
    for span in spans.values():
        assert span.attributes["network.transport"] == "tcp"
        assert span.attributes["server.address"] == "127.0.0.1"
        assert span.attributes["server.port"] == port
        assert span.attributes["mcp.session.id"] == session_id
        assert span.attributes["mcp.server.name"] == SERVER_NAME
    assert spans["tools/call ok"].attributes["tool.outcome"] == "ok"
    assert spans["tools/call fails"].attributes["tool.outcome"] == "failed"
    assert spans["tools/call fails"].attributes["error.type"] == "tool_error"
    assert spans["tools/call fails"].status.status_code == StatusCode.ERROR


@pytest.mark.mcp2
async def test_http_2026_era_has_no_session_id(
    http_server: HttpServer, instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    from mcp import Client

    instrument()
    async with Client(http_server.url) as client:
        assert (await client.call_tool("session", {})).content[0].text == ""
    (span,) = tool_call_spans(exporter.get_finished_spans())
    assert span.attributes["mcp.protocol.version"] == "2026-07-28"
    assert span.attributes["network.transport"] == "tcp"
    assert "mcp.session.id" not in span.attributes
