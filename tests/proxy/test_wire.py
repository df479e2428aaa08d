"""The wire front end on its own, fed lines by hand: what a hostile or odd peer can send."""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from mcp_otel.model.attributes import AttributeCache
from mcp_otel.model.config import Settings
from mcp_otel.model.metrics import CallMetrics
from mcp_otel.proxy.wire import MAX_IN_FLIGHT, WireSession
from mcp_otel.semconv import MCP_OTEL_UNOBSERVED_REASON, MCP_OTEL_UNOBSERVED_REQUESTS
from tests.conftest import PROVIDER, tool_call_spans


def wire(as_client: bool = False) -> WireSession:
    meter = MeterProvider(metric_readers=[InMemoryMetricReader()]).get_meter("test")
    return WireSession(PROVIDER.get_tracer("mcp_otel"), CallMetrics(meter, Settings()), Settings(), as_client=as_client)


def line(message: Any) -> bytes:
    return json.dumps(message).encode()


def call(request_id: Any, tool: str = "t") -> bytes:
    return line({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool}})


def outcomes(exporter: InMemorySpanExporter) -> list[tuple[str, str, str | None]]:
    return [
        (
            str(span.attributes["jsonrpc.request.id"]),
            str(span.attributes["tool.outcome"]),
            span.attributes.get("tool.cancel.reason") or span.attributes.get("error.type"),
        )
        for span in tool_call_spans(exporter.get_finished_spans(), SpanKind.SERVER)
    ]


def test_ids_batches_and_odd_answers(exporter: InMemorySpanExporter) -> None:
    session = wire()
    session.from_client(call(1))
    session.from_client(call("1"))  # another id than 1
    # A batch: each member that is a message (5 is not one, and the server answers it an error).
    session.from_client(line([{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "t"}}, 5]))
    session.from_client(b"\xff not json")
    session.from_client(line({"jsonrpc": "2.0", "id": True, "method": "tools/call"}))  # not an id
    session.from_server(line({"jsonrpc": "2.0", "id": "1", "result": {"content": [], "isError": True}}))
    session.from_server(line([{"jsonrpc": "2.0", "id": 2, "error": {"message": "no code"}}]))
    session.from_server(line({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}))
    session.from_server(line({"jsonrpc": "2.0", "id": 99, "result": {}}))  # nothing asked it
    session.end(server_exited_first=False, exit_status=0)
    assert outcomes(exporter) == [("1", "failed", "tool_error"), ("2", "failed", "0"), ("1", "ok", None)]


def test_an_id_sent_again_while_in_flight(exporter: InMemorySpanExporter) -> None:
    """Its sender gave up on the first: a cancel, not a failure; the answer is the second's."""
    session = wire()
    session.from_client(call(5, "first"))
    session.from_client(call(5, "second"))
    session.from_server(line({"jsonrpc": "2.0", "id": 5, "result": {"content": []}}))
    session.end(server_exited_first=False, exit_status=0)
    spans = tool_call_spans(exporter.get_finished_spans(), SpanKind.SERVER)
    assert [(s.name, s.attributes["tool.outcome"]) for s in spans] == [
        ("tools/call first", "cancelled"),
        ("tools/call second", "ok"),
    ]


def test_sessions_sharing_their_attributes_keep_their_own(exporter: InMemorySpanExporter) -> None:
    """The sessions of one relay share where their requests' attributes are kept: each span
    still says its own id and session, and the server and protocol as its session knew them
    when it began (a request before the handshake names no server)."""
    cache = AttributeCache()
    meter = MeterProvider(metric_readers=[InMemoryMetricReader()]).get_meter("test")
    tracer, metrics = PROVIDER.get_tracer("mcp_otel"), CallMetrics(meter, Settings())
    sessions = [WireSession(tracer, metrics, Settings(), attribute_cache=cache) for _ in range(3)]
    sessions[0].session_id, sessions[1].session_id = "session-0", "session-1"
    sessions[0].from_client(call(1))
    for session in sessions[:2]:  # the same server
        session.from_client(line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}))
        answer = {"protocolVersion": "2025-06-18", "serverInfo": {"name": "s", "version": "1"}, "capabilities": {}}
        session.from_server(line({"jsonrpc": "2.0", "id": 0, "result": answer}))
    sessions[1].from_client(call(2))
    sessions[0].from_client(call(3))
    sessions[2].from_client(call(8))  # no session, no protocol named
    envelope = {"name": "t", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    sessions[2].from_client(line({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": envelope}))
    for request_id, session in [
        (1, sessions[0]),
        (2, sessions[1]),
        (3, sessions[0]),
        (8, sessions[2]),
        (9, sessions[2]),
    ]:
        session.from_server(line({"jsonrpc": "2.0", "id": request_id, "result": {"content": []}}))
    keys = ("jsonrpc.request.id", "mcp.session.id", "mcp.server.name", "mcp.protocol.version")
    spans = tool_call_spans(exporter.get_finished_spans(), SpanKind.SERVER)
    assert [tuple(span.attributes.get(key) for key in keys) for span in spans] == [
        ("1", "session-0", None, None),
        ("2", "session-1", "s", "2025-06-18"),
        ("3", "session-0", "s", "2025-06-18"),
        ("8", None, None, None),
        ("9", None, None, "2026-07-28"),
    ]


def test_requests_in_flight_are_bounded(exporter: InMemorySpanExporter) -> None:
    """A peer that sends requests and never sees them answered costs bounded memory: past the
    limit a request is relayed with no span; the tracked ones end with the session."""
    session = wire()
    for request_id in range(MAX_IN_FLIGHT + 10):
        session.from_client(call(request_id))
    session.end(server_exited_first=False, exit_status=0)
    spans = tool_call_spans(exporter.get_finished_spans(), SpanKind.SERVER)
    assert len(spans) == MAX_IN_FLIGHT
    assert {(s.attributes["tool.outcome"], s.attributes["tool.cancel.reason"]) for s in spans} == {
        ("cancelled", "disconnect")
    }


def test_lines_across_chunks_and_past_the_limit() -> None:
    """What the relay cuts a stream into: lines whole across chunks, an overlong one passed on
    unseen, the end without a newline passed on; what goes on is exactly what came, unless the
    line's handler gives back another line."""
    from mcp_otel.proxy.stdio import Lines

    seen: list[bytes] = []
    lines = Lines(lambda line: seen.append(line) or (b"X" if line == b"swap" else None), limit=8)
    chunks = [b"ab", b"c\nswap\n", b"0123456789", b"abc\nlast\n", b"tail"]
    out = b"".join(lines.feed(chunk) for chunk in chunks) + lines.end()
    assert seen == [b"abc", b"swap", b"last"]  # the 13-byte line was not looked at
    assert out == b"abc\nX\n0123456789abc\nlast\ntail"
    # Observing only (the chunk already sent): the same lines seen.
    observed: list[bytes] = []
    lines = Lines(observed.append, limit=8)
    for chunk in [*chunks, b"\n", b"x\ny"]:
        lines.observe(chunk)
    assert observed == [*seen, b"tail", b"x"]


def test_an_answer_after_the_cancel_changes_nothing(exporter: InMemorySpanExporter) -> None:
    session = wire()
    session.from_client(call(7))
    session.from_client(line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}))
    session.from_server(line({"jsonrpc": "2.0", "id": 7, "result": {"content": [], "isError": True}}))
    session.end(server_exited_first=False, exit_status=0)
    assert outcomes(exporter) == [("7", "cancelled", "client")]


def test_an_answer_that_says_cancelled_is_the_cancel(exporter: InMemorySpanExporter) -> None:
    """The cancel notification went another way (another replica): the server's answer saying
    the request was cancelled (mcp 2.x's -32800, mcp 1.x's code 0 "Request cancelled") is the
    client's cancel, on either side's span; another error with code 0 is a failure."""
    session = wire()
    answers = [
        {"code": -32800, "message": "Request cancelled"},
        {"code": 0, "message": "Request cancelled"},
        {"code": 0, "message": "something else"},
    ]
    for request_id, error in enumerate(answers, start=1):
        session.from_client(call(request_id))
        session.from_server(line({"jsonrpc": "2.0", "id": request_id, "error": error}))
    assert outcomes(exporter) == [("1", "cancelled", "client"), ("2", "cancelled", "client"), ("3", "failed", "0")]
    exporter.clear()
    client = wire(as_client=True)
    client.client_line(call(4))
    client.from_server(line({"jsonrpc": "2.0", "id": 4, "error": answers[0]}))
    (span,) = tool_call_spans(exporter.get_finished_spans(), SpanKind.CLIENT)
    assert (span.attributes["tool.outcome"], span.attributes["tool.cancel.reason"]) == ("cancelled", "caller")


def server_request(request_id: int) -> bytes:
    return line({"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": {"message": "ok?"}})


def ended(exporter: InMemorySpanExporter) -> dict[tuple[str, Any], tuple[Any, Any]]:
    """Each request span by (kind, method): its outcome, and its cancel reason or error type."""
    return {
        (span.kind.name, span.attributes["mcp.method.name"]): (
            span.attributes["mcp.request.outcome"],
            span.attributes.get("mcp.request.cancel.reason") or span.attributes.get("error.type"),
        )
        for span in exporter.get_finished_spans()
    }


def test_who_left_first_decides_what_was_in_flight(exporter: InMemorySpanExporter) -> None:
    """As the server: the server dying fails both its calls and its own requests; as the client:
    the client hanging up cancels its calls (the caller's choice)."""
    session = wire()
    session.from_client(call(1))
    session.from_server(server_request(100))
    session.end(server_exited_first=True, exit_status=1)
    as_server = ended(exporter)
    assert as_server == {
        ("SERVER", "tools/call"): ("failed", "shutdown"),
        ("CLIENT", "elicitation/create"): ("failed", "shutdown"),
    }
    exporter.clear()
    client = wire(as_client=True)
    client.client_line(call(1))
    client.from_server(server_request(100))
    client.end(server_exited_first=False, exit_status=0)
    as_client = ended(exporter)
    assert as_client == {
        ("CLIENT", "tools/call"): ("cancelled", "caller"),
        ("SERVER", "elicitation/create"): ("failed", "shutdown"),
    }


def http_wire(as_client: bool = False) -> tuple[WireSession, InMemoryMetricReader]:
    """A session over HTTP (several streams), and what its metrics read."""
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("test")
    metrics = CallMetrics(meter, Settings())
    session = WireSession(PROVIDER.get_tracer("mcp_otel"), metrics, Settings(), as_client=as_client, streams=True)
    return session, reader


def _metrics(reader: InMemoryMetricReader) -> list[Any]:
    data = reader.get_metrics_data()
    return [m for r in (data.resource_metrics if data else []) for s in r.scope_metrics for m in s.metrics]


def unobserved(reader: InMemoryMetricReader) -> list[tuple[str, str, int]]:
    """Each unobserved-requests point: method, reason, count; and no duration point beside it."""
    found, durations = [], 0
    for metric in _metrics(reader):
        if metric.name == MCP_OTEL_UNOBSERVED_REQUESTS:
            found += [
                (p.attributes["mcp.method.name"], p.attributes[MCP_OTEL_UNOBSERVED_REASON], p.value)
                for p in metric.data.data_points
            ]
        elif metric.name.endswith("operation.duration"):
            durations += sum(p.count for p in metric.data.data_points)
    return [*sorted(found), ("durations", "", durations)]


def _session_points(reader: InMemoryMetricReader) -> list[str]:
    return [m.name for m in _metrics(reader) if m.name.endswith("session.duration")]


def test_an_answer_that_comes_on_a_stream_not_held_is_no_outcome(exporter: InMemorySpanExporter) -> None:
    """Over HTTP, when the session ends: a call whose POST stream ended before its answer, and the
    server's own request (answered by a POST that may reach another replica), are counted, not
    given an outcome; a call still on its stream is cancelled by the client leaving, as ever."""
    session, reader = http_wire()
    session.client_requests(call(1))
    session.client_requests(call(2))
    session.detach([("n", 1)])
    session.from_server(server_request(100))
    session.end(server_exited_first=False, exit_status=0)
    assert outcomes(exporter) == [("2", "cancelled", "disconnect")]
    assert unobserved(reader) == [
        ("elicitation/create", "answer_elsewhere", 1),
        ("tools/call", "answer_elsewhere", 1),
        ("durations", "", 1),
    ]


def test_a_detached_call_answered_on_a_held_stream_has_its_outcome(exporter: InMemorySpanExporter) -> None:
    session, reader = http_wire()
    session.client_requests(call(1))
    session.detach([("n", 1)])
    session.from_server(line({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": True}}))
    session.end(server_exited_first=False, exit_status=0)
    assert outcomes(exporter) == [("1", "failed", "tool_error")]
    assert unobserved(reader) == [("durations", "", 1)]


def test_an_exchange_answered_elsewhere_and_a_session_no_longer_followed(exporter: InMemorySpanExporter) -> None:
    exchange, reader = http_wire()
    exchange.client_requests(call(1))
    exchange.finish_exchange()
    session, session_reader = http_wire(as_client=True)
    session.client_requests(call(2))
    session.untracked()
    session.end(server_exited_first=False, exit_status=0)  # nothing more: it was no longer followed
    assert exporter.get_finished_spans() == ()
    assert unobserved(reader) == [("tools/call", "answer_elsewhere", 1), ("durations", "", 0)]
    assert unobserved(session_reader) == [("tools/call", "session_untracked", 1), ("durations", "", 0)]
    assert not _session_points(session_reader)


def test_a_session_first_seen_mid_way_has_no_duration(exporter: InMemorySpanExporter) -> None:
    """An HTTP session whose start this proxy did not see (another replica's, or before a restart):
    its requests seen whole have their outcomes, but its duration would be a guess."""
    session, reader = http_wire()
    session.began_here = False
    session.client_requests(call(1))
    session.from_server(line({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}))
    session.end(server_exited_first=False, exit_status=0)
    assert outcomes(exporter) == [("1", "ok", None)]
    assert not _session_points(reader)
    began, began_reader = http_wire()
    began.end(server_exited_first=False, exit_status=0)
    assert _session_points(began_reader)


def test_the_server_is_learnt_from_whatever_names_it(exporter: InMemorySpanExporter) -> None:
    """A session whose handshake went elsewhere (another replica) learns the server's name from
    the first result whose ``_meta`` carries its identity (2026-07-28 stamps it): that request's
    span and every later one say it; the request's own attributes stay; a later stamp does not
    rename the server."""
    session, _ = http_wire()
    session.began_here = False
    stamp = {"io.modelcontextprotocol/serverInfo": {"name": "weather", "version": "2.1"}}
    for request_id, result in [
        (1, {"content": []}),
        (2, {"content": [], "_meta": stamp}),
        (3, {"content": []}),
        (4, {"content": [], "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "other"}}}),
    ]:
        session.client_requests(call(request_id, tool=f"t{request_id}"))
        session.from_server(line({"jsonrpc": "2.0", "id": request_id, "result": result}))
    spans = tool_call_spans(exporter.get_finished_spans(), SpanKind.SERVER)
    named = [(s.name, s.attributes.get("mcp.server.name"), s.attributes.get("mcp.server.version")) for s in spans]
    assert named == [
        ("tools/call t1", None, None),
        ("tools/call t2", "weather", "2.1"),
        ("tools/call t3", "weather", "2.1"),
        ("tools/call t4", "weather", "2.1"),
    ]
    assert [s.attributes["gen_ai.tool.name"] for s in spans] == ["t1", "t2", "t3", "t4"]


def test_as_the_client_only_requests_are_rewritten() -> None:
    """The client's request gets the proxy's traceparent beside its own _meta; every other
    line goes on byte for byte."""
    session = wire(as_client=True)
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "t", "_meta": {"progressToken": 5}},
    }
    rewritten = json.loads(session.client_line(json.dumps(request).encode() + b"\r"))
    assert rewritten["params"]["name"] == "t"
    assert rewritten["params"]["_meta"]["progressToken"] == 5
    assert rewritten["params"]["_meta"]["traceparent"].startswith("00-")
    for unchanged in (b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', b"not json", b"[1, 2]"):
        assert session.client_line(unchanged) == unchanged


def test_a_large_result_is_scanned_not_built(exporter: InMemorySpanExporter) -> None:
    """Of an answer only what the outcome needs is decoded: a 10 MB tool result (its isError
    after the content, as the SDKs write it) is classified without its content being built
    into objects (the standard library's parser would make 21 MB of them)."""
    session = wire()
    session.from_client(call(1))
    text = "x" * (10 * 1024 * 1024)
    answer = line({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}], "isError": True}})
    tracemalloc.start()
    try:
        session.from_server(answer)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    session.end(server_exited_first=False, exit_status=0)
    assert outcomes(exporter) == [("1", "failed", "tool_error")]
    assert peak < 256 * 1024  # the span and its point, not the content


def test_results_of_any_shape_are_answers(exporter: InMemorySpanExporter) -> None:
    """A result that is not an object, or whose isError is not the boolean true, is an answer
    all the same: the request ends, ok."""
    session = wire()
    for request_id, result in enumerate([5, [], None, "done", {"isError": "yes"}, {"isError": 1}]):
        session.from_client(call(request_id))
        session.from_server(line({"jsonrpc": "2.0", "id": request_id, "result": result}))
    session.end(server_exited_first=False, exit_status=0)
    assert outcomes(exporter) == [(str(request_id), "ok", None) for request_id in range(6)]


def test_a_refused_probe_is_negotiation_named_by_the_handshake_after(exporter: InMemorySpanExporter) -> None:
    """A 2026-07-28 client probes server/discover; an older server refuses it (-32601) and the
    client falls back to initialize: the probe has no outcome (negotiation), and carries the
    server's name that initialize's answer gives, its span ended when its own answer came."""
    session = wire()
    session.from_client(line({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}))
    session.from_server(line({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}}))
    assert [span.name for span in exporter.get_finished_spans()] == []  # held until the server is named
    initialize = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    session.from_client(line({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": initialize}))
    info = {"name": "old-server", "version": "1.2"}
    answer = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": info}
    session.from_server(line({"jsonrpc": "2.0", "id": 2, "result": answer}))
    probe, handshake = sorted(exporter.get_finished_spans(), key=lambda span: span.start_time or 0)
    assert (probe.name, handshake.name) == ("server/discover", "initialize")
    assert probe.attributes is not None
    assert {
        key: probe.attributes.get(key)
        for key in (
            "mcp.request.result_type",
            "mcp.request.outcome",
            "rpc.response.status_code",
            "mcp.server.name",
            "mcp.server.version",
        )
    } == {
        "mcp.request.result_type": "negotiation",
        "mcp.request.outcome": None,
        "rpc.response.status_code": "-32601",
        "mcp.server.name": "old-server",
        "mcp.server.version": "1.2",
    }
    assert probe.end_time is not None
    assert handshake.start_time is not None
    assert probe.end_time <= handshake.start_time


def test_a_refused_probe_ends_with_its_session_when_nothing_named_the_server(exporter: InMemorySpanExporter) -> None:
    session = wire()
    session.from_client(line({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}))
    session.from_server(line({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "no"}}))
    session.end(server_exited_first=False, exit_status=0)
    (probe,) = exporter.get_finished_spans()
    assert probe.attributes is not None
    assert probe.attributes["mcp.request.result_type"] == "negotiation"
    assert "mcp.server.name" not in probe.attributes
