"""The session-duration histograms: one point per session and side, and how the session ended."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from mcp_otel import semconv
from tests.harness import HANDSHAKE_VERSION, open_session
from tests.metrics.test_metrics import histogram_points
from tests.servers.tools import SERVER_NAME

pytestmark = pytest.mark.anyio


class Boom(Exception):
    pass


def instrumented_reader(instrument: Callable[..., Any]) -> InMemoryMetricReader:
    reader = InMemoryMetricReader()
    instrument(meter_provider=MeterProvider(metric_readers=[reader]))
    return reader


def sessions(reader: InMemoryMetricReader, name: str) -> list[tuple[dict[str, Any], int]]:
    return [(dict(point.attributes), point.count) for point in histogram_points(reader, name)]


async def test_one_point_per_session_and_side(instrument: Callable[..., Any]) -> None:
    reader = instrumented_reader(instrument)
    async with open_session("memory") as session:
        await session.call_tool("ok", {})
    expected = {"mcp.server.name": SERVER_NAME, "mcp.protocol.version": HANDSHAKE_VERSION}
    assert sessions(reader, semconv.MCP_CLIENT_SESSION_DURATION) == [(expected, 1)]
    assert sessions(reader, semconv.MCP_SERVER_SESSION_DURATION) == [(expected, 1)]
    for name in (semconv.MCP_CLIENT_SESSION_DURATION, semconv.MCP_SERVER_SESSION_DURATION):
        (point,) = histogram_points(reader, name)
        assert tuple(point.explicit_bounds) == semconv.DURATION_BUCKETS
        assert 0 < point.sum < 30


async def test_a_server_that_went_away_ends_the_session_with_an_error(
    instrument: Callable[..., Any], tmp_path: Path
) -> None:
    reader = instrumented_reader(instrument)
    async with open_session("stdio", span_file=tmp_path / "spans.jsonl") as session:
        with contextlib.suppress(Exception):
            await session.call_tool("die", {})  # the server process exits mid-call
    ((attributes, count),) = sessions(reader, semconv.MCP_CLIENT_SESSION_DURATION)
    assert count == 1
    # The conventions' session attributes (not network.transport: not defined there), and ours.
    assert attributes == {
        "error.type": "connection_closed",
        "mcp.protocol.version": HANDSHAKE_VERSION,
        "mcp.server.name": SERVER_NAME,
    }


async def test_a_session_left_by_an_exception_ended_with_it_and_a_cancel_is_clean(
    instrument: Callable[..., Any],
) -> None:
    import anyio

    reader = instrumented_reader(instrument)

    async def fail_in_session() -> None:
        async with open_session("memory") as session:
            await session.call_tool("ok", {})
            raise Boom

    with pytest.raises(Exception) as raised:  # noqa: PT011 (mcp 2.x raises it in an exception group)
        await fail_in_session()
    assert raised.type is Boom or raised.group_contains(Boom)
    with anyio.move_on_after(0.3):
        async with open_session("memory") as session:
            await session.call_tool("slow", {})
    ended = sorted(
        str(attributes.get("error.type")) for attributes, _ in sessions(reader, semconv.MCP_CLIENT_SESSION_DURATION)
    )
    assert ended == ["Boom", "None"]
