"""A client request's span and point say what its session knows of its server now: the facts
a handshake settled (kept per session, so later requests do not read them again), replaced by
the next handshake, and nothing kept once the session closes."""

from __future__ import annotations

import gc
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_otel import semconv
from tests.conftest import tool_call_spans
from tests.harness import HANDSHAKE_VERSION, MCP_MAJOR, build_server
from tests.metrics.test_metrics import tool_call_points
from tests.metrics.test_session_metrics import instrumented_reader
from tests.servers.tools import SERVER_NAME, SERVER_VERSION

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def session_and_options() -> AsyncIterator[tuple[ClientSession, Any]]:
    """A session to the test server run by hand over memory streams, and the initialization
    options it answers ``initialize`` with (the very object: a test may change them)."""
    from mcp.shared.memory import create_client_server_memory_streams

    server = build_server()
    options = server.create_initialization_options()
    async with (
        create_client_server_memory_streams() as (client_streams, server_streams),
        anyio.create_task_group() as group,
    ):
        group.start_soon(server.run, server_streams[0], server_streams[1], options)
        async with ClientSession(client_streams[0], client_streams[1]) as session:
            await session.initialize()
            yield session, options
        group.cancel_scope.cancel()


def identities(exporter: InMemorySpanExporter) -> list[tuple[Any, Any]]:
    """(server name, server version) of each tools/call CLIENT span, in order."""
    return [
        (span.attributes["mcp.server.name"], span.attributes["mcp.server.version"])
        for span in tool_call_spans(exporter.get_finished_spans())
    ]


@pytest.mark.skipif(
    MCP_MAJOR != 1, reason="mcp 2.x answers every initialize with the identity its connection opened with"
)
async def test_a_second_handshake_is_what_later_requests_say(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    reader = instrumented_reader(instrument)
    async with session_and_options() as (session, options):
        await session.call_tool("ok", {})
        await session.call_tool("ok", {})  # the session's facts kept: the same
        options.server_name, options.server_version = "renamed-server", "10.0"
        await session.initialize()
        await session.call_tool("ok", {})
        await session.call_tool("ok", {})

    assert identities(exporter) == [(SERVER_NAME, SERVER_VERSION)] * 2 + [("renamed-server", "10.0")] * 2
    points = tool_call_points(reader, semconv.MCP_CLIENT_OPERATION_DURATION)
    assert sorted((point.attributes["mcp.server.name"], point.count) for point in points) == [
        ("renamed-server", 2),
        (SERVER_NAME, 2),
    ]
    assert {point.attributes["mcp.protocol.version"] for point in points} == {HANDSHAKE_VERSION}


async def test_requests_after_the_handshake_say_its_facts_and_a_closed_session_is_not_kept(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    instrument()
    async with session_and_options() as (session, _):
        for _ in range(3):
            await session.call_tool("ok", {})
        closed = weakref.ref(session)
    del session
    gc.collect()

    assert identities(exporter) == [(SERVER_NAME, SERVER_VERSION)] * 3
    assert {span.attributes["mcp.protocol.version"] for span in tool_call_spans(exporter.get_finished_spans())} == {
        HANDSHAKE_VERSION
    }
    assert closed() is None  # what mcp-otel kept of it does not keep it alive
