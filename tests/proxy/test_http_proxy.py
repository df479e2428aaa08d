"""``mcp-otel proxy --listen --upstream`` in front of this major's high-level server over
streamable HTTP on 127.0.0.1: as the server (the upstream uninstrumented, this process's client
instrumented) and as the client (the upstream instrumented, the client not). Exact outcomes,
parentage across the proxy (one trace, one span per request per side), points, answers as a
direct connection gets them, and the HTTP facts: a 401 before JSON-RPC, each era's cancel, the
upstream unreachable or dying mid-answer, a ``traceparent`` header."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_otel.proxy.http import Sse, _relayed
from mcp_otel.semconv import MCP_SERVER_OPERATION_DURATION, MCP_SERVER_SESSION_DURATION
from tests.conftest import tool_call_spans
from tests.harness import MCP_MAJOR, REPO_ROOT, env_without_otel, open_http_session
from tests.processes import LOOPBACK, free_port, missing, running, wait_until
from tests.proxy import otlp
from tests.servers.span_file import SPAN_FILE_ENV
from tests.servers.tools import SERVER_NAME

pytestmark = pytest.mark.anyio

MCP_OTEL = str(Path(sys.executable).with_name("mcp-otel"))
TOKEN = "s3cret"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


@dataclass
class Proxied:
    url: str  # the proxy's, where the client connects
    upstream: str
    output: Path  # the proxy's telemetry
    span_file: Path  # the upstream's spans, when it is instrumented
    proxy: subprocess.Popen[bytes]
    server: subprocess.Popen[bytes]

    def stop(self) -> list[dict[str, Any]]:
        """Stop the proxy (SIGTERM); its spans, once its last export is written."""
        if self.proxy.poll() is None:
            self.proxy.send_signal(signal.SIGTERM)
            assert self.proxy.wait(timeout=20) == 0
        return otlp.spans(self.output)

    def server_spans(self) -> list[dict[str, Any]]:
        if not self.span_file.exists():
            return []
        return [json.loads(line) for line in self.span_file.read_text().splitlines()]


@contextmanager
def proxied(
    tmp_path: Path, *options: str, instrumented: bool = False, token: str | None = None, exporter: str | None = None
) -> Iterator[Proxied]:
    """The high-level test server over HTTP (instrumented, writing to a span file, if asked) with
    the proxy in front (exporting to OTLP at ``exporter`` too, if given); both stopped by PID
    afterwards."""
    upstream_port, port = free_port(), free_port()
    span_file = tmp_path / "server-spans.jsonl"
    env = env_without_otel(PYTHONPATH=str(REPO_ROOT))
    if instrumented:
        env[SPAN_FILE_ENV] = str(span_file)
    server_command = [sys.executable, "-m", "tests.servers.highlevel_server", "http", str(upstream_port)]
    upstream = f"http://{LOOPBACK}:{upstream_port}/mcp"
    output = tmp_path / "proxy.jsonl"
    proxy_command = [MCP_OTEL, "proxy", *options, "--listen", f"{LOOPBACK}:{port}", "--upstream", upstream]
    with (
        running(
            [*server_command, *([token] if token else [])],
            ports=[upstream_port],
            env=env,
            cwd=REPO_ROOT,
            log=tmp_path / "server.log",
        ) as server,
        running(
            [*proxy_command, "--output", str(output)],
            ports=[port],
            env={**env, **({"OTEL_EXPORTER_OTLP_ENDPOINT": exporter} if exporter else {})},
            cwd=REPO_ROOT,
            log=tmp_path / "proxy.log",
        ) as proxy,
    ):
        yield Proxied(f"http://{LOOPBACK}:{port}/mcp", upstream, output, span_file, proxy, server)


def named(spans: list[dict[str, Any]], name: str, kind: str = "SpanKind.SERVER") -> dict[str, Any]:
    (span,) = [span for span in spans if span["name"] == name and span["kind"] == kind]
    return span


def outcome_of(span: dict[str, Any]) -> tuple[str, str, str | None, str | None]:
    attributes = span["attributes"]
    return (
        span["status"]["status_code"],
        attributes.get("mcp.request.outcome"),
        attributes.get("error.type"),
        attributes.get("mcp.request.cancel.reason"),
    )


async def call(session: Any, tool: str, **arguments: Any) -> Any:
    try:
        return await session.call_tool(tool, arguments)
    except Exception as exc:
        return exc


# --- as the server ----------------------------------------------------------------------------


async def test_as_server_outcomes_in_the_clients_trace(
    tmp_path: Path, instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    """An instrumented agent, the proxy standing in for an uninstrumented server: one SERVER span
    per request, its outcome what an instrumented server states, the client's span its parent;
    the answers are the ones a direct connection gets."""
    instrument()
    with proxied(tmp_path) as setup:
        async with open_http_session(setup.upstream) as direct:
            expected = [(await direct.call_tool(tool, {})).model_dump() for tool in ("ok", "fails")]
        exporter.clear()
        async with open_http_session(setup.url) as session:
            session_id = (await session.call_tool("session", {})).content[0].text
            answers = [(await session.call_tool(tool, {})).model_dump() for tool in ("ok", "fails")]
            rejected = await call(session, "rejects")
            faulted = await call(session, "faults")
        spans = setup.stop()
    assert answers == expected
    ok, fails, rejects, faults = (named(spans, f"tools/call {tool}") for tool in ("ok", "fails", "rejects", "faults"))
    assert outcome_of(ok) == ("UNSET", "ok", None, None)
    assert outcome_of(fails) == ("ERROR", "failed", "tool_error", None)
    if MCP_MAJOR == 2:  # MCPServer answers the tool's MCP error as a JSON-RPC error with its code
        assert isinstance(rejected, Exception)
        assert isinstance(faulted, Exception)
        # -32602 blames the request (status UNSET and no error.type on the server's span, semconv);
        # -32603 is the server's.
        assert outcome_of(rejects) == ("UNSET", "failed", None, None)
        assert rejects["attributes"]["rpc.response.status_code"] == "-32602"
        assert outcome_of(faults) == ("ERROR", "failed", "-32603", None)
        assert faults["attributes"]["rpc.response.status_code"] == "-32603"
    else:  # FastMCP 1.x answers both isError
        assert outcome_of(rejects) == ("ERROR", "failed", "tool_error", None)
        assert outcome_of(faults) == ("ERROR", "failed", "tool_error", None)
    for span in (ok, fails, rejects, faults):
        attributes = span["attributes"]
        assert attributes["network.transport"] == "tcp"
        assert attributes["client.address"] == LOOPBACK
        assert isinstance(attributes["client.port"], int)
        assert attributes["mcp.session.id"] == session_id
        assert attributes["mcp.server.name"] == SERVER_NAME
        assert attributes["tool.outcome"] == attributes["mcp.request.outcome"]
    clients = {span.name: span for span in tool_call_spans(exporter.get_finished_spans())}
    for span in (ok, fails, rejects, faults):
        client = clients[span["name"]].get_span_context()
        assert span["context"]["trace_id"] == f"0x{client.trace_id:032x}"
        assert span["parent_id"] == f"0x{client.span_id:016x}"
    # One point per request, the same outcome as its span; the session's duration once.
    points = otlp.points(setup.output, MCP_SERVER_OPERATION_DURATION)
    tool_points = {p["attributes"]["gen_ai.tool.name"]: p for p in points if "gen_ai.tool.name" in p["attributes"]}
    counts = {tool: p["count"] for tool, p in tool_points.items()}
    assert counts == {"session": 1, "ok": 1, "fails": 1, "rejects": 1, "faults": 1}
    assert tool_points["fails"]["attributes"]["mcp.request.outcome"] == "failed"
    if MCP_MAJOR == 2:  # the point carries the code as the span does
        assert tool_points["rejects"]["attributes"]["rpc.response.status_code"] == "-32602"
        assert "error.type" not in tool_points["rejects"]["attributes"]
    assert "client.address" not in tool_points["ok"]["attributes"]  # not a metric dimension
    (session_point,) = otlp.points(setup.output, MCP_SERVER_SESSION_DURATION)
    assert session_point["count"] == 1
    # The conventions' session attributes only (no network.transport there), and the server's name.
    assert set(session_point["attributes"]) == {"mcp.protocol.version", "mcp.server.name"}


async def test_a_request_refused_before_json_rpc(tmp_path: Path) -> None:
    """The upstream refuses the request with 401 (no JSON-RPC answer): the client's request
    failed, error.type the HTTP status; on the SERVER span the caller's fault (status UNSET, no
    error.type, as HTTP's conventions say of a 4xx on a server)."""
    with proxied(tmp_path, token=TOKEN) as setup:
        body = INITIALIZE
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        status, answer = _post(setup.url, body, headers)
        direct = _post(setup.upstream, body, headers)
        spans = setup.stop()
    assert (status, answer) == direct == (401, b'{"error":"invalid_token"}')
    span = named(spans, "initialize")
    assert outcome_of(span) == ("UNSET", "failed", None, None)
    assert span["attributes"]["http.response.status_code"] == 401


@pytest.mark.mcp2
async def test_a_2026_client_cancels_by_closing_the_stream(tmp_path: Path) -> None:
    """On 2026-07-28 a client cancels by closing its request's stream: the proxy sees it at once
    (cancelled, ``disconnect``, as an instrumented server states), and so does the upstream."""
    from mcp import Client

    with proxied(tmp_path) as setup:
        async with Client(setup.url) as client:
            with anyio.move_on_after(0.5):
                await client.call_tool("slow", {"seconds": 5})
            assert (await client.call_tool("ok", {})).content[0].text == "ok"
        spans = setup.stop()
    slow = named(spans, "tools/call slow")
    assert outcome_of(slow) == ("UNSET", "cancelled", None, "disconnect")
    assert slow["attributes"]["mcp.protocol.version"] == "2026-07-28"
    assert "mcp.session.id" not in slow["attributes"]
    assert outcome_of(named(spans, "tools/call ok")) == ("UNSET", "ok", None, None)


@pytest.mark.mcp2
async def test_a_handshake_era_client_cancels_with_a_notification(tmp_path: Path) -> None:
    """Before 2026-07-28 the client's notifications/cancelled is its cancel (``client``)."""
    from mcp import Client

    started = anyio.Event()

    async def arrived(*_: Any) -> None:  # the tool's first progress: the request reached it
        started.set()

    with proxied(tmp_path) as setup:
        async with Client(setup.url, mode="legacy") as client:
            # Cancelled once the server has the call, not after a fixed time: on a loaded machine
            # a call cancelled before it is sent has no span (nothing was sent).
            with anyio.CancelScope() as scope:
                async with anyio.create_task_group() as group:
                    group.start_soon(lambda: _cancel_when(started, scope))
                    await client.call_tool("working", {}, progress_callback=arrived)
            await anyio.sleep(0.5)
        spans = setup.stop()
    assert outcome_of(named(spans, "tools/call working")) == ("UNSET", "cancelled", None, "client")


async def _cancel_when(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


async def test_the_upstream_dying_mid_answer_fails_the_request(tmp_path: Path) -> None:
    """The server dies with a call in flight: a failure, the server's (what the client then does
    is its SDK's: mcp 1.x's keeps waiting, so the test stops waiting for it)."""
    with proxied(tmp_path) as setup:
        async with open_http_session(setup.url) as session:
            task = asyncio.ensure_future(call(session, "slow", seconds=5))
            await asyncio.sleep(0.5)
            setup.server.kill()
            with anyio.move_on_after(3):
                await asyncio.shield(task)
            task.cancel()
        spans = setup.stop()
    assert outcome_of(named(spans, "tools/call slow")) == ("ERROR", "failed", "connection_closed", None)


async def test_an_unreachable_upstream_fails_the_request(tmp_path: Path) -> None:
    with proxied(tmp_path) as setup:
        setup.server.kill()
        setup.server.wait()
        body = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
        status, _ = _post(setup.url, body, {"content-type": "application/json"})
        spans = setup.stop()
    assert status == 502
    assert outcome_of(named(spans, "tools/list")) == ("ERROR", "failed", "connection_closed", None)


@contextmanager
def closing_upstream(tmp_path: Path, mode: str) -> Iterator[Proxied]:
    """The proxy in front of :mod:`tests.servers.closing_server` in ``mode``; what that server
    read is in ``server.log``'s sibling ``handled.log``."""
    upstream_port, port = free_port(), free_port()
    upstream = f"http://{LOOPBACK}:{upstream_port}/mcp"
    output, handled = tmp_path / "proxy.jsonl", tmp_path / "handled.log"
    env = env_without_otel(PYTHONPATH=str(REPO_ROOT))
    server_command = [sys.executable, "-m", "tests.servers.closing_server", str(upstream_port), mode, str(handled)]
    proxy_command = [
        MCP_OTEL,
        "proxy",
        "--listen",
        f"{LOOPBACK}:{port}",
        "--upstream",
        upstream,
        "--output",
        str(output),
    ]
    with (
        running(server_command, ports=[upstream_port], env=env, cwd=REPO_ROOT, log=tmp_path / "server.log") as server,
        running(proxy_command, ports=[port], env=env, cwd=REPO_ROOT, log=tmp_path / "proxy.log") as proxy,
    ):
        yield Proxied(f"http://{LOOPBACK}:{port}/mcp", upstream, output, tmp_path / "none.jsonl", proxy, server)


def _two_calls(setup: Proxied) -> list[tuple[int, Any]]:
    """Two tools/call POSTs one after the other: the second goes out on the first's pooled connection."""
    answers = []
    for request_id in (1, 2):
        body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": "ok"}}
        status, data = _post(setup.url, body, {"content-type": "application/json", "accept": "application/json"})
        answers.append((status, json.loads(data) if status == 200 else None))
    return answers


def _handled(tmp_path: Path) -> list[tuple[str, str, str]]:
    return [tuple(line.split()) for line in (tmp_path / "handled.log").read_text().splitlines()]  # type: ignore[misc]


OK_RESULT = {"content": [{"type": "text", "text": "ok"}], "isError": False}


@pytest.mark.parametrize("mode", ["close-reused", "reset-reused"])
def test_a_request_on_a_pooled_connection_the_upstream_closed_goes_out_again(tmp_path: Path, mode: str) -> None:
    """The upstream ends a kept-alive connection as the proxy sends on it (closed or reset, not a
    byte of an answer): the request goes out once more on a new connection, the client gets the
    upstream's answer, and the proxy records what the upstream answered."""
    with closing_upstream(tmp_path, mode) as setup:
        answers = _two_calls(setup)
        spans = setup.stop()
    assert answers == [(200, {"jsonrpc": "2.0", "id": n, "result": OK_RESULT}) for n in (1, 2)]
    # connection 1 answered the first and dropped the second unread; connection 2 is the second try
    assert _handled(tmp_path) == [("1", "1", "answered"), ("1", "2", "dropped"), ("2", "2", "answered")]
    assert [(s["name"], outcome_of(s)) for s in spans] == [("tools/call ok", ("UNSET", "ok", None, None))] * 2


@pytest.mark.parametrize(
    ("mode", "handled"),
    [
        # the answer had begun: the upstream read the request
        ("partial-reused", [("1", "1", "answered"), ("1", "2", "dropped")]),
        # a new connection: nothing says the upstream did not read it
        ("reset-fresh", [("1", "1", "dropped"), ("2", "2", "dropped")]),
    ],
)
def test_a_request_the_upstream_may_have_read_is_not_sent_twice(
    tmp_path: Path, mode: str, handled: list[tuple[str, str, str]]
) -> None:
    """Dropped once the answer began, or on a connection of its own: the client gets the proxy's
    502, the upstream was given the request once, the proxy records the failure it saw."""
    with closing_upstream(tmp_path, mode) as setup:
        answers = _two_calls(setup)
        spans = setup.stop()
    expected_first = (502, None) if mode == "reset-fresh" else (200, {"jsonrpc": "2.0", "id": 1, "result": OK_RESULT})
    assert answers == [expected_first, (502, None)]
    assert _handled(tmp_path) == handled
    failed = ("ERROR", "failed", "connection_closed", None)
    assert [outcome_of(s) for s in spans] == ([failed] * 2 if mode == "reset-fresh" else [outcome_of(spans[0]), failed])


def test_a_request_answered_on_another_stream_is_unobserved(tmp_path: Path) -> None:
    """A POST answered 202 with no answer in it (as over HTTP+SSE, where the answer comes on the
    session's event stream): the proxy did not see the request's answer, so it records no span and
    no point for it, only a count of one unobserved request and why; the other request is as ever."""
    from mcp_otel.semconv import (
        MCP_OTEL_UNOBSERVED_REASON,
        MCP_OTEL_UNOBSERVED_REQUESTS,
        UnobservedReason,
    )

    with closing_upstream(tmp_path, "accepted") as setup:
        answers = _two_calls(setup)
        spans = setup.stop()
    assert [status for status, _ in answers] == [200, 202]
    assert _handled(tmp_path) == [("1", "1", "answered"), ("1", "2", "accepted")]
    assert [(s["attributes"]["jsonrpc.request.id"], outcome_of(s)) for s in spans] == [
        ("1", ("UNSET", "ok", None, None))
    ]
    (point,) = otlp.points(setup.output, MCP_OTEL_UNOBSERVED_REQUESTS)
    assert point["attributes"][MCP_OTEL_UNOBSERVED_REASON] == UnobservedReason.ANSWER_ELSEWHERE.value
    assert (point["attributes"]["mcp.method.name"], point["value"]) == ("tools/call", 1)
    assert sum(p["count"] for p in otlp.points(setup.output, MCP_SERVER_OPERATION_DURATION)) == 1


async def test_a_traceparent_header_is_the_parent_when_meta_has_none(tmp_path: Path) -> None:
    trace_id, span_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    with proxied(tmp_path) as setup:
        body = INITIALIZE
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "traceparent": f"00-{trace_id}-{span_id}-01",
        }
        status, _ = _post(setup.url, body, headers)
        spans = setup.stop()
    assert status == 200
    span = named(spans, "initialize")
    assert (span["context"]["trace_id"], span["parent_id"]) == (f"0x{trace_id}", f"0x{span_id}")


# --- as the client ----------------------------------------------------------------------------


async def test_as_client_in_front_of_an_instrumented_server(tmp_path: Path) -> None:
    """An uninstrumented client, the proxy standing in for it: one CLIENT span per request, the
    server's SERVER span its child (the proxy's context in ``_meta``), one trace."""
    with proxied(tmp_path, "--as", "client", instrumented=True) as setup:
        async with open_http_session(setup.url) as session:
            await session.call_tool("ok", {})
            await session.call_tool("fails", {})
        spans = setup.stop()
        server_spans = setup.server_spans()
    port = int(setup.upstream.split(":")[2].split("/")[0])
    for tool, expected in (("ok", ("UNSET", "ok", None, None)), ("fails", ("ERROR", "failed", "tool_error", None))):
        client = named(spans, f"tools/call {tool}", "SpanKind.CLIENT")
        assert outcome_of(client) == expected
        assert client["attributes"]["server.address"] == LOOPBACK
        assert client["attributes"]["server.port"] == port
        (server,) = [s for s in server_spans if s["name"] == f"tools/call {tool}" and s["kind"] == "SpanKind.SERVER"]
        assert server["context"]["trace_id"] == client["context"]["trace_id"]
        assert server["parent_id"] == client["context"]["span_id"]
        assert server["attributes"]["mcp.request.outcome"] == client["attributes"]["mcp.request.outcome"]
    assert not [s for s in spans if s["kind"] == "SpanKind.SERVER"]


# --- the pieces -------------------------------------------------------------------------------


def test_server_sent_events_are_cut_across_chunks() -> None:
    events: list[bytes] = []
    sse = Sse(events.append)
    for chunk in (b"event: message\r\nda", b'ta: {"a":1}\r\n\r\nid: 2\ndata:x\ndata: y\n', b"\n: comment\n\n"):
        sse.feed(chunk)
    assert events == [b'{"a":1}', b"x\ny"]
    bounded = Sse(events.append, limit=8)
    bounded.feed(b"data: 12345\ndata: 6789\n\ndata: ok\n\n")  # the first event is past the limit
    assert events[2:] == [b"ok"]


def test_the_default_output_is_named_after_the_upstream() -> None:
    from mcp_otel.proxy.telemetry import default_output

    assert default_output("127.0.0.1:9000", {"XDG_STATE_HOME": "/s"}).name == "127.0.0.1_9000.jsonl"


def test_hop_by_hop_headers_are_not_relayed() -> None:
    headers = {
        "Authorization": "Bearer t",
        "Connection": "keep-alive, X-Hop",
        "X-Hop": "1",
        "Keep-Alive": "timeout=5",
        "Transfer-Encoding": "chunked",
        "Host": "proxy",
        "Mcp-Session-Id": "abc",
    }
    assert dict(_relayed(headers)) == {"Authorization": "Bearer t", "Mcp-Session-Id": "abc"}


def _post(url: str, body: Any, headers: dict[str, str]) -> tuple[int, bytes]:
    return _post_raw(url, json.dumps(body).encode(), headers)


# --- no Python at either end: the TypeScript SDK and server-everything ------------------------

THIRD_PARTY = REPO_ROOT / "tests" / "third_party"
EVERYTHING = THIRD_PARTY / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


@contextmanager
def everything_proxied(tmp_path: Path) -> Iterator[Proxied]:
    """``server-everything`` in its streamable HTTP mode (on 127.0.0.1 only) with the proxy in front."""
    if not (EVERYTHING.exists() and shutil.which("node")):
        missing("the TypeScript SDK and the npm servers", "third-party")
    upstream_port, port = free_port(), free_port()
    env = env_without_otel(PORT=str(upstream_port))
    server = ["node", "--import", str(THIRD_PARTY / "loopback.mjs"), str(EVERYTHING), "streamableHttp"]
    upstream = f"http://{LOOPBACK}:{upstream_port}/mcp"
    output = tmp_path / "proxy.jsonl"
    proxy = [MCP_OTEL, "proxy", "--name", "server-everything", "--output", str(output)]
    proxy += ["--listen", f"{LOOPBACK}:{port}", "--upstream", upstream]
    with (
        running(server, ports=[upstream_port], env=env, cwd=THIRD_PARTY) as node,
        running(proxy, ports=[port], env=env_without_otel(), cwd=REPO_ROOT) as relay,
    ):
        yield Proxied(f"http://{LOOPBACK}:{port}/mcp", upstream, output, tmp_path / "none", relay, node)


def tool_outcomes(spans: list[dict[str, Any]]) -> list[tuple[str, str, str | None, str | None]]:
    return sorted(
        (
            s["name"],
            s["attributes"]["tool.outcome"],
            s["attributes"].get("error.type"),
            s["attributes"].get("tool.cancel.reason"),
        )
        for s in tool_spans(spans)
    )


def tool_spans(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``tools/call`` spans of a proxy's telemetry."""
    return [s for s in spans if s["attributes"].get("mcp.method.name") == "tools/call"]


def ts_agent(url: str, plan: list[dict[str, Any]], **env: str) -> list[Any]:
    """What the TypeScript SDK's client (``ts_client.mjs``) saw of each call of ``plan``."""
    completed = subprocess.run(
        ["node", str(THIRD_PARTY / "ts_client.mjs"), url],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env_without_otel(), "MCP_PLAN": json.dumps(plan), **env},
        cwd=THIRD_PARTY,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return [json.loads(line) for line in completed.stdout.splitlines()]


def test_a_typescript_agent_and_server_everything_over_http(tmp_path: Path) -> None:
    plan = [
        {"tool": "echo", "arguments": {"message": "hi"}},
        {"tool": "get-sum", "arguments": {"a": "two"}},
        {"tool": "trigger-long-running-operation", "arguments": {"duration": 10, "steps": 10}, "abortAfterMs": 300},
        {"tool": "echo", "arguments": {"message": "after"}},
    ]
    with everything_proxied(tmp_path) as setup:
        seen = ts_agent(setup.url, plan)
        spans = setup.stop()
    assert [step.get("isError", step.get("error")) for step in seen] == [False, True, "aborted", False]
    assert tool_outcomes(spans) == [
        ("tools/call echo", "ok", None, None),
        ("tools/call echo", "ok", None, None),
        ("tools/call get-sum", "failed", "tool_error", None),
        ("tools/call trigger-long-running-operation", "cancelled", None, "client"),
    ]
    assert {s["attributes"]["mcp.server.name"] for s in spans} == {"mcp-servers/everything"}


async def test_an_instrumented_agent_and_server_everything_over_http(
    tmp_path: Path, instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    """The answers are the ones a direct connection gets; each call's SERVER span is the proxy's,
    a child of the agent's CLIENT span."""
    calls = [("echo", {"message": "hi"}), ("get-sum", {"a": 2, "b": 3}), ("get-sum", {"a": "two"})]
    instrument()
    with everything_proxied(tmp_path) as setup:
        async with open_http_session(setup.upstream) as direct:
            expected = [(await direct.call_tool(tool, arguments)).model_dump(mode="json") for tool, arguments in calls]
        exporter.clear()
        async with open_http_session(setup.url) as session:
            seen = [(await session.call_tool(tool, arguments)).model_dump(mode="json") for tool, arguments in calls]
        spans = setup.stop()
    assert seen == expected
    assert tool_outcomes(spans) == [
        ("tools/call echo", "ok", None, None),
        ("tools/call get-sum", "failed", "tool_error", None),
        ("tools/call get-sum", "ok", None, None),
    ]
    clients = tool_call_spans(exporter.get_finished_spans())
    servers = tool_spans(spans)
    assert sorted(s["parent_id"] for s in servers) == sorted(f"0x{c.get_span_context().span_id:016x}" for c in clients)


# --- reliability --------------------------------------------------------------------------------


def test_the_proxy_recovers_when_the_upstream_comes_back(tmp_path: Path) -> None:
    """The upstream goes away (502 meanwhile) and comes back on its port: the proxy serves it
    again without a restart."""
    body = INITIALIZE
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    with proxied(tmp_path) as setup:
        assert _post(setup.url, body, headers)[0] == 200
        setup.server.kill()
        setup.server.wait()
        assert _post(setup.url, body, headers)[0] == 502
        port = setup.upstream.split(":")[2].split("/")[0]
        command = [sys.executable, "-m", "tests.servers.highlevel_server", "http", port]
        env = env_without_otel(PYTHONPATH=str(REPO_ROOT))
        with running(command, ports=[int(port)], env=env, cwd=REPO_ROOT):
            assert _post(setup.url, body, headers)[0] == 200
        spans = setup.stop()
    assert [outcome_of(s)[1:3] for s in spans if s["name"] == "initialize"] == [
        ("ok", None),
        ("failed", "connection_closed"),
        ("ok", None),
    ]


def test_hostile_requests_are_relayed_or_refused_and_the_proxy_goes_on(tmp_path: Path) -> None:
    """A body that is not JSON goes on as it came (the upstream answers it); a 1 MB request line
    is refused by the proxy itself (bounded memory); a 10 MB body is relayed, and refused by the
    upstream; none of it stops the proxy."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    with proxied(tmp_path) as setup:
        assert _post_raw(setup.url, b"{not json", headers) == _post_raw(setup.upstream, b"{not json", headers)
        try:
            refused: Any = _post_raw(setup.url + "?" + "x" * 1_000_000, b"{}", headers)[0]
        except urllib.error.URLError:  # aiohttp closes the connection on a line that long
            refused = "closed"
        assert refused in (400, 414, "closed")
        # The SDK's server refuses a body this large (413) before reading it all: directly, the
        # client sees that refusal or the reset of the rest of its upload; through the proxy
        # (which reads the body whole, up to its own limit) always the refusal.
        big = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 10_000_000}})
        assert _post_raw(setup.url, big.encode(), headers)[0] == 413
        assert _post(setup.url, INITIALIZE, headers)[0] == 200
        assert setup.proxy.poll() is None
        spans = setup.stop()
    assert outcome_of(named(spans, "initialize")) == ("UNSET", "ok", None, None)


def test_the_listener_refuses_what_the_upstream_would_itself(tmp_path: Path) -> None:
    """DNS rebinding: the SDK's server on 127.0.0.1 refuses a foreign Host (421) and Origin (403);
    through the proxy, which sends the upstream its own Host, the proxy refuses them itself with the
    same answers, relays nothing and records nothing. A local page's Origin and a Host named with
    --allow-host pass."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    foreign = {**headers, "Origin": "http://evil.example"}
    with proxied(tmp_path, "--allow-host", "mcp.dev.internal:*") as setup:
        upstream_port, port = urlsplit(setup.upstream).port, urlsplit(setup.url).port
        assert _post(setup.upstream, INITIALIZE, {**headers, "Host": f"evil.example:{upstream_port}"})[0] == 421
        assert _post(setup.upstream, INITIALIZE, foreign)[0] == 403
        assert _post(setup.url, INITIALIZE, {**headers, "Host": f"evil.example:{port}"}) == (
            421,
            b"Invalid Host header",
        )
        assert _post(setup.url, INITIALIZE, foreign) == (403, b"Invalid Origin header")
        assert _post(setup.url, INITIALIZE, {**headers, "Origin": f"http://localhost:{port}"})[0] == 200
        assert _post(setup.url, INITIALIZE, {**headers, "Host": "mcp.dev.internal:8443"})[0] == 200
        spans = setup.stop()
    assert [outcome_of(s)[1] for s in spans] == ["ok", "ok"]  # the two relayed, and nothing of the refused
    said = (tmp_path / "proxy.log").read_text()
    assert said.count("mcp-otel proxy: refused a request (421 Invalid Host header") == 1
    assert "refused a request (403" not in said  # said once, for the first refusal (a port may hold "403")


def test_an_ipv6_loopback_listener(tmp_path: Path) -> None:
    """``--listen [::1]:PORT``: served there, its own Host accepted, a rebinding one refused."""
    upstream_port, port = free_port(), free_port()
    env = env_without_otel(PYTHONPATH=str(REPO_ROOT))
    upstream = f"http://{LOOPBACK}:{upstream_port}/mcp"
    server = [sys.executable, "-m", "tests.servers.highlevel_server", "http", str(upstream_port)]
    proxy = [MCP_OTEL, "proxy", "--listen", f"[::1]:{port}", "--upstream", upstream, "--output", str(tmp_path / "p")]
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    with (
        running(server, ports=[upstream_port], env=env, cwd=REPO_ROOT, log=tmp_path / "server.log"),
        running(proxy, ports=[], env=env, cwd=REPO_ROOT, log=tmp_path / "proxy.log"),
    ):
        url = f"http://[::1]:{port}/mcp"
        wait_until(lambda: _ipv6_listening(port), 30, "the proxy on [::1]", tmp_path / "proxy.log")
        assert _post(url, INITIALIZE, headers)[0] == 200
        assert _post(url, INITIALIZE, {**headers, "Host": f"evil.example:{port}"})[0] == 421


def _ipv6_listening(port: int) -> bool:
    try:
        socket.create_connection(("::1", port), timeout=0.2).close()
    except OSError:
        return False
    return True


def test_an_exporter_that_is_down_changes_nothing_for_the_traffic(tmp_path: Path) -> None:
    body = INITIALIZE
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    with proxied(tmp_path, exporter=f"http://{LOOPBACK}:{free_port()}") as setup:
        answers = [_post(setup.url, {**body, "id": n}, headers)[0] for n in range(5)]
        spans = setup.stop()
    assert answers == [200] * 5
    assert [outcome_of(s)[1] for s in spans if s["name"] == "initialize"] == ["ok"] * 5  # the file has them all


def _post_raw(url: str, data: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_a_thousand_idle_sessions_cost_bounded_memory(tmp_path: Path) -> None:
    """1,000 sessions opened and left idle: the proxy's resident memory grows by a bounded amount
    per session, and a new session is served as before."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    with proxied(tmp_path) as setup:
        assert _post(setup.url, INITIALIZE, headers)[0] == 200
        before = resident_memory(setup.proxy.pid)
        for _ in range(1000):
            assert _post(setup.url, INITIALIZE, headers)[0] == 200
        grown = resident_memory(setup.proxy.pid) - before
        assert _post(setup.url, INITIALIZE, headers)[0] == 200
        spans = setup.stop()
    assert grown < 20 * 1024 * 1024, grown  # about 20 kB a session at most
    assert [outcome_of(s)[1] for s in spans if s["name"] == "initialize"] == ["ok"] * 1002
    # Each was a session until the proxy stopped: one duration point each.
    assert sum(point["count"] for point in otlp.points(setup.output, MCP_SERVER_SESSION_DURATION)) == 1002


def resident_memory(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


async def test_a_handshake_era_client_that_vanishes_mid_call(tmp_path: Path) -> None:
    """Before 2026-07-28 a client that closes its request's stream has not cancelled it (it
    would send notifications/cancelled), and the server finishes what it was asked: the proxy
    reads the answer on, unrelayed, and the request's span has the server's outcome."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    with proxied(tmp_path) as setup:
        session_id = _handshake(setup.url, headers)
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "slow", "arguments": {"seconds": 1}},
        }
        host, port = setup.url.split("//")[1].split("/")[0].split(":")
        _, writer = await asyncio.open_connection(host, int(port))
        body = json.dumps(call).encode()
        head = "".join(f"{name}: {value}\r\n" for name, value in {**headers, "mcp-session-id": session_id}.items())
        writer.write(
            f"POST /mcp HTTP/1.1\r\nhost: {host}:{port}\r\ncontent-length: {len(body)}\r\n{head}\r\n".encode() + body
        )
        await writer.drain()
        await asyncio.sleep(0.3)
        writer.close()  # gone, without a word
        await asyncio.sleep(2)  # the server's answer comes after a second
        spans = setup.stop()
    assert outcome_of(named(spans, "tools/call slow")) == ("UNSET", "ok", None, None)


def _handshake(url: str, headers: dict[str, str]) -> str:
    """A handshake-era session opened by hand: its id."""
    request = urllib.request.Request(url, data=json.dumps(INITIALIZE).encode(), headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=15) as response:
        session_id = response.headers["mcp-session-id"]
        response.read()
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert _post(url, initialized, {**headers, "mcp-session-id": session_id})[0] == 202
    return str(session_id)


async def test_a_client_that_never_reads_its_stream_costs_bounded_memory(tmp_path: Path) -> None:
    """A client asks for a tool that streams about 60 MB of progress notifications and never
    reads: the proxy stops reading the upstream while its writes wait (its memory does not grow by
    the stream), and serves another session meanwhile."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    with proxied(tmp_path) as setup:
        session_id = _handshake(setup.url, headers)
        before = resident_memory(setup.proxy.pid)
        arguments = {"count": 40_000, "size": 1000}
        params = {"name": "flood", "arguments": arguments, "_meta": {"progressToken": 1}}
        body = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}).encode()
        host, port = setup.url.split("//")[1].split("/")[0].split(":")
        _, writer = await asyncio.open_connection(host, int(port))
        head = "".join(f"{name}: {value}\r\n" for name, value in {**headers, "mcp-session-id": session_id}.items())
        writer.write(
            f"POST /mcp HTTP/1.1\r\nhost: {host}:{port}\r\ncontent-length: {len(body)}\r\n{head}\r\n".encode() + body
        )
        await writer.drain()
        await asyncio.sleep(4)  # the stream runs into full buffers
        grown = resident_memory(setup.proxy.pid) - before
        assert _post(setup.url, INITIALIZE, headers)[0] == 200  # another session, served
        writer.close()
        setup.stop()
    assert grown < 16 * 1024 * 1024, grown
