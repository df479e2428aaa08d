"""One trace across languages: a TypeScript agent (the MCP TypeScript SDK's Client, v1 and v2,
instrumented with the npm package mcp-otel) calling a Python server instrumented with this
package, and a Python agent calling a TypeScript server (McpServer, v1 and v2), both over stdio.
Each call is one trace: the SERVER span's parent is the CLIENT span of the other language, and
both state the same outcome with the same strings."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_otel.semconv import (
    ERROR_TYPE,
    GEN_AI_TOOL_NAME,
    JSONRPC_REQUEST_ID,
    MCP_METHOD_NAME,
    MCP_PROTOCOL_VERSION,
    MCP_REQUEST_CANCEL_REASON,
    MCP_REQUEST_OUTCOME,
    MCP_SERVER_NAME,
    MCP_SERVER_VERSION,
    METHOD_INITIALIZED,
    NETWORK_TRANSPORT,
    TOOL_CANCEL_REASON,
    TOOL_OUTCOME,
    CancelReason,
    ErrorType,
    Outcome,
)
from tests.harness import MCP_MAJOR, REPO_ROOT, env_without_otel, is_error
from tests.node.conftest import (
    AGENT,
    GENERATIONS,
    SERVER,
    TS_SPAN_FILE_ENV,
    Span,
    child_of,
    needs_node,
    python_file_spans,
    python_spans,
    tool_calls,
    ts_spans,
)
from tests.servers.span_file import SPAN_FILE_ENV
from tests.servers.tools import SERVER_NAME

pytestmark = needs_node

OK, FAILED, CANCELLED = Outcome.OK.value, Outcome.FAILED.value, Outcome.CANCELLED.value

# The attributes each call's spans are compared on (absent ones must be absent).
COMPARED = (
    MCP_METHOD_NAME,
    GEN_AI_TOOL_NAME,
    MCP_SERVER_NAME,
    NETWORK_TRANSPORT,
    MCP_REQUEST_OUTCOME,
    TOOL_OUTCOME,
    MCP_REQUEST_CANCEL_REASON,
    TOOL_CANCEL_REASON,
    ERROR_TYPE,
)


def expected(
    tool: str, server: str, outcome: str, *, cancel: str | None = None, error: str | None = None
) -> dict[str, Any]:
    """A tools/call span's compared attributes."""
    attributes = {
        MCP_METHOD_NAME: "tools/call",
        GEN_AI_TOOL_NAME: tool,
        MCP_SERVER_NAME: server,
        NETWORK_TRANSPORT: "pipe",
        MCP_REQUEST_OUTCOME: outcome,
        TOOL_OUTCOME: outcome,
    }
    if cancel:
        attributes |= {MCP_REQUEST_CANCEL_REASON: cancel, TOOL_CANCEL_REASON: cancel}
    if error:
        attributes[ERROR_TYPE] = error
    return attributes


def assert_one_trace(client: Span, server: Span, tool: str) -> None:
    """One call, one trace; and both languages' spans of it say the same, with the same strings
    (request id, protocol version, server identity, outcome ...), but each side's cancel reason."""
    assert (client.name, client.kind) == (f"tools/call {tool}", "CLIENT")
    assert (server.name, server.kind) == (f"tools/call {tool}", "SERVER")
    assert server.trace_id == client.trace_id
    assert server.parent_id == client.span_id
    own = (MCP_REQUEST_CANCEL_REASON, TOOL_CANCEL_REASON)
    said = [{key: value for key, value in span.attributes.items() if key not in own} for span in (client, server)]
    assert said[0] == said[1]
    assert {JSONRPC_REQUEST_ID, MCP_PROTOCOL_VERSION, MCP_SERVER_VERSION} <= said[0].keys()


# --- A TypeScript agent, a Python server ---

# The test tool set (tests/servers/tools.py) on this environment's SDK's lowlevel Server.
PYTHON_SERVER = f"tests.servers.v{MCP_MAJOR}_server"

# The agent's calls: the tool, after how many ms its caller gives up (an AbortSignal; slow would
# sleep 5 s), what the agent prints, and each side's (outcome, cancel reason). The last call is
# answered only once the server has read the cancel (before the agent hangs up).
CALLS: list[tuple[str, int | None, dict[str, Any], tuple[str, str | None], tuple[str, str | None]]] = [
    ("ok", None, {"isError": False}, (OK, None), (OK, None)),
    ("slow", 300, {"error": "aborted"}, (CANCELLED, CancelReason.CALLER.value), (CANCELLED, CancelReason.CLIENT.value)),
    ("ok", None, {"isError": False}, (OK, None), (OK, None)),
]
PLAN = [{"tool": tool, **({} if abort is None else {"abortAfterMs": abort})} for tool, abort, *_ in CALLS]


@pytest.mark.parametrize("generation", GENERATIONS)
def test_a_typescript_agents_call_and_the_python_server_are_one_trace(generation: str, tmp_path: Path) -> None:
    agent_file, server_file = tmp_path / "agent.jsonl", tmp_path / "server.jsonl"
    env = env_without_otel(
        PYTHONPATH=str(REPO_ROOT),
        MCP_PLAN=json.dumps(PLAN),
        **{TS_SPAN_FILE_ENV: str(agent_file), SPAN_FILE_ENV: str(server_file)},
    )
    command = ["node", str(AGENT), generation, sys.executable, "-m", PYTHON_SERVER]
    completed = subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    *printed, done = completed.stdout.splitlines()
    assert [json.loads(line) for line in printed] == [{"tool": tool, **said} for tool, _, said, *_ in CALLS]
    assert done == "round 1 done"

    agent_spans, server_spans = ts_spans(agent_file), python_file_spans(server_file)
    clients, servers = tool_calls(agent_spans, "CLIENT"), tool_calls(server_spans, "SERVER")
    assert len(clients) == len(servers) == len(CALLS)
    for (tool, _, _, (outcome, caller), (server_outcome, receiver)), client in zip(CALLS, clients, strict=True):
        server = child_of(client, servers)
        assert_one_trace(client, server, tool)
        assert client.parent_id is None  # the agent's own call: the trace's root
        assert client.picked(COMPARED) == expected(tool, SERVER_NAME, outcome, cancel=caller)
        assert server.picked(COMPARED) == expected(tool, SERVER_NAME, server_outcome, cancel=receiver)
        # ok or cancelled: neither is an error.
        assert client.status == server.status == "UNSET"
    # The cancel notification travels in the given-up call's trace too.
    given_up = clients[1]
    (notification,) = [span for span in agent_spans if span.name == "notifications/cancelled"]
    assert (notification.kind, notification.trace_id, notification.parent_id) == (
        "CLIENT",
        given_up.trace_id,
        given_up.span_id,
    )
    received = {(span.kind, span.trace_id, span.parent_id) for span in server_spans if span.name == notification.name}
    assert received == {("SERVER", given_up.trace_id, notification.span_id)}


# --- A Python agent, a TypeScript server ---


@pytest.mark.anyio
@pytest.mark.parametrize("generation", GENERATIONS)
async def test_a_python_agents_call_and_the_typescript_server_are_one_trace(
    generation: str, instrument: Callable[..., Any], exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    instrument()
    import mcp.client.stdio  # looked up after instrumenting: the instrumented stdio_client

    server_file = tmp_path / "server.jsonl"
    parameters = StdioServerParameters(
        command="node",
        args=[str(SERVER), generation, "mcpserver"],
        env=env_without_otel(**{TS_SPAN_FILE_ENV: str(server_file)}),
        cwd=str(REPO_ROOT),
    )
    async with (
        mcp.client.stdio.stdio_client(parameters, errlog=sys.stderr) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        answers = [is_error(await session.call_tool(tool, {})) for tool in ("ok", "tool_error")]
    assert answers == [False, True]

    clients = tool_calls(python_spans(exporter.get_finished_spans()), "CLIENT")
    servers = tool_calls(ts_spans(server_file), "SERVER")
    assert len(clients) == len(servers) == 2
    name = f"ts-server-{generation}"
    ok, failed = clients
    assert_one_trace(ok, child_of(ok, servers), "ok")
    assert_one_trace(failed, child_of(failed, servers), "tool_error")
    assert ok.parent_id is None
    assert failed.parent_id is None
    for side in (ok, child_of(ok, servers)):
        assert side.picked(COMPARED) == expected("ok", name, OK)
        assert side.status == "UNSET"
    # isError: failed on both sides, the error a tool error.
    for side in (failed, child_of(failed, servers)):
        assert side.picked(COMPARED) == expected("tool_error", name, FAILED, error=ErrorType.TOOL_ERROR)
        assert side.status == "ERROR"
    # The handshake's notifications/initialized (the Python SDK sends it without params; mcp-otel
    # with its CLIENT span's context in params._meta, which the TypeScript SDK accepts): one trace.
    (sent,) = [span for span in python_spans(exporter.get_finished_spans()) if span.name == METHOD_INITIALIZED]
    received = [(s.kind, s.trace_id, s.parent_id) for s in ts_spans(server_file) if s.name == METHOD_INITIALIZED]
    assert received == [("SERVER", sent.trace_id, sent.span_id)]
