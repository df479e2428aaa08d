"""``ClientSessionGroup`` (both majors) and the server identity override."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.conftest import tool_call_spans
from tests.harness import open_session, stdio_parameters
from tests.servers.tools import SERVER_NAME

pytestmark = pytest.mark.anyio


async def test_session_group_calls_are_traced(instrument: Callable[..., Any], exporter: InMemorySpanExporter) -> None:
    from mcp.client.session_group import ClientSessionGroup

    instrument()
    async with ClientSessionGroup() as group:
        await group.connect_to_server(stdio_parameters())
        await group.call_tool("ok", {})
        await group.call_tool("tool_error", {})
    spans = tool_call_spans(exporter.get_finished_spans())
    summary = [(span.name, span.attributes["tool.outcome"], span.attributes["network.transport"]) for span in spans]
    assert summary == [("tools/call ok", "ok", "pipe"), ("tools/call tool_error", "failed", "pipe")]
    assert all(span.attributes["mcp.server.name"] == SERVER_NAME for span in spans)


async def test_server_identity_can_be_overridden(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    instrument(server_name="weather", server_version="2026.11")
    async with open_session("memory") as session:
        await session.call_tool("ok", {})
    (span,) = tool_call_spans(exporter.get_finished_spans())
    assert span.attributes["mcp.server.name"] == "weather"
    assert span.attributes["mcp.server.version"] == "2026.11"


async def test_long_tool_names_are_cut(instrument: Callable[..., Any], exporter: InMemorySpanExporter) -> None:
    instrument(max_name_length=8)
    async with open_session("memory") as session:
        result = await session.call_tool("x" * 100, {})
    assert result.content[0].text == "ok"  # the test server answers ok to unknown names
    (span,) = tool_call_spans(exporter.get_finished_spans())
    assert span.attributes["gen_ai.tool.name"] == "xxxxxxx…"
    assert span.name == "tools/call xxxxxxx…"
