"""One trace across languages with Rust: a Rust agent (rmcp's client, instrumented with mcp_otel)
calling a Python, a TypeScript (v1 and v2) and a Go server instrumented with mcp-otel, and a Python
agent, a TypeScript agent (v1 and v2) and a Go agent calling a Rust server (rmcp's server,
instrumented with mcp_otel), all over stdio; the Rust programs are instrumented as docs/rust.md
shows, with no propagator set. The W3C trace context travels in params._meta both ways: each call
is one trace, the SERVER span's parent the other language's CLIENT span, and both sides state the
same facts with the same strings, but what the Go SDK does not show (GO_CANNOT_KNOW). The Rust
agent gives a call up by dropping its future (tokio's timeout around it): cancelled/caller on its
side, and cancelled/client on the server, which rmcp tells with notifications/cancelled. The
notifications each agent sends (the handshake's, a cancel) are in its trace on the Rust server."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_otel.semconv import MCP_PROTOCOL_VERSION, MCP_REQUEST_OUTCOME
from tests.go.conftest import GO_CANNOT_KNOW, GO_SERVER_NAME, GO_SERVER_VERSION, GO_SPAN_FILE_ENV, Programs
from tests.go.conftest import go_programs as go_programs  # the fixture, for the Go peers
from tests.go.test_cross_language import (
    GO_CALLS,
    PYTHON_SERVER,
    TS_CALLS,
    Call,
    Peers,
    assert_children_of_the_caller,
    assert_each_call,
    assert_every_request_names_the_server,
    python_agent,
    run_agent,
)
from tests.node.conftest import (
    AGENT,
    SERVER,
    TS_SPAN_FILE_ENV,
    TYPESCRIPT_PEERS,
    Span,
    python_file_spans,
    tool_calls,
    ts_spans,
)
from tests.processes import no_python_sdk
from tests.rust.conftest import (
    DISCOVERED,
    GO_SERVER,
    HANDSHAKE,
    RUST_SERVER_NAME,
    RUST_SERVER_VERSION,
    RUST_SPAN_FILE_ENV,
    assert_rmcps_own,
)
from tests.servers.span_file import SPAN_FILE_ENV
from tests.servers.tools import SERVER_NAME, SERVER_VERSION

# The Rust agent's calls: the TypeScript agent's (an answer, a tool error, a call given up after
# 300 ms, then one answered only once the server has read the cancel).
RUST_CALLS = TS_CALLS
# A TypeScript agent's notifications: the handshake's, and the cancel of the call given up.
NOTIFICATIONS = ("notifications/initialized", "notifications/cancelled")


@dataclass(frozen=True)
class AgentRun:
    printed: list[str]  # an agent program's lines (none of an agent in this process)
    agent: list[Span]
    server: list[Span]


def agent_run(
    directory: Path,
    command: list[str],
    calls: list[Call],
    span_file_envs: tuple[str, str],
    server_spans: Callable[[Path], list[Span]] = ts_spans,
) -> AgentRun:
    """An agent program runs ``calls`` against its server, each writing its spans to a file in
    ``directory`` (the variables of the agent's and the server's, in that order)."""
    agent_file, server_file = directory / "agent.jsonl", directory / "server.jsonl"
    agent_env, server_env = span_file_envs
    printed = run_agent(command, calls, (agent_env, agent_file), {server_env: str(server_file)})
    return AgentRun(printed, ts_spans(agent_file), server_spans(server_file))


# --- A Rust agent, a Python, TypeScript or Go server ---


@dataclass(frozen=True)
class Served:
    """A server the Rust agent calls: its command, where it writes its spans and how they are read,
    and what both sides say of the connection."""

    command: list[str]
    span_file_env: str
    spans: Callable[[Path], list[Span]]
    peers: Peers


def served(server: str, go: Callable[[], Programs]) -> Served:
    """The server named ``server`` ("python", a TypeScript generation, or "go")."""
    if server == "python":
        # The Python server states the transport of its session (the handshake's).
        peers = Peers(HANDSHAKE, SERVER_NAME, SERVER_VERSION, "pipe")
        return Served([sys.executable, "-m", PYTHON_SERVER], SPAN_FILE_ENV, python_file_spans, peers)
    if server == "go":
        peers = Peers(HANDSHAKE, GO_SERVER_NAME, GO_SERVER_VERSION, "pipe", server_lacks=GO_CANNOT_KNOW)
        return Served([str(go().server)], GO_SPAN_FILE_ENV, ts_spans, peers)
    peers = Peers(HANDSHAKE, f"ts-server-{server}", "1.2.3", "pipe")
    return Served(["node", str(SERVER), server], TS_SPAN_FILE_ENV, ts_spans, peers)


@pytest.fixture(scope="module", params=["python", *TYPESCRIPT_PEERS, GO_SERVER])
def rust_agent_run(
    request: pytest.FixtureRequest, rust_programs: Programs, tmp_path_factory: pytest.TempPathFactory
) -> tuple[AgentRun, Peers]:
    """The Rust agent runs RUST_CALLS against each server, once."""
    server = served(request.param, lambda: request.getfixturevalue("go_programs"))
    directory = tmp_path_factory.mktemp(f"rust-agent-{request.param}")
    command = [str(rust_programs.agent), *server.command]
    envs = (RUST_SPAN_FILE_ENV, server.span_file_env)
    return agent_run(directory, command, RUST_CALLS, envs, server.spans), server.peers


def test_a_rust_agents_calls_and_the_server_are_one_trace(rust_agent_run: tuple[AgentRun, Peers]) -> None:
    run, peers = rust_agent_run
    clients, servers = tool_calls(run.agent, "CLIENT"), tool_calls(run.server, "SERVER")
    assert_each_call(RUST_CALLS, run.printed, clients, servers, peers)
    assert_rmcps_own(run.agent, run.server, clients, RUST_CALLS)


@pytest.mark.parametrize(
    "rust_agent_run",
    ["python", *TYPESCRIPT_PEERS, GO_SERVER],
    indirect=True,
)
def test_each_server_states_the_protocol_version_it_answered_to_rmcps_newer_one(
    rust_agent_run: tuple[AgentRun, Peers],
) -> None:
    """rmcp asks for 2026-07-28 in initialize; each server answers 2025-11-25, the version its
    spans (the handshake's too) state, as the Rust agent's do."""
    run, _ = rust_agent_run
    answered = [span for span in run.server if MCP_REQUEST_OUTCOME in span.attributes]
    assert {span.attributes[MCP_PROTOCOL_VERSION] for span in answered} == {HANDSHAKE}


# --- A Python agent, a Rust server ---

# Python's ClientSession (both majors) and the TypeScript Client (v1, v2) shake hands with the
# Rust server (2025-11-25) over stdio.
RUST_SERVER_PEERS = Peers(HANDSHAKE, RUST_SERVER_NAME, RUST_SERVER_VERSION, "pipe")
# What the Python agent calls: an answer and a tool error.
PYTHON_CALLS = RUST_CALLS[:2]


@pytest.fixture
async def python_agent_run(
    rust_programs: Programs, instrument: Callable[..., Any], exporter: InMemorySpanExporter, tmp_path: Path
) -> AgentRun:
    """The Python SDK's ClientSession (instrumented here) calls PYTHON_CALLS of the Rust server."""
    instrument()
    tools = tuple(tool for tool, *_ in PYTHON_CALLS)
    answers, agent_spans, server_spans = await python_agent(
        rust_programs.server, RUST_SPAN_FILE_ENV, exporter, tmp_path, tools
    )
    assert answers == [said["isError"] for _, _, said, *_ in PYTHON_CALLS]
    return AgentRun([], agent_spans, server_spans)


@pytest.mark.anyio
async def test_a_python_agents_calls_and_the_rust_server_are_one_trace(python_agent_run: AgentRun) -> None:
    agent_spans, server_spans = python_agent_run.agent, python_agent_run.server
    clients, servers = tool_calls(agent_spans, "CLIENT"), tool_calls(server_spans, "SERVER")
    assert_each_call(PYTHON_CALLS, None, clients, servers, RUST_SERVER_PEERS)
    # Every request the Rust server handled (the handshake, the SDK's tools/list) is a child of the
    # Python agent's span of it.
    requests = [span for span in server_spans if not span.name.startswith("notifications/")]
    assert {span.name for span in requests} == {"initialize", "tools/list", "tools/call ok", "tools/call tool_error"}
    assert_children_of_the_caller(requests, agent_spans)


@pytest.mark.anyio
async def test_the_python_agents_initialized_notification_is_in_its_trace_on_the_rust_server(
    python_agent_run: AgentRun,
) -> None:
    received = [span for span in python_agent_run.server if span.name == "notifications/initialized"]
    assert len(received) == 1
    assert_children_of_the_caller(received, python_agent_run.agent)


# --- A TypeScript agent, a Rust server ---


@pytest.fixture(scope="module", params=TYPESCRIPT_PEERS)
def typescript_agent_run(
    request: pytest.FixtureRequest, rust_programs: Programs, tmp_path_factory: pytest.TempPathFactory
) -> AgentRun:
    """The TypeScript agent (tests/node/ts_agent.cjs) of each generation runs TS_CALLS against the
    Rust server, once."""
    directory = tmp_path_factory.mktemp(f"typescript-agent-{request.param}")
    command = ["node", str(AGENT), request.param, str(rust_programs.server)]
    run = agent_run(directory, command, TS_CALLS, (TS_SPAN_FILE_ENV, RUST_SPAN_FILE_ENV))
    *printed, done = run.printed
    assert done == "round 1 done"
    return replace(run, printed=printed)


def assert_each_call_to_the_rust_server(run: AgentRun, calls: list[Call], peers: Peers, first: str) -> None:
    """Each of ``calls`` is one trace (``assert_each_call``), and every request the Rust server
    handled (the session's ``first`` too) is a child of the agent's span of it."""
    servers = tool_calls(run.server, "SERVER")
    assert_each_call(calls, run.printed, tool_calls(run.agent, "CLIENT"), servers, peers)
    requests = [span for span in run.server if span.name not in NOTIFICATIONS]
    assert [span.name for span in requests] == [first, *(span.name for span in servers)]
    assert_children_of_the_caller(requests, run.agent)


def test_a_typescript_agents_calls_and_the_rust_server_are_one_trace(
    typescript_agent_run: AgentRun,
) -> None:
    run = typescript_agent_run
    assert_each_call_to_the_rust_server(run, TS_CALLS, RUST_SERVER_PEERS, "initialize")
    # The agent sent both notifications through mcp-otel, each with its span's context; the server
    # received both.
    assert sorted(span.name for span in run.server if span.name in NOTIFICATIONS) == sorted(NOTIFICATIONS)


def test_the_typescript_agents_notifications_are_in_its_traces_on_the_rust_server(
    typescript_agent_run: AgentRun,
) -> None:
    run = typescript_agent_run
    assert_children_of_the_caller([span for span in run.server if span.name in NOTIFICATIONS], run.agent)


# --- A Go agent, a Rust server ---

GO_AGENT_PEERS = Peers(DISCOVERED, RUST_SERVER_NAME, RUST_SERVER_VERSION, "pipe", client_lacks=GO_CANNOT_KNOW)


@pytest.fixture(scope="module")
def go_agent_run(go_programs: Programs, rust_programs: Programs, tmp_path_factory: pytest.TempPathFactory) -> AgentRun:
    """The Go agent runs GO_CALLS against the Rust server, once."""
    command = [str(go_programs.agent), str(rust_programs.server)]
    return agent_run(tmp_path_factory.mktemp("go-agent"), command, GO_CALLS, (GO_SPAN_FILE_ENV, RUST_SPAN_FILE_ENV))


@no_python_sdk
def test_a_go_agents_calls_and_the_rust_server_are_one_trace(go_agent_run: AgentRun) -> None:
    run = go_agent_run
    # The session's first request is the probe; every span of the Go agent names the server, from
    # the probe's answer on.
    assert_each_call_to_the_rust_server(run, GO_CALLS, GO_AGENT_PEERS, "server/discover")
    assert_every_request_names_the_server(run.agent, "server/discover", RUST_SERVER_NAME, RUST_SERVER_VERSION)


@no_python_sdk
def test_the_rust_server_states_the_protocol_version_of_a_2026_07_28_request(
    go_agent_run: AgentRun,
) -> None:
    run = go_agent_run
    answered = [span for span in run.server if MCP_REQUEST_OUTCOME in span.attributes]
    assert [span.picked((MCP_PROTOCOL_VERSION,)) for span in answered] == [{MCP_PROTOCOL_VERSION: DISCOVERED}] * 4
