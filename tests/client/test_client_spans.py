"""The client-side table of "errors we report", on the installed mcp major, over every transport.

Each case runs twice on fresh sessions, without and with instrumentation: the caller must see
the same thing both times, and with instrumentation it must receive the very object the SDK
returned or raised. Then exactly one CLIENT span must describe the call, with exact values.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import wrapt
from mcp.client.session import ClientSession
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.client.scenarios import CASES, Case, drive, expectation
from tests.conftest import tool_call_spans
from tests.harness import HANDSHAKE_VERSION, MCP_MAJOR, TRANSPORTS, open_session
from tests.servers.tools import SERVER_NAME, SERVER_VERSION

pytestmark = pytest.mark.anyio


@contextmanager
def recording_sdk_results() -> Iterator[list[Any]]:
    """Record what the real ``ClientSession.call_tool`` returned or raised, from a wrapper that
    sits beneath ours (it is installed before instrumenting)."""
    records: list[Any] = []

    async def recorder(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            records.append(exc)
            raise
        records.append(result)
        return result

    original = ClientSession.__dict__["call_tool"]
    ClientSession.call_tool = wrapt.FunctionWrapper(original, recorder)  # type: ignore[method-assign]
    try:
        yield records
    finally:
        ClientSession.call_tool = original  # type: ignore[method-assign]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
async def test_client_span(
    case: Case, transport: str, instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    if not case.applies(transport):
        pytest.skip(f"{case.id} does not apply to mcp {MCP_MAJOR}.x over {transport}")
    expect = expectation(case, transport)

    async with open_session(transport) as session:
        await session.list_tools()
        uninstrumented = await drive(session, case)
    exporter.clear()

    with recording_sdk_results() as records:
        instrumentor = instrument()
        async with open_session(transport) as session:
            await session.list_tools()
            observed = await drive(session, case)
        instrumentor.uninstrument()  # before the recorder beneath it goes

    # Transparent: the same observation, and the very object the SDK produced.
    assert observed.comparable() == uninstrumented.comparable()
    assert len(records) == 1
    if observed.cancelled:
        assert isinstance(records[0], asyncio.CancelledError)
    elif observed.raised is not None:
        assert observed.raised is records[0]
    else:
        assert observed.returned is records[0]

    spans = tool_call_spans(exporter.get_finished_spans())
    assert len(spans) == 1, [span.name for span in spans]
    span = spans[0]
    attributes = dict(span.attributes or {})
    assert span.instrumentation_scope is not None
    assert span.instrumentation_scope.name == "mcp_otel"
    assert span.name == f"tools/call {case.tool}"
    assert span.status.status_code == expect.status
    assert span.status.description == expect.description
    assert attributes.get("error.type") == expect.error_type
    assert attributes.get("rpc.response.status_code") == expect.rpc_code
    assert attributes["tool.outcome"] == expect.outcome
    assert attributes.get("tool.cancel.reason") == expect.cancel_reason

    # The attributes every client span carries on this transport.
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["gen_ai.tool.name"] == case.tool
    assert attributes["mcp.server.name"] == SERVER_NAME
    assert attributes["mcp.server.version"] == SERVER_VERSION
    assert attributes["mcp.protocol.version"] == ("2026-07-28" if transport == "direct" else HANDSHAKE_VERSION)
    assert attributes.get("network.transport") == ("pipe" if transport == "stdio" else None)
    assert "mcp.session.id" not in attributes
    assert "server.address" not in attributes
    if transport == "direct":
        assert "jsonrpc.request.id" not in attributes  # no wire, no id
    else:
        assert str(attributes["jsonrpc.request.id"]).isdigit()
