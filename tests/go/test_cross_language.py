"""One trace across languages with Go: a Go agent (the Go SDK's Client, instrumented with mcpotel)
calling a Python or a TypeScript server instrumented with mcp-otel, and a Python agent and a
TypeScript agent (v1 and v2) calling a Go server (the Go SDK's Server, instrumented with mcpotel),
over stdio (and the Go agent over streamable HTTP); the Go programs are instrumented as docs/go.md
shows, with no propagator set. The W3C trace context travels in params._meta both ways: each call
is one trace, the SERVER span's parent the other language's CLIENT span, and both sides state the
same facts with the same strings, but what the Go SDK's middleware does not show mcpotel (the
JSON-RPC request id, the transport), which no Go span has; every span of a Go agent names its
server."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_otel.semconv import (
    ERROR_TYPE,
    GEN_AI_OPERATION_NAME,
    GEN_AI_TOOL_NAME,
    JSONRPC_REQUEST_ID,
    MCP_METHOD_NAME,
    MCP_PROTOCOL_VERSION,
    MCP_REQUEST_CANCEL_REASON,
    MCP_REQUEST_OUTCOME,
    MCP_REQUEST_RESULT_TYPE,
    MCP_SERVER_NAME,
    MCP_SERVER_VERSION,
    NETWORK_TRANSPORT,
    RPC_RESPONSE_STATUS_CODE,
    TOOL_CANCEL_REASON,
    TOOL_OUTCOME,
    CancelReason,
    ErrorType,
    Outcome,
    ResultType,
)
from tests.go.conftest import GO_CANNOT_KNOW, GO_SERVER_NAME, GO_SERVER_VERSION, GO_SPAN_FILE_ENV, GoPrograms, go_spans
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
from tests.processes import LOOPBACK, free_port, running
from tests.servers.span_file import SPAN_FILE_ENV
from tests.servers.tools import SERVER_NAME, SERVER_VERSION

OK, FAILED, CANCELLED = Outcome.OK.value, Outcome.FAILED.value, Outcome.CANCELLED.value
CALLER, CLIENT = CancelReason.CALLER.value, CancelReason.CLIENT.value
CANCELLED_METHOD = "notifications/cancelled"

# What each side says of a call's end (absent ones must be absent).
OUTCOME_KEYS = (MCP_REQUEST_OUTCOME, TOOL_OUTCOME, MCP_REQUEST_CANCEL_REASON, TOOL_CANCEL_REASON, ERROR_TYPE)
# Each side's own: why it gave up (the caller's cancel on one side is the client's on the other).
OWN = (MCP_REQUEST_CANCEL_REASON, TOOL_CANCEL_REASON)


def ended(outcome: str, *, cancel: str | None = None, error: str | None = None) -> dict[str, str]:
    """A tools/call span's outcome attributes."""
    attributes = {MCP_REQUEST_OUTCOME: outcome, TOOL_OUTCOME: outcome}
    if cancel:
        attributes |= {MCP_REQUEST_CANCEL_REASON: cancel, TOOL_CANCEL_REASON: cancel}
    if error:
        attributes[ERROR_TYPE] = error
    return attributes


@dataclass(frozen=True)
class Peers:
    """Which of a call's two spans is the Go one, and what the other side's says of the connection."""

    go_side: str  # "client" or "server"
    protocol_version: str
    server_name: str
    server_version: str
    transport: str | None  # the other side's network.transport (None: it records none)


def assert_one_trace(client: Span, server: Span, tool: str, peers: Peers) -> None:
    """One call, one trace; both sides state the same shared facts with the same strings; the Go
    side has neither the request id nor the transport."""
    assert (client.name, client.kind) == (f"tools/call {tool}", "CLIENT")
    assert (server.name, server.kind) == (f"tools/call {tool}", "SERVER")
    assert server.trace_id == client.trace_id
    assert server.parent_id == client.span_id
    assert client.parent_id is None  # the agent's own call: the trace's root
    shared = {
        MCP_METHOD_NAME: "tools/call",
        GEN_AI_OPERATION_NAME: "execute_tool",
        GEN_AI_TOOL_NAME: tool,
        MCP_PROTOCOL_VERSION: peers.protocol_version,
        MCP_SERVER_NAME: peers.server_name,
        MCP_SERVER_VERSION: peers.server_version,
    }
    assert client.picked(shared) == server.picked(shared) == shared
    # Everything else either says, the same, but each side's cancel reason and what Go cannot know.
    said = [{k: v for k, v in span.attributes.items() if k not in OWN + GO_CANNOT_KNOW} for span in (client, server)]
    assert said[0] == said[1]
    go, other = (client, server) if peers.go_side == "client" else (server, client)
    assert go.picked(GO_CANNOT_KNOW) == {}
    assert isinstance(other.attributes[JSONRPC_REQUEST_ID], str)
    assert other.attributes.get(NETWORK_TRANSPORT) == peers.transport


def assert_children_of_the_caller(servers: list[Span], clients: list[Span]) -> None:
    """Every span of the receiving side (the handshake's too) is the child of the sending side's
    span of the same message: the trace context in _meta was read as sent."""
    by_id = {span.span_id: span for span in clients}
    for server in servers:
        sender = by_id.get(server.parent_id or "")
        assert sender is not None, f"{server.name}: no parent among the sender's spans"
        assert (sender.name, sender.kind, sender.trace_id) == (server.name, "CLIENT", server.trace_id)


# --- A Go agent, a Python server ---

# The test tool set (tests/servers/tools.py) on this environment's SDK's lowlevel Server.
PYTHON_SERVER = f"tests.servers.v{MCP_MAJOR}_server"
# What the Go SDK (v1.7) and the Python server settle on: mcp 1.x answers the Go client's
# server/discover probe -32602, and the handshake follows (2025-11-25); mcp 2.x speaks 2026-07-28
# (no handshake). The Python server records network.transport on the handshake's session only.
PYTHON_PEERS = Peers(
    go_side="client",
    protocol_version="2025-11-25" if MCP_MAJOR == 1 else "2026-07-28",
    server_name=SERVER_NAME,
    server_version=SERVER_VERSION,
    transport="pipe" if MCP_MAJOR == 1 else None,
)

# The Go agent's calls: the tool, after how many ms its caller cancels its context (slow sleeps
# 5 s), what the agent prints, and each side's (outcome, cancel reason). The last call is answered
# only once the server has read the cancel (before the agent hangs up).
GO_CALLS: list[tuple[str, int | None, dict[str, Any], tuple[str, str | None], tuple[str, str | None]]] = [
    ("ok", None, {"isError": False}, (OK, None), (OK, None)),
    ("slow", 300, {"error": "aborted"}, (CANCELLED, CALLER), (CANCELLED, CLIENT)),
    ("ok", None, {"isError": False}, (OK, None), (OK, None)),
]
GO_PLAN = [{"tool": tool, **({} if abort is None else {"abortAfterMs": abort})} for tool, abort, *_ in GO_CALLS]


@dataclass(frozen=True)
class GoAgentRun:
    printed: list[dict[str, Any]]
    agent: list[Span]
    server: list[Span]


@pytest.fixture(scope="module")
def go_agent_run(go_programs: GoPrograms, tmp_path_factory: pytest.TempPathFactory) -> GoAgentRun:
    """The Go agent's plan against the Python test server, run once."""
    directory = tmp_path_factory.mktemp("go-agent")
    agent_file, server_file = directory / "agent.jsonl", directory / "server.jsonl"
    env = env_without_otel(
        PYTHONPATH=str(REPO_ROOT),
        MCP_PLAN=json.dumps(GO_PLAN),
        **{GO_SPAN_FILE_ENV: str(agent_file)},
    )
    env["MCP_SERVER_ENV"] = json.dumps({SPAN_FILE_ENV: str(server_file)})
    command = [str(go_programs.agent), sys.executable, "-m", PYTHON_SERVER]
    completed = subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    printed = [json.loads(line) for line in completed.stdout.splitlines()]
    return GoAgentRun(printed, go_spans(agent_file), python_file_spans(server_file))


def test_a_go_agents_calls_and_the_python_server_are_one_trace(go_agent_run: GoAgentRun) -> None:
    assert go_agent_run.printed == [{"tool": tool, **said} for tool, _, said, *_ in GO_CALLS]
    clients, servers = tool_calls(go_agent_run.agent, "CLIENT"), tool_calls(go_agent_run.server, "SERVER")
    assert len(clients) == len(servers) == len(GO_CALLS)
    for (tool, _, _, (outcome, caller), (server_outcome, receiver)), client in zip(GO_CALLS, clients, strict=True):
        server = child_of(client, servers)
        assert_one_trace(client, server, tool, PYTHON_PEERS)
        assert client.picked(OUTCOME_KEYS) == ended(outcome, cancel=caller)
        assert server.picked(OUTCOME_KEYS) == ended(server_outcome, cancel=receiver)
        # ok or cancelled: neither is an error.
        assert client.status == server.status == "UNSET"
    # Every request the Python server handled (mcp 1.x: the probe and the handshake too) is a child
    # of the Go agent's span of it.
    requests = [span for span in go_agent_run.server if span.name != CANCELLED_METHOD]
    assert_children_of_the_caller(requests, go_agent_run.agent)
    # The Go SDK sends its notifications/cancelled itself, past the middleware: no span of it on the
    # Go side (and no trace context in its _meta).
    assert [span for span in go_agent_run.agent if span.name == CANCELLED_METHOD] == []


def test_the_go_agents_cancel_is_in_the_cancelled_calls_trace_on_the_python_server(go_agent_run: GoAgentRun) -> None:
    # No trace context came with it: its parent is the request it cancels (mcp_otel.instrumentation.server), and it
    # is the one span of it (mcp 2.x: the SDK's own suppressed, as for requests).
    given_up = child_of(tool_calls(go_agent_run.agent, "CLIENT")[1], tool_calls(go_agent_run.server, "SERVER"))
    received = [span for span in go_agent_run.server if span.name == CANCELLED_METHOD]
    assert [(span.kind, span.trace_id, span.parent_id, span.status) for span in received] == [
        ("SERVER", given_up.trace_id, given_up.span_id, "UNSET")
    ]


# --- Every span of a Go agent names its server ---


def assert_every_request_names_the_server(spans: list[Span], first: str, name: str, version: str | None) -> None:
    """Every request the Go agent sent and recorded an outcome of, from the session's first
    (``first``: server/discover on 2026-07-28, its server named in the answer's _meta; else
    initialize), names the server: every per-server series has its name."""
    requests = [span for span in spans if span.kind == "CLIENT" and MCP_REQUEST_OUTCOME in span.attributes]
    assert requests[0].name == first
    named = {MCP_SERVER_NAME: name} | ({MCP_SERVER_VERSION: version} if version else {})
    for span in requests:
        assert span.picked((MCP_SERVER_NAME, MCP_SERVER_VERSION)) == named, span.name


def assert_the_refused_probe_names_the_server(spans: list[Span], code: str, name: str, version: str | None) -> None:
    """A server of an older protocol refused the Go SDK's ``server/discover`` probe (``code``): the
    probe's CLIENT span, a negotiation step (no outcome), names the server the handshake after it
    learnt."""
    (probe,) = [span for span in spans if (span.kind, span.name) == ("CLIENT", "server/discover")]
    named = {MCP_SERVER_NAME: name} | ({MCP_SERVER_VERSION: version} if version else {})
    assert dict(probe.attributes) == {
        MCP_METHOD_NAME: "server/discover",
        MCP_REQUEST_RESULT_TYPE: ResultType.NEGOTIATION.value,
        RPC_RESPONSE_STATUS_CODE: code,
        **named,
    }
    assert probe.status == "UNSET"


# mcp 2.x speaks 2026-07-28: the Go SDK's server/discover is answered; mcp 1.x refuses it (-32602
# over stdio, -32600 over HTTP).
PYTHON_FIRST = "server/discover" if MCP_MAJOR == 2 else "initialize"


def test_every_go_agent_span_names_the_python_server_over_stdio(go_agent_run: GoAgentRun) -> None:
    assert_every_request_names_the_server(go_agent_run.agent, PYTHON_FIRST, SERVER_NAME, SERVER_VERSION)
    if MCP_MAJOR == 1:
        assert_the_refused_probe_names_the_server(go_agent_run.agent, "-32602", SERVER_NAME, SERVER_VERSION)


def test_every_go_agent_span_names_the_python_server_over_streamable_http(
    go_programs: GoPrograms, tmp_path: Path
) -> None:
    port, agent_file = free_port(), tmp_path / "agent.jsonl"
    server = [sys.executable, "-m", "tests.servers.highlevel_server", "http", str(port)]
    env = env_without_otel(PYTHONPATH=str(REPO_ROOT))
    with running(server, ports=[port], log=tmp_path / "server.log", env=env, cwd=REPO_ROOT):
        agent_env = env_without_otel(MCP_PLAN=json.dumps([{"tool": "ok"}]), **{GO_SPAN_FILE_ENV: str(agent_file)})
        command = [str(go_programs.agent), f"http://{LOOPBACK}:{port}/mcp"]
        completed = subprocess.run(command, env=agent_env, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout) == {"tool": "ok", "isError": False}
    # The high-level server is made with a name only: FastMCP (mcp 1.x) gives the SDK's version for
    # it, MCPServer (2.x) none.
    served = version("mcp") if MCP_MAJOR == 1 else None
    assert_every_request_names_the_server(go_spans(agent_file), PYTHON_FIRST, SERVER_NAME, served)
    if MCP_MAJOR == 1:
        assert_the_refused_probe_names_the_server(go_spans(agent_file), "-32600", SERVER_NAME, served)


@needs_node
@pytest.mark.parametrize("generation", GENERATIONS)
def test_a_go_agents_spans_name_the_typescript_server_and_its_call_is_one_trace(
    generation: str, go_programs: GoPrograms, tmp_path: Path
) -> None:
    agent_file, server_file = tmp_path / "agent.jsonl", tmp_path / "server.jsonl"
    env = env_without_otel(MCP_PLAN=json.dumps([{"tool": "ok"}]), **{GO_SPAN_FILE_ENV: str(agent_file)})
    env["MCP_SERVER_ENV"] = json.dumps({TS_SPAN_FILE_ENV: str(server_file)})
    command = [str(go_programs.agent), "node", str(SERVER), generation]
    completed = subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout) == {"tool": "ok", "isError": False}
    agent_spans = go_spans(agent_file)
    # Neither generation answers server/discover (observed: v1 1.x and v2 2.x refuse it): the
    # handshake names the server.
    assert_every_request_names_the_server(agent_spans, "initialize", f"ts-server-{generation}", "1.2.3")
    assert_the_refused_probe_names_the_server(agent_spans, "-32601", f"ts-server-{generation}", "1.2.3")
    # And the call is one trace (the Go agent with no propagator set).
    (client,) = tool_calls(agent_spans, "CLIENT")
    server = child_of(client, tool_calls(ts_spans(server_file), "SERVER"))
    assert (server.name, server.trace_id) == ("tools/call ok", client.trace_id)


# --- A Python agent, a Go server ---

# Both Python majors' ClientSession shake hands (2025-11-25) over stdio.
GO_PEERS_OF_PYTHON = Peers("server", "2025-11-25", GO_SERVER_NAME, GO_SERVER_VERSION, "pipe")


async def python_agent(
    go_programs: GoPrograms, exporter: InMemorySpanExporter, tmp_path: Path, tools: tuple[str, ...]
) -> tuple[list[bool], list[Span], list[Span]]:
    """The Python SDK's ClientSession (instrumented in this process) calls ``tools`` of the Go
    server over stdio: each answer's isError, the agent's spans and the server's."""
    import mcp.client.stdio  # looked up after instrumenting: the instrumented stdio_client

    server_file = tmp_path / "server.jsonl"
    parameters = StdioServerParameters(
        command=str(go_programs.server),
        args=[],
        env=env_without_otel(**{GO_SPAN_FILE_ENV: str(server_file)}),
        cwd=str(REPO_ROOT),
    )
    async with (
        mcp.client.stdio.stdio_client(parameters, errlog=sys.stderr) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        answers = [is_error(await session.call_tool(tool, {})) for tool in tools]
    return answers, python_spans(exporter.get_finished_spans()), go_spans(server_file)


@pytest.mark.anyio
async def test_a_python_agents_calls_and_the_go_server_are_one_trace(
    go_programs: GoPrograms, instrument: Callable[..., Any], exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    instrument()
    answers, agent_spans, server_spans = await python_agent(go_programs, exporter, tmp_path, ("ok", "tool_error"))
    assert answers == [False, True]

    clients, servers = tool_calls(agent_spans, "CLIENT"), tool_calls(server_spans, "SERVER")
    assert len(clients) == len(servers) == 2
    ok, failed = clients
    assert_one_trace(ok, child_of(ok, servers), "ok", GO_PEERS_OF_PYTHON)
    assert_one_trace(failed, child_of(failed, servers), "tool_error", GO_PEERS_OF_PYTHON)
    for side in (ok, child_of(ok, servers)):
        assert side.picked(OUTCOME_KEYS) == ended(OK)
        assert side.status == "UNSET"
    # The Go tool's error (a Go error: the SDK answers isError): failed on both sides, a tool error.
    for side in (failed, child_of(failed, servers)):
        assert side.picked(OUTCOME_KEYS) == ended(FAILED, error=ErrorType.TOOL_ERROR)
        assert side.status == "ERROR"
    # Every request the Go server handled (the handshake, the SDK's tools/list) is a child of the
    # Python agent's span of it.
    requests = [span for span in server_spans if not span.name.startswith("notifications/")]
    assert {span.name for span in requests} == {"initialize", "tools/list", "tools/call ok", "tools/call tool_error"}
    assert_children_of_the_caller(requests, agent_spans)


@pytest.mark.anyio
async def test_the_python_agents_initialized_notification_is_in_its_trace_on_the_go_server(
    go_programs: GoPrograms, instrument: Callable[..., Any], exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    """The SDK sends it without params; mcp-otel sends it with its CLIENT span's context in
    ``params._meta``, which the Go SDK accepts: the Go server's span of it is that span's child."""
    instrument()
    answers, agent_spans, server_spans = await python_agent(go_programs, exporter, tmp_path, ("ok",))
    assert answers == [False]  # served after it
    received = [span for span in server_spans if span.name == "notifications/initialized"]
    assert len(received) == 1
    assert_children_of_the_caller(received, agent_spans)


# --- A TypeScript agent, a Go server ---

# The TypeScript agent's calls (tests/node/ts_agent.cjs): as GO_CALLS, a tool error besides, the
# caller's abort an AbortSignal.
TS_CALLS: list[tuple[str, int | None, dict[str, Any], dict[str, str], dict[str, str], str]] = [
    ("ok", None, {"isError": False}, ended(OK), ended(OK), "UNSET"),
    (
        "tool_error",
        None,
        {"isError": True},
        ended(FAILED, error=ErrorType.TOOL_ERROR),
        ended(FAILED, error=ErrorType.TOOL_ERROR),
        "ERROR",
    ),
    ("slow", 300, {"error": "aborted"}, ended(CANCELLED, cancel=CALLER), ended(CANCELLED, cancel=CLIENT), "UNSET"),
    ("ok", None, {"isError": False}, ended(OK), ended(OK), "UNSET"),
]
TS_PLAN = [{"tool": tool, **({} if abort is None else {"abortAfterMs": abort})} for tool, abort, *_ in TS_CALLS]


@needs_node
@pytest.mark.parametrize("generation", GENERATIONS)
def test_a_typescript_agents_calls_and_the_go_server_are_one_trace(
    generation: str, go_programs: GoPrograms, tmp_path: Path
) -> None:
    agent_file, server_file = tmp_path / "agent.jsonl", tmp_path / "server.jsonl"
    env = env_without_otel(MCP_PLAN=json.dumps(TS_PLAN), **{TS_SPAN_FILE_ENV: str(agent_file)})
    env["MCP_SERVER_ENV"] = json.dumps({GO_SPAN_FILE_ENV: str(server_file)})
    command = ["node", str(AGENT), generation, str(go_programs.server)]
    completed = subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    *printed, done = completed.stdout.splitlines()
    assert [json.loads(line) for line in printed] == [{"tool": tool, **said} for tool, _, said, *_ in TS_CALLS]
    assert done == "round 1 done"

    agent_spans, server_spans = ts_spans(agent_file), go_spans(server_file)
    clients, servers = tool_calls(agent_spans, "CLIENT"), tool_calls(server_spans, "SERVER")
    assert len(clients) == len(servers) == len(TS_CALLS)
    peers = Peers("server", "2025-11-25", GO_SERVER_NAME, GO_SERVER_VERSION, "pipe")
    for (tool, _, _, caller_said, server_said, status), client in zip(TS_CALLS, clients, strict=True):
        server = child_of(client, servers)
        assert_one_trace(client, server, tool, peers)
        assert client.picked(OUTCOME_KEYS) == caller_said
        assert server.picked(OUTCOME_KEYS) == server_said
        assert client.status == server.status == status
    # Every message the Go server received (the handshake's, and the cancel: the TypeScript SDK
    # sends it through mcp-otel, in the given-up call's trace) is a child of the agent's span of it.
    assert_children_of_the_caller(server_spans, agent_spans)
    given_up = clients[2]
    (notification,) = [span for span in agent_spans if span.name == CANCELLED_METHOD]
    assert (notification.kind, notification.trace_id, notification.parent_id) == (
        "CLIENT",
        given_up.trace_id,
        given_up.span_id,
    )
    (received,) = [span for span in server_spans if span.name == CANCELLED_METHOD]
    assert (received.kind, received.trace_id, received.parent_id) == ("SERVER", given_up.trace_id, notification.span_id)
