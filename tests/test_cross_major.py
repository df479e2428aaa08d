"""One trace across SDK majors: a client on the installed major, a server on the other one in its
own environment (a stdio subprocess run by the other virtualenv's Python).

The Makefile names that Python in MCP_OTEL_PEER_PYTHON; without it these tests are skipped (run by
hand) or fail (under make).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.conftest import tool_call_spans
from tests.harness import MCP_MAJOR, read_timeout, stdio_parameters
from tests.processes import needs

pytestmark = pytest.mark.anyio

PEER_PYTHON = os.environ.get("MCP_OTEL_PEER_PYTHON")
PEER_MODULE = "tests.servers.v2_server" if MCP_MAJOR == 1 else "tests.servers.v1_server"
pytestmark = [pytestmark, needs(None if PEER_PYTHON else "MCP_OTEL_PEER_PYTHON (the other major's python) not set")]


async def cancel_or_time_out(session: ClientSession) -> None:
    if MCP_MAJOR == 2:  # cancels, and tells the server
        with anyio.move_on_after(0.3):
            await session.call_tool("slow", {})
        return
    # mcp 1.x times out and tells the server nothing: the handler finishes and its late answer is
    # dropped. (Closing the session before that answer arrives crashes mcp 1.30's stdio client
    # when the 2.x server answers the abandoned call, with or without instrumentation.)
    with contextlib.suppress(Exception):
        await session.call_tool("slow", {"seconds": 1}, read_timeout_seconds=read_timeout(0.3))
    await anyio.sleep(1.2)


# (tool, drive, client outcome, server outcome, server cancel reason)
EXPECTED = [
    ("ok", None, "ok", "ok", None),
    ("tool_error", None, "failed", "failed", None),
    # 2.x client -> 1.x server: the courtesy cancel stops the 1.x handler.
    # 1.x client -> 2.x server: nothing is sent and the tool really finishes: ok on the server.
    ("slow", cancel_or_time_out, "cancelled", "cancelled", "client")
    if MCP_MAJOR == 2
    else ("slow", cancel_or_time_out, "failed", "ok", None),
]


async def test_one_trace_across_majors(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    instrument()
    span_file = tmp_path / "peer-spans.jsonl"
    parameters = stdio_parameters(PEER_MODULE, span_file, python=PEER_PYTHON)
    async with stdio_client(parameters, errlog=sys.stderr) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for tool, drive, *_ in EXPECTED:
            if drive is None:
                await session.call_tool(tool, {})
            else:
                await drive(session)

    server_spans = [json.loads(line) for line in span_file.read_text().splitlines()]
    # The 2.x SDK's own spans for initialize etc. stay; for tools/call only ours exist.
    server_spans = [
        span
        for span in server_spans
        if span["kind"] == "SpanKind.SERVER" and span["attributes"].get("mcp.method.name") == "tools/call"
    ]
    client_spans = tool_call_spans(exporter.get_finished_spans())
    assert len(client_spans) == len(server_spans) == len(EXPECTED)
    for (tool, _drive, client_outcome, server_outcome, reason), client in zip(EXPECTED, client_spans, strict=True):
        (server,) = [s for s in server_spans if s["parent_id"] == f"0x{client.get_span_context().span_id:016x}"]
        assert client.name == server["name"] == f"tools/call {tool}"
        assert server["context"]["trace_id"] == f"0x{client.get_span_context().trace_id:032x}"
        assert client.attributes["tool.outcome"] == client_outcome
        assert server["attributes"]["tool.outcome"] == server_outcome
        assert server["attributes"].get("tool.cancel.reason") == reason
