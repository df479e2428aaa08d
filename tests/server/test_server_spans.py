"""The server-side table of "errors we report", for the lowlevel test server on the installed major,
in memory (same process) and as a stdio subprocess (its spans come back through a span file).

Every case asserts the one SERVER span of the call: status, description, error.type,
rpc.response.status_code, tool.outcome, tool.cancel.reason, and that its parent is the client's
span (one trace across the wire).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.conftest import tool_call_spans
from tests.harness import (
    MCP_MAJOR,
    SERVER_OUTLIVES_CLOSED_TRANSPORT,
    TRANSPORTS,
    build_server,
    cancel_notification,
    close_client_stream,
    open_session,
    read_timeout,
    stoppable_memory_session,
)
from tests.servers.span_file import span_dict
from tests.servers.tools import SERVER_NAME, SERVER_VERSION

pytestmark = pytest.mark.anyio


@dataclass(frozen=True)
class Expect:
    status: str  # UNSET | ERROR
    outcome: str
    description: str | None = None
    error_type: str | None = None
    rpc_code: str | None = None
    cancel_reason: str | None = None


OK = Expect("UNSET", "ok")
CLIENT_CANCEL = Expect("UNSET", "cancelled", cancel_reason="client")
DISCONNECT = Expect("UNSET", "cancelled", cancel_reason="disconnect")
# The server process was stopped before the handler ended (SERVER_OUTLIVES_CLOSED_TRANSPORT).
NO_SPAN = Expect("", "")


def _disconnect(transport: str) -> Expect:
    return NO_SPAN if transport == "stdio" and SERVER_OUTLIVES_CLOSED_TRANSPORT else DISCONNECT


def client_request_id(exporter: InMemorySpanExporter) -> int:
    """The id of the last tools/call this client made (from its own span)."""
    return int(tool_call_spans(exporter.get_finished_spans())[-1].attributes["jsonrpc.request.id"])


async def call(session: Any, tool: str, arguments: dict[str, Any] | None = None, **kwargs: Any) -> None:
    with contextlib.suppress(Exception):
        await session.call_tool(tool, arguments or {}, **kwargs)


async def client_cancel(session: Any, tool: str = "slow") -> None:
    """The client cancels the call: mcp 2.x sends notifications/cancelled by itself; on mcp 1.x
    the client sends it by hand (1.x clients never do)."""
    if MCP_MAJOR == 2:
        with anyio.move_on_after(0.3):
            await session.call_tool(tool, {})
        return
    task = asyncio.ensure_future(call(session, tool))
    await asyncio.sleep(0.3)
    await session.send_notification(cancel_notification(session._request_id - 1))
    await task


async def stubborn(session: Any) -> None:
    await client_cancel(session, "stubborn")
    await asyncio.sleep(1.2)  # the handler finishes; the SDK does not answer a cancelled request


async def disconnect(session: Any) -> None:
    """The client goes away mid-call without cancelling: its stream to the server closes first
    (so not even mcp 2.x's courtesy cancel can go out), then it stops waiting and hangs up."""
    task = asyncio.ensure_future(call(session, "slow"))
    await asyncio.sleep(0.3)
    await close_client_stream(session)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


@dataclass(frozen=True)
class ServerCase:
    id: str
    tool: str
    drive: Callable[[Any, InMemorySpanExporter], Awaitable[None]]
    expect: Callable[[str], Expect | None]  # transport -> expectation, None: not applicable


def _same(expectation: Expect) -> Callable[[str], Expect | None]:
    return lambda transport: expectation


def _crash(transport: str) -> Expect:
    # The handler's message is not recorded (test_privacy.py). Code 0 is SDK-local: no
    # rpc.response.status_code.
    return (
        Expect("ERROR", "failed", None, "-32603", "-32603")
        if transport == "direct"
        else Expect("ERROR", "failed", None, "0")
    )


def _timeout(transport: str) -> Expect:
    # mcp 2.x clients cancel what they stop waiting for; mcp 1.x clients send nothing, so the
    # handler runs until the test closes the session.
    return CLIENT_CANCEL if MCP_MAJOR == 2 else _disconnect(transport)


async def _after_response(session: Any, exporter: InMemorySpanExporter) -> None:
    await session.call_tool("ok", {})
    await session.send_notification(cancel_notification(client_request_id(exporter)))
    await session.call_tool("whoami", {})  # the server has processed the cancel by now


SERVER_CASES = [
    ServerCase("ok", "ok", lambda s, e: call(s, "ok"), _same(OK)),
    ServerCase(
        "tool_error",
        "tool_error",
        lambda s, e: call(s, "tool_error"),
        _same(Expect("ERROR", "failed", None, "tool_error")),
    ),
    ServerCase(
        "caller_fault",
        "rpc_error",
        lambda s, e: call(s, "rpc_error"),
        _same(Expect("UNSET", "failed", None, None, "-32602")),
    ),
    ServerCase(
        "server_fault",
        "server_error",
        lambda s, e: call(s, "server_error"),
        _same(Expect("ERROR", "failed", None, "-32603", "-32603")),
    ),
    ServerCase("crash", "crash", lambda s, e: call(s, "crash"), _crash),
    ServerCase("client_cancel", "slow", lambda s, e: client_cancel(s), _same(CLIENT_CANCEL)),
    ServerCase("timeout", "slow", lambda s, e: call(s, "slow", read_timeout_seconds=read_timeout(0.3)), _timeout),
    ServerCase(
        "cancel_after_response",
        "ok",
        _after_response,
        lambda transport: None if transport == "direct" else OK,
    ),
    # mcp 1.30 crashes the server on this race with or without instrumentation: the late
    # respond() fails its "Request already responded to" assertion. Direct path: no wire cancel.
    ServerCase(
        "handler_ignores_cancel",
        "stubborn",
        lambda s, e: stubborn(s),
        lambda transport: None if transport == "direct" or MCP_MAJOR == 1 else CLIENT_CANCEL,
    ),
    ServerCase(
        "disconnect",
        "slow",
        lambda s, e: disconnect(s),
        lambda transport: None if transport == "direct" else _disconnect(transport),
    ),
]


def server_spans(transport: str, exporter: InMemorySpanExporter, span_file: Path) -> list[dict[str, Any]]:
    if transport == "stdio":
        lines = span_file.read_text().splitlines() if span_file.exists() else []
        spans = [json.loads(line) for line in lines]
    else:
        spans = [span_dict(span) for span in exporter.get_finished_spans()]
    return [
        span
        for span in spans
        if span["kind"] == "SpanKind.SERVER" and span["attributes"].get("mcp.method.name") == "tools/call"
    ]


def assert_server_span(span: dict[str, Any], expect: Expect, tool: str) -> None:
    attributes = span["attributes"]
    assert span["name"] == f"tools/call {tool}"
    assert span["status"]["status_code"] == expect.status
    assert span["status"].get("description") == expect.description
    assert attributes.get("error.type") == expect.error_type
    assert attributes.get("rpc.response.status_code") == expect.rpc_code
    assert attributes["tool.outcome"] == expect.outcome
    assert attributes.get("tool.cancel.reason") == expect.cancel_reason
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["gen_ai.tool.name"] == tool
    assert attributes["mcp.server.name"] == SERVER_NAME
    assert attributes["mcp.server.version"] == SERVER_VERSION


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("case", SERVER_CASES, ids=lambda case: case.id)
async def test_server_span(
    case: ServerCase, transport: str, instrument: Callable[..., Any], exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    expect = case.expect(transport)
    if expect is None:
        pytest.skip(f"{case.id} does not apply over {transport}")
    instrument()
    span_file = tmp_path / "server-spans.jsonl"
    async with open_session(transport, span_file=span_file) as session:
        await session.list_tools()
        await case.drive(session, exporter)
    await anyio.sleep(0.2)  # let an in-process server finish a cancelled handler

    spans = server_spans(transport, exporter, span_file)
    if expect is NO_SPAN:
        assert spans == []
        return
    assert len(spans) == (2 if case.id == "cancel_after_response" else 1), [s["name"] for s in spans]
    span = spans[0]
    assert_server_span(span, expect, case.tool)
    assert span["attributes"].get("network.transport") == ("pipe" if transport == "stdio" else None)
    # Our SERVER span, not the SDK's (suppressed), and a child of our CLIENT span.
    client = next(s for s in tool_call_spans(exporter.get_finished_spans()) if s.name == f"tools/call {case.tool}")
    client_context = client.get_span_context()
    assert span["context"]["trace_id"] == f"0x{client_context.trace_id:032x}"
    assert span["parent_id"] == f"0x{client_context.span_id:016x}"
    if transport != "direct":
        assert span["attributes"]["jsonrpc.request.id"] == client.attributes["jsonrpc.request.id"]


async def test_server_shutdown_with_a_call_in_flight(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    instrument()
    async with stoppable_memory_session(build_server()) as (session, server_scope):
        task = asyncio.ensure_future(call(session, "slow"))
        await asyncio.sleep(0.3)
        server_scope.cancel()
        await asyncio.sleep(0.2)
        task.cancel()
    spans = server_spans("memory", exporter, Path("unused"))
    assert len(spans) == 1
    assert_server_span(
        spans[0], Expect("ERROR", "failed", "server shut down with the call in flight", "shutdown"), "slow"
    )


@pytest.mark.mcp2
@pytest.mark.parametrize("ticks", [2, 3, 5, 8])
async def test_cancel_races_the_handler_start(
    ticks: int, instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    """The caller cancels a few event-loop steps after calling: before or just after the
    server's handler starts. Either way both sides say cancelled."""
    instrument()
    async with open_session("memory") as session:
        await session.list_tools()
        task = asyncio.ensure_future(session.call_tool("slow", {}))
        for _ in range(ticks):
            await asyncio.sleep(0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await anyio.sleep(0.2)
    spans = [span_dict(span) for span in tool_call_spans(exporter.get_finished_spans())]
    (server,) = server_spans("memory", exporter, Path("unused"))
    assert spans[0]["attributes"]["tool.outcome"] == "cancelled"
    assert_server_span(server, CLIENT_CANCEL, "slow")


@pytest.mark.mcp1
@pytest.mark.parametrize("transport", ["memory", "stdio"])
@pytest.mark.parametrize(("send_cancel", "server_outcome"), [(False, OK), (True, CLIENT_CANCEL)])
async def test_opt_in_courtesy_cancel_from_mcp1_clients(
    send_cancel: bool,
    server_outcome: Expect,
    transport: str,
    instrument: Callable[..., Any],
    exporter: InMemorySpanExporter,
    tmp_path: Path,
) -> None:
    """mcp 1.x clients tell the server nothing when they stop waiting, so the server finishes work
    nobody wants ("ok"). With send_cancel the instrumentation tells it, as mcp 2.x clients do."""
    instrument(send_cancel=send_cancel)
    span_file = tmp_path / "spans.jsonl"
    async with open_session(transport, span_file=span_file) as session:
        await call(session, "slow", arguments={"seconds": 1}, read_timeout_seconds=read_timeout(0.3))
        with anyio.move_on_after(0.3):
            await session.call_tool("slow", {"seconds": 1})
        await anyio.sleep(1.2)  # without a cancel, both handlers finish
    clients = [span_dict(span) for span in tool_call_spans(exporter.get_finished_spans())]
    assert [(c["attributes"]["tool.outcome"], c["attributes"].get("error.type")) for c in clients] == [
        ("failed", "timeout"),
        ("cancelled", None),
    ]
    servers = server_spans(transport, exporter, span_file)
    assert len(servers) == 2
    for server in servers:
        assert_server_span(server, server_outcome, "slow")
