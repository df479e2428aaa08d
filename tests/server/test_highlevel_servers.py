"""High-level servers: FastMCP (mcp 1.x), MCPServer (mcp 2.x) and fastmcp 4.x (mcp 2.x), in memory
and as stdio subprocesses: one SERVER span per call, ours (the SDK's and fastmcp's suppressed),
with the outcome their conversions of tool exceptions imply."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.harness import HAS_FASTMCP, MCP_MAJOR, open_session
from tests.server.test_server_spans import CLIENT_CANCEL, OK, Expect, call, client_cancel
from tests.servers import highlevel_server
from tests.servers.span_file import span_dict

pytestmark = pytest.mark.anyio

TOOL_ERROR = Expect("ERROR", "failed", None, "tool_error")
# 1.x FastMCP turns every tool exception into an isError result, the SDK's MCP error included;
# 2.x MCPServer answers the MCP error as a JSON-RPC error: here a caller fault.
REJECTS = TOOL_ERROR if MCP_MAJOR == 1 else Expect("UNSET", "failed", None, None, "-32602")

FLAVORS = {
    "highlevel": ("tests.servers.highlevel_server stdio", highlevel_server.build_server),
}
if HAS_FASTMCP:
    from tests.servers import fastmcp_server

    FLAVORS["fastmcp"] = ("tests.servers.fastmcp_server", fastmcp_server.build_server)

CASES = {
    "ok": (lambda session: call(session, "ok"), "ok", OK),
    "fails": (lambda session: call(session, "fails"), "fails", TOOL_ERROR),
    "rejects": (lambda session: call(session, "rejects"), "rejects", REJECTS),
    "client_cancel": (client_cancel, "slow", CLIENT_CANCEL),
}


@pytest.mark.parametrize("transport", ["memory", "stdio"])
@pytest.mark.parametrize("flavor", sorted(FLAVORS))
@pytest.mark.parametrize("case", sorted(CASES))
async def test_highlevel_server_span(
    case: str,
    flavor: str,
    transport: str,
    instrument: Callable[..., Any],
    exporter: InMemorySpanExporter,
    tmp_path: Path,
) -> None:
    drive, tool, expect = CASES[case]
    if flavor == "fastmcp" and case == "rejects":
        pytest.skip("the fastmcp test server has no such tool")
    module, build = FLAVORS[flavor]
    instrument()
    span_file = tmp_path / "spans.jsonl"
    server = build() if transport == "memory" else None
    async with open_session(transport, server, span_file=span_file, stdio_module=module) as session:
        await drive(session)

    if transport == "stdio":
        spans = [json.loads(line) for line in span_file.read_text().splitlines()]
    else:
        spans = [span_dict(span) for span in exporter.get_finished_spans()]
    servers = [s for s in spans if s["kind"] == "SpanKind.SERVER" and "tools/call" in s["name"]]
    assert [s["name"] for s in servers] == [f"tools/call {tool}"]
    (span,) = servers
    assert span["status"]["status_code"] == expect.status
    assert span["attributes"]["tool.outcome"] == expect.outcome
    assert span["attributes"].get("error.type") == expect.error_type
    assert span["attributes"].get("rpc.response.status_code") == expect.rpc_code
    assert span["attributes"].get("tool.cancel.reason") == expect.cancel_reason
