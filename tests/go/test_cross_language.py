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
from tests.go.conftest import GO_CANNOT_KNOW, GO_SERVER_NAME, GO_SERVER_VERSION, GO_SPAN_FILE_ENV, Programs, go_spans
from tests.harness import MCP_MAJOR, REPO_ROOT, env_without_otel, is_error
from tests.node.conftest import (
    AGENT,
    SERVER,
    TS_SPAN_FILE_ENV,
    TYPESCRIPT_PEERS,
    Span,
    child_of,
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
    """What a call's two sides say of the connection, and what each side's spans do not state (its
    SDK does not show it to the instrumentation: GO_CANNOT_KNOW)."""

    protocol_version: str
    server_name: str
    server_version: str
    transport: str | None  # network.transport of a side that states it (None: it records none)
    client_lacks: tuple[str, ...] = ()
    server_lacks: tuple[str, ...] = ()


def assert_one_trace(client: Span, server: Span, tool: str, peers: Peers) -> None:
    """One call, one trace; both sides state the same shared facts with the same strings; a side
    has none of what it lacks, and the request id and the transport where it does not lack them."""
    assert (client.name, client.kind) == (f"tools/call {tool}", "CLIENT")
    assert (server.name, server.kind) == (f"tools/call {tool}", "SERVER")
    assert server.trace_id == client.trace_id
    assert server.parent_id == client.span_id
    assert client.parent_id is None  # the agent's own call: the trace's root
    lacking = peers.client_lacks + peers.server_lacks
    shared = {
        MCP_METHOD_NAME: "tools/call",
        GEN_AI_OPERATION_NAME: "execute_tool",
        GEN_AI_TOOL_NAME: tool,
        MCP_PROTOCOL_VERSION: peers.protocol_version,
        MCP_SERVER_NAME: peers.server_name,
        MCP_SERVER_VERSION: peers.server_version,
    }
    shared = {key: value for key, value in shared.items() if key not in lacking}
    assert client.picked(shared) == server.picked(shared) == shared
    # Everything else either says, the same, but each side's cancel reason and what one side lacks.
    said = [{k: v for k, v in span.attributes.items() if k not in OWN + lacking} for span in (client, server)]
    assert said[0] == said[1]
    for span, lacks in ((client, peers.client_lacks), (server, peers.server_lacks)):
        assert span.picked(lacks) == {}
        if JSONRPC_REQUEST_ID not in lacks:
            assert isinstance(span.attributes[JSONRPC_REQUEST_ID], str)
        if NETWORK_TRANSPORT not in lacks:
            assert span.attributes.get(NETWORK_TRANSPORT) == peers.transport


# A call of an agent's plan: the tool, after how many ms its caller gives up, what the agent
# prints, each side's outcome attributes (ended(...)), and both sides' status.
Call = tuple[str, int | None, dict[str, Any], dict[str, str], dict[str, str], str]


def plan(calls: list[Call]) -> list[dict[str, Any]]:
    """The agents' MCP_PLAN of ``calls``."""
    return [{"tool": tool, **({} if abort is None else {"abortAfterMs": abort})} for tool, abort, *_ in calls]


def run_agent(
    command: list[str], calls: list[Call], span_file: tuple[str, Path], server_env: dict[str, str]
) -> list[str]:
    """Run an agent program (the Go, TypeScript or Rust one: the same command line and variables)
    with the plan of ``calls``, its spans to ``span_file`` (its variable, the file) and its
    server's environment besides its own ``server_env``: what it printed, line by line."""
    env = env_without_otel(
        PYTHONPATH=str(REPO_ROOT), MCP_PLAN=json.dumps(plan(calls)), **{span_file[0]: str(span_file[1])}
    )
    env["MCP_SERVER_ENV"] = json.dumps(server_env)
    completed = subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.splitlines()


def assert_each_call(
    calls: list[Call], printed: list[str] | None, clients: list[Span], servers: list[Span], peers: Peers
) -> None:
    """Each of ``calls`` printed what it should (an agent program; None: one in this process), and
    is one trace (``assert_one_trace``) whose two spans state their outcomes exactly."""
    if printed is not None:
        assert [json.loads(line) for line in printed] == [{"tool": tool, **said} for tool, _, said, *_ in calls]
    assert len(clients) == len(servers) == len(calls)
    for (tool, _, _, caller_said, server_said, status), client in zip(calls, clients, strict=True):
        server = child_of(client, servers)
        assert_one_trace(client, server, tool, peers)
        assert client.picked(OUTCOME_KEYS) == caller_said
        assert server.picked(OUTCOME_KEYS) == server_said
        assert client.status == server.status == status


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
    protocol_version="2025-11-25" if MCP_MAJOR == 1 else "2026-07-28",
    server_name=SERVER_NAME,
    server_version=SERVER_VERSION,
    transport="pipe" if MCP_MAJOR == 1 else None,
    client_lacks=GO_CANNOT_KNOW,
)

# The Go agent's calls (after how many ms its caller cancels its context: slow sleeps 5 s). The
# last call is answered only once the server has read the cancel (before the agent hangs up). ok
# or cancelled: neither is an error.
GO_CALLS: list[Call] = [
    ("ok", None, {"isError": False}, ended(OK), ended(OK), "UNSET"),
    ("slow", 300, {"error": "aborted"}, ended(CANCELLED, cancel=CALLER), ended(CANCELLED, cancel=CLIENT), "UNSET"),
    ("ok", None, {"isError": False}, ended(OK), ended(OK), "UNSET"),
]


@dataclass(frozen=True)
class GoAgentRun:
    printed: list[str]
    agent: list[Span]
    server: list[Span]


@pytest.fixture(scope="module")
def go_agent_run(go_programs: Programs, tmp_path_factory: pytest.TempPathFactory) -> GoAgentRun:
    """The Go agent's plan against the Python test server, run once."""
    directory = tmp_path_factory.mktemp("go-agent")
    agent_file, server_file = directory / "agent.jsonl", directory / "server.jsonl"
    command = [str(go_programs.agent), sys.executable, "-m", PYTHON_SERVER]
    printed = run_agent(command, GO_CALLS, (GO_SPAN_FILE_ENV, agent_file), {SPAN_FILE_ENV: str(server_file)})
    return GoAgentRun(printed, go_spans(agent_file), python_file_spans(server_file))


def test_a_go_agents_calls_and_the_python_server_are_one_trace(go_agent_run: GoAgentRun) -> None:
    clients, servers = tool_calls(go_agent_run.agent, "CLIENT"), tool_calls(go_agent_run.server, "SERVER")
    assert_each_call(GO_CALLS, go_agent_run.printed, clients, servers, PYTHON_PEERS)
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
    go_programs: Programs, tmp_path: Path
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


@pytest.mark.parametrize("generation", TYPESCRIPT_PEERS)
def test_a_go_agents_spans_name_the_typescript_server_and_its_call_is_one_trace(
    generation: str, go_programs: Programs, tmp_path: Path
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

# Both Python majors' ClientSession and both TypeScript generations shake hands with the Go server
# (2025-11-25) over stdio.
GO_SERVER_PEERS = Peers("2025-11-25", GO_SERVER_NAME, GO_SERVER_VERSION, "pipe", server_lacks=GO_CANNOT_KNOW)


async def python_agent(
    server: Path, span_file_env: str, exporter: InMemorySpanExporter, tmp_path: Path, tools: tuple[str, ...]
) -> tuple[list[bool], list[Span], list[Span]]:
    """The Python SDK's ClientSession (instrumented in this process) calls ``tools`` of the stdio
    server program ``server`` (the Go or the Rust one), which writes its spans to the file
    ``span_file_env`` names: each answer's isError, the agent's spans and the server's."""
    import mcp.client.stdio  # looked up after instrumenting: the instrumented stdio_client

    server_file = tmp_path / "server.jsonl"
    parameters = StdioServerParameters(
        command=str(server),
        args=[],
        env=env_without_otel(**{span_file_env: str(server_file)}),
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
    go_programs: Programs, instrument: Callable[..., Any], exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    instrument()
    answers, agent_spans, server_spans = await python_agent(
        go_programs.server, GO_SPAN_FILE_ENV, exporter, tmp_path, ("ok", "tool_error")
    )
    assert answers == [False, True]

    clients, servers = tool_calls(agent_spans, "CLIENT"), tool_calls(server_spans, "SERVER")
    assert len(clients) == len(servers) == 2
    ok, failed = clients
    assert_one_trace(ok, child_of(ok, servers), "ok", GO_SERVER_PEERS)
    assert_one_trace(failed, child_of(failed, servers), "tool_error", GO_SERVER_PEERS)
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
    go_programs: Programs, instrument: Callable[..., Any], exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    """The SDK sends it without params; mcp-otel sends it with its CLIENT span's context in
    ``params._meta``, which the Go SDK accepts: the Go server's span of it is that span's child."""
    instrument()
    answers, agent_spans, server_spans = await python_agent(
        go_programs.server, GO_SPAN_FILE_ENV, exporter, tmp_path, ("ok",)
    )
    assert answers == [False]  # served after it
    received = [span for span in server_spans if span.name == "notifications/initialized"]
    assert len(received) == 1
    assert_children_of_the_caller(received, agent_spans)


# --- A TypeScript agent, a Go server ---

# The TypeScript agent's calls (tests/node/ts_agent.cjs): as GO_CALLS, a tool error besides, the
# caller's abort an AbortSignal.
TS_CALLS: list[Call] = [
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


@pytest.mark.parametrize("generation", TYPESCRIPT_PEERS)
def test_a_typescript_agents_calls_and_the_go_server_are_one_trace(
    generation: str, go_programs: Programs, tmp_path: Path
) -> None:
    agent_file, server_file = tmp_path / "agent.jsonl", tmp_path / "server.jsonl"
    command = ["node", str(AGENT), generation, str(go_programs.server)]
    *printed, done = run_agent(command, TS_CALLS, (TS_SPAN_FILE_ENV, agent_file), {GO_SPAN_FILE_ENV: str(server_file)})
    assert done == "round 1 done"

    agent_spans, server_spans = ts_spans(agent_file), go_spans(server_file)
    clients, servers = tool_calls(agent_spans, "CLIENT"), tool_calls(server_spans, "SERVER")
    assert_each_call(TS_CALLS, printed, clients, servers, GO_SERVER_PEERS)
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
