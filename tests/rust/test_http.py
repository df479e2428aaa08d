"""One trace across languages with Rust over streamable HTTP on 127.0.0.1 (rust/http's programs,
instrumented with mcp_otel as docs/rust.md shows, no propagator set), each test on rmcp 3.11 and
on 3.1 (rust/http/lowest: the same programs).

A Rust agent (httpagent: rmcp's streamable HTTP client, mcp_otel::client) calls a Python, a
TypeScript (v1 and v2) and a Go server instrumented with mcp-otel, each the HTTP server the other
languages' tests start. Each call is one trace, the server's span the Rust CLIENT span's child,
both stating the same facts with the same strings, but what the Rust client cannot know
(RUST_HTTP_CLIENT_LACKS). The Rust agent gives a call up by dropping its future: rmcp 3.11 then
sends notifications/cancelled in a POST of its own and drops the call's response stream; a
stateful server reads the cancel (cancelled/client), the TypeScript v2 handler (stateless for
rmcp's 2025-11-25 session) cannot tie it to the call and sees the stream closed first
(cancelled/disconnect).

Python, TypeScript (v1, v2) and Go agents call a Rust server (httpserver: rmcp's
StreamableHttpService, each session served by the instrumented handler through
mcp_otel_http::Sessions, each request without a session traced by McpOtel::sessionless): one trace
per call, in a session (the handshake era), in rmcp's stateless mode, and of a 2026-07-28 client
(the Go SDK's), which has no session."""

from __future__ import annotations

import json
import select
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_otel.semconv import (
    CLIENT_ADDRESS,
    CLIENT_PORT,
    MCP_PROTOCOL_VERSION,
    MCP_SERVER_VERSION,
    MCP_SESSION_ID,
    SERVER_ADDRESS,
    SERVER_PORT,
    CancelReason,
    ErrorType,
)
from tests.go.conftest import GO_CANNOT_KNOW, GO_SERVER_NAME, GO_SERVER_VERSION, GO_SPAN_FILE_ENV, Programs, go_spans
from tests.go.conftest import go_programs as go_programs  # the fixture, for the Go peers
from tests.go.test_cross_language import (
    CANCELLED,
    FAILED,
    GO_CALLS,
    OK,
    Call,
    Peers,
    assert_children_of_the_caller,
    assert_each_call,
    ended,
    run_agent,
)
from tests.harness import MCP_MAJOR, REPO_ROOT, env_without_otel, is_error, open_http_session
from tests.node.conftest import (
    AGENT,
    NODE_PACKAGE,
    TS_SPAN_FILE_ENV,
    TYPESCRIPT_PEERS,
    Span,
    python_file_spans,
    python_spans,
    tool_calls,
    ts_spans,
)
from tests.processes import LOOPBACK, free_port, no_python_sdk, running, stop, wait_until
from tests.rust.conftest import (
    DISCOVERED,
    GO_SERVER,
    HANDSHAKE,
    RUST_SERVER_NAME,
    RUST_SERVER_VERSION,
    RUST_SPAN_FILE_ENV,
    RmcpPrograms,
    assert_rmcps_own,
)
from tests.servers.span_file import SPAN_FILE_ENV
from tests.servers.tools import SERVER_NAME

CALLER, CLIENT, DISCONNECT = CancelReason.CALLER.value, CancelReason.CLIENT.value, CancelReason.DISCONNECT.value
# What the Rust client's spans do not state over HTTP: the session's id (rmcp's HTTP client does not
# show it), and the caller's address (the server's fact).
RUST_HTTP_CLIENT_LACKS = (MCP_SESSION_ID, CLIENT_ADDRESS, CLIENT_PORT)
# The TypeScript server (node/test/fixtures/transports/server.cjs) of each generation.
TS_HTTP_SERVER = NODE_PACKAGE / "test" / "fixtures" / "transports" / "server.cjs"
TS_SPANS_FILE_ENV = "MCP_OTEL_SPANS_FILE"


def given_up(server_said: str) -> Call:
    """``slow``, its future dropped by the Rust caller after 300 ms; the server says ``server_said``."""
    caller, server = ended(CANCELLED, cancel=CALLER), ended(CANCELLED, cancel=server_said)
    return ("slow", 300, {"error": "aborted"}, caller, server, "UNSET")


def answered(tool: str) -> Call:
    return (tool, None, {"isError": False}, ended(OK), ended(OK), "UNSET")


def tool_error(tool: str) -> Call:
    said = ended(FAILED, error=ErrorType.TOOL_ERROR)
    return (tool, None, {"isError": True}, said, said, "ERROR")


@dataclass(frozen=True)
class HttpServer:
    """An instrumented streamable HTTP server the Rust agent calls: what the agent calls (each
    call's arguments beside), where the server writes its spans and how they are read, what both
    sides say of the connection, and whether the server has sessions (it states their id)."""

    calls: list[Call]
    span_file_env: str
    spans: Callable[[Path], list[Span]]
    peers: Peers
    stateful: bool
    arguments: list[dict[str, Any]] = field(default_factory=list)


def transports_spans(path: Path) -> list[Span]:
    """The spans node/test/fixtures/transports/server.cjs wrote to ``path`` (its events skipped)."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []
    return [
        Span(
            line["name"],
            line["kind"],
            line["traceId"],
            line["spanId"],
            line.get("parentSpanId"),
            line["status"],
            line["attributes"],
        )
        for line in lines
        if line["type"] == "span"
    ]


# The Python high-level server (tests/servers/highlevel_server.py): ``fails`` raises, which the SDK
# answers with an isError result. It is made with a name only, and its spans state no version:
# FastMCP (mcp 1.x) reports the SDK's in its handshake, MCPServer (2.x) an empty one (the test of
# what the Rust client states of it is below).
PYTHON_HTTP = HttpServer(
    calls=[answered("ok"), tool_error("fails"), given_up(CLIENT), answered("ok")],
    span_file_env=SPAN_FILE_ENV,
    spans=python_file_spans,
    peers=Peers(
        HANDSHAKE,
        SERVER_NAME,
        version("mcp"),  # not compared: the server states none
        "tcp",
        client_lacks=RUST_HTTP_CLIENT_LACKS,
        server_lacks=(MCP_SERVER_VERSION,),
    ),
    stateful=True,
)
# The TypeScript server's tools: ``echo`` {text} (without it the SDK answers an isError result: the
# arguments fail the tool's schema) and ``slow`` {ms}. v1 serves a session per initialize; v2's
# createMcpHandler serves rmcp's 2025-11-25 requests statelessly.
TS_CALLS = [answered("echo"), tool_error("echo"), given_up(CLIENT), answered("echo")]
TS_ARGUMENTS: list[dict[str, Any]] = [{"text": "hi"}, {}, {"ms": 5000}, {"text": "hi"}]
GO_HTTP = HttpServer(
    calls=[answered("ok"), tool_error("tool_error"), given_up(CLIENT), answered("ok")],
    span_file_env=GO_SPAN_FILE_ENV,
    spans=go_spans,
    peers=Peers(HANDSHAKE, GO_SERVER_NAME, GO_SERVER_VERSION, "tcp", RUST_HTTP_CLIENT_LACKS, GO_CANNOT_KNOW),
    stateful=True,
)


def typescript_http(generation: str) -> HttpServer:
    calls = TS_CALLS if generation == "v1" else [*TS_CALLS[:2], given_up(DISCONNECT), TS_CALLS[3]]
    peers = Peers(HANDSHAKE, f"transports-{generation}", "3.1.4", "tcp", client_lacks=RUST_HTTP_CLIENT_LACKS)
    return HttpServer(calls, TS_SPANS_FILE_ENV, transports_spans, peers, generation == "v1", TS_ARGUMENTS)


@contextmanager
def printing_its_port(command: list[str], env: dict[str, str], log: Path) -> Iterator[int]:
    """Start a server program that prints ``{"port": N}`` once it listens (the TypeScript, Go and
    Rust ones): its port; stopped by its PID at the end."""
    with log.open("wb") as errors:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, env=env, cwd=REPO_ROOT)
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 60)
        line = process.stdout.readline() if ready else b""
        if not line:
            raise RuntimeError(f"{command[0]} did not start (exit code {process.poll()}):\n{log.read_text()[-3000:]}")
        yield int(json.loads(line)["port"])
    finally:
        stop(process)


@contextmanager
def http_server(name: str, server: HttpServer, directory: Path, go: Callable[[], Programs]) -> Iterator[int]:
    """The server ``name`` ("python", a TypeScript generation, "go") on 127.0.0.1, writing its
    spans to ``directory``/server.jsonl: its port."""
    env = env_without_otel(PYTHONPATH=str(REPO_ROOT), **{server.span_file_env: str(directory / "server.jsonl")})
    log = directory / "server.log"
    if name == "python":
        port = free_port()
        command = [sys.executable, "-m", "tests.servers.highlevel_server", "http", str(port)]
        with running(command, ports=[port], log=log, env=env, cwd=REPO_ROOT):
            yield port
        return
    command = [str(go().server), "http"] if name == "go" else ["node", str(TS_HTTP_SERVER), name, "http"]
    with printing_its_port(command, env, log) as port:
        yield port


def http_peer(name: str) -> HttpServer:
    return {"python": PYTHON_HTTP, "go": GO_HTTP}.get(name) or typescript_http(name)


def finished(spans: Callable[[Path], list[Span]], span_file: Path, count: int, log: Path) -> list[Span]:
    """A server's spans (read by ``spans``) once ``count`` of tools/call are there: each is written
    as it ends, which may be just after its answer."""
    wait_until(lambda: len(tool_calls(spans(span_file), "SERVER")) == count, 30, "the server's spans", log)
    return spans(span_file)


@dataclass(frozen=True)
class HttpRun:
    printed: list[str]
    agent: list[Span]
    server: list[Span]


def run_rust_agent(agent: Path, url: str, server: HttpServer, agent_file: Path) -> list[str]:
    """The Rust agent runs ``server``'s calls against ``url``: what it printed, line by line."""
    arguments = server.arguments or [{}] * len(server.calls)
    steps = [
        {"tool": tool, "arguments": given, **({} if abort is None else {"abortAfterMs": abort})}
        for (tool, abort, *_), given in zip(server.calls, arguments, strict=True)
    ]
    env = env_without_otel(MCP_PLAN=json.dumps(steps), **{RUST_SPAN_FILE_ENV: str(agent_file)})
    completed = subprocess.run([str(agent), url], env=env, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.splitlines()


SERVERS = ["python", *TYPESCRIPT_PEERS, GO_SERVER]


@pytest.fixture(scope="module", params=SERVERS)
def rust_http_agent_run(
    request: pytest.FixtureRequest, rust_http_programs: RmcpPrograms, tmp_path_factory: pytest.TempPathFactory
) -> tuple[HttpRun, HttpServer]:
    """The Rust agent calls each server over streamable HTTP, once on each rmcp version. rmcp 3.1
    sends nothing for a dropped call (from 3.6 on, notifications/cancelled), so what a server then
    records is its own affair, not the crate's: on 3.1 the agent gives no call up."""
    server = http_peer(request.param)
    if not rust_http_programs.cancels_dropped_calls:
        kept = [index for index, (_, abort, *_) in enumerate(server.calls) if abort is None]
        given = server.arguments and [server.arguments[index] for index in kept]
        server = replace(server, calls=[server.calls[index] for index in kept], arguments=given)
    directory = tmp_path_factory.mktemp(f"rust-http-agent-{request.param}")
    agent_file, server_file = directory / "agent.jsonl", directory / "server.jsonl"
    go = lambda: request.getfixturevalue("go_programs")  # noqa: E731 (built only for the Go server)
    with http_server(request.param, server, directory, go) as port:
        printed = run_rust_agent(rust_http_programs.agent, f"http://{LOOPBACK}:{port}/mcp", server, agent_file)
        server_spans = finished(server.spans, server_file, len(server.calls), directory / "server.log")
    return HttpRun(printed, ts_spans(agent_file), server_spans), server


def test_a_rust_agents_calls_over_streamable_http_and_the_server_are_one_trace(
    rust_http_agent_run: tuple[HttpRun, HttpServer],
) -> None:
    run, server = rust_http_agent_run
    clients, servers = tool_calls(run.agent, "CLIENT"), tool_calls(run.server, "SERVER")
    assert_each_call(server.calls, run.printed, clients, servers, server.peers)
    assert_rmcps_own(run.agent, run.server, clients, server.calls)
    # A stateful server states one session's id on every call; the stateless one none.
    sessions = {span.attributes.get(MCP_SESSION_ID) for span in servers}
    assert len(sessions) == 1
    (session,) = sessions
    assert isinstance(session, str) if server.stateful else session is None


@pytest.mark.parametrize("rust_http_agent_run", ["python"], indirect=True)
def test_the_rust_client_states_the_version_the_python_server_reports(
    rust_http_agent_run: tuple[HttpRun, HttpServer],
) -> None:
    """FastMCP (mcp 1.x) reports the SDK's version; MCPServer (2.x) an empty one: none to state."""
    run, _ = rust_http_agent_run
    reported = version("mcp") if MCP_MAJOR == 1 else None
    assert {span.attributes.get(MCP_SERVER_VERSION) for span in run.agent} == {reported}


# --- Python, TypeScript and Go agents, a Rust server over streamable HTTP ---

# rust/http's httpserver: rmcp's StreamableHttpService, each session served by the handler
# instrumented with mcp_otel (mcp_otel_http::Sessions). What its spans do not state over HTTP: the
# agent's own view of the server's address. A session's id is on each of its spans, as the agent's.
RUST_HTTP_SERVER_LACKS = (SERVER_ADDRESS, SERVER_PORT)
RUST_HTTP_SERVER_PEERS = Peers(
    HANDSHAKE, RUST_SERVER_NAME, RUST_SERVER_VERSION, "tcp", server_lacks=RUST_HTTP_SERVER_LACKS
)
# What the agents call (crosstools): an answer, a tool error, a call given up after 300 ms (the
# TypeScript agent's), one more answer.
AGENT_CALLS = [answered("ok"), tool_error("tool_error"), given_up(CLIENT), answered("ok")]


# rmcp's modes: sessions (each served through Sessions), or none (McpOtel::sessionless), each answer
# in an event stream or (STATELESS_JSON) one JSON body.
STATEFUL, STATELESS, STATELESS_JSON = "stateful", "stateless", "stateless-json"


@contextmanager
def rust_http_server(programs: Programs, directory: Path, mode: str = STATEFUL) -> Iterator[tuple[str, Path]]:
    """The Rust server on 127.0.0.1 in ``mode`` (rmcp's stateful or stateless): its URL, and the
    file of its spans."""
    span_file = directory / "server.jsonl"
    env = env_without_otel(**{RUST_SPAN_FILE_ENV: str(span_file)})
    command = [str(programs.server), *([mode] if mode != STATEFUL else [])]
    with printing_its_port(command, env, directory / "server.log") as port:
        yield f"http://{LOOPBACK}:{port}/mcp", span_file


@pytest.mark.anyio
@pytest.mark.parametrize("mode", [STATEFUL, STATELESS, STATELESS_JSON])
async def test_a_python_agents_calls_and_the_rust_http_server_are_one_trace(
    mode: str,
    rust_http_programs: Programs,
    instrument: Callable[..., Any],
    exporter: InMemorySpanExporter,
    tmp_path: Path,
) -> None:
    instrument()
    calls = AGENT_CALLS[:2]
    with rust_http_server(rust_http_programs, tmp_path, mode) as (url, span_file):
        async with open_http_session(url) as session:
            answers = [is_error(await session.call_tool(tool, {})) for tool, *_ in calls]
        server_spans = finished(ts_spans, span_file, len(calls), tmp_path / "server.log")
    assert answers == [False, True]
    agent_spans = python_spans(exporter.get_finished_spans())
    clients, servers = tool_calls(agent_spans, "CLIENT"), tool_calls(server_spans, "SERVER")
    assert_each_call(calls, None, clients, servers, RUST_HTTP_SERVER_PEERS)
    # Every request the Rust server handled (the handshake, the SDK's tools/list) is a child of the
    # Python agent's span of it.
    requests = [span for span in server_spans if not span.name.startswith("notifications/")]
    assert sorted(span.name for span in requests) == [
        "initialize",
        "tools/call ok",
        "tools/call tool_error",
        "tools/list",
    ]
    assert_children_of_the_caller(requests, agent_spans)


@pytest.mark.parametrize("generation", TYPESCRIPT_PEERS)
def test_a_typescript_agents_calls_and_the_rust_http_server_are_one_trace(
    generation: str, rust_http_programs: Programs, tmp_path: Path
) -> None:
    agent_file = tmp_path / "agent.jsonl"
    with rust_http_server(rust_http_programs, tmp_path) as (url, span_file):
        command = ["node", str(AGENT), generation, url]
        *printed, done = run_agent(command, AGENT_CALLS, (TS_SPAN_FILE_ENV, agent_file), {})
        server_spans = finished(ts_spans, span_file, len(AGENT_CALLS), tmp_path / "server.log")
    assert done == "round 1 done"
    agent_spans = ts_spans(agent_file)
    clients, servers = tool_calls(agent_spans, "CLIENT"), tool_calls(server_spans, "SERVER")
    assert_each_call(AGENT_CALLS, printed, clients, servers, RUST_HTTP_SERVER_PEERS)
    requests = [span for span in server_spans if not span.name.startswith("notifications/")]
    assert [span.name for span in requests] == ["initialize", *(span.name for span in servers)]
    assert_children_of_the_caller(requests, agent_spans)


# A 2026-07-28 session (the Go SDK's client): no handshake and no session. The call the Go agent
# gives up closes its request's stream, the 2026-07-28 cancel: disconnect on the Rust server.
GO_AGENT_CALLS = [
    (tool, abort, said, caller, server if abort is None else ended(CANCELLED, cancel=DISCONNECT), status)
    for tool, abort, said, caller, server, status in GO_CALLS
]
GO_AGENT_PEERS = Peers(DISCOVERED, RUST_SERVER_NAME, RUST_SERVER_VERSION, "tcp", GO_CANNOT_KNOW, RUST_HTTP_SERVER_LACKS)


@no_python_sdk
def test_a_2026_07_28_agents_calls_and_the_rust_http_server_are_one_trace(
    go_programs: Programs, rust_http_programs: Programs, tmp_path: Path
) -> None:
    """The Go SDK's client asks server/discover first; rmcp answers it and serves every request of
    the 2026-07-28 session without a session, from its factory's handler, where
    McpOtel::sessionless gives each its SERVER span, the child of the Go agent's span of it."""
    agent_file = tmp_path / "agent.jsonl"
    with rust_http_server(rust_http_programs, tmp_path) as (url, span_file):
        printed = run_agent([str(go_programs.agent), url], GO_AGENT_CALLS, (GO_SPAN_FILE_ENV, agent_file), {})
        server_spans = finished(ts_spans, span_file, len(GO_AGENT_CALLS), tmp_path / "server.log")
    agent_spans = ts_spans(agent_file)
    clients, servers = tool_calls(agent_spans, "CLIENT"), tool_calls(server_spans, "SERVER")
    assert_each_call(GO_AGENT_CALLS, printed, clients, servers, GO_AGENT_PEERS)
    assert [(span.name, span.attributes.get(MCP_PROTOCOL_VERSION)) for span in agent_spans] == [
        ("server/discover", None),
        *((f"tools/call {tool}", DISCOVERED) for tool, *_ in GO_AGENT_CALLS),
    ]
    # The probe too; the cancel the Go SDK also posts carries no context (docs/go.md): a root.
    requests = [span for span in server_spans if not span.name.startswith("notifications/")]
    assert [span.name for span in requests] == ["server/discover", *(span.name for span in servers)]
    assert_children_of_the_caller(requests, agent_spans)
    (cancel,) = (span for span in server_spans if span.name.startswith("notifications/"))
    assert (cancel.name, cancel.parent_id) == ("notifications/cancelled", None)
