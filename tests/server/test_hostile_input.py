"""Hostile clients: raw JSON-RPC with ``_meta`` that is not an object, huge, with an invalid or
1 MB ``traceparent`` or thousands of keys; tool names of 10,000 characters or odd unicode;
arguments that are not an object; ``inputResponses`` that are not a map of answers. The server
answers exactly as without mcp-otel, keeps serving, its span attributes stay bounded, and its
metrics keep a bounded set of tool names. And the setting for untrusted clients: the remote
context becomes a link, never the parent."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp.shared.message import SessionMessage
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from mcp_otel import semconv
from tests.conftest import tool_call_spans
from tests.harness import HANDSHAKE_VERSION, MCP_MAJOR, build_server, open_session
from tests.metrics.test_metrics import histogram_points, tool_call_points

pytestmark = pytest.mark.anyio

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
TRACEPARENT = f"00-{TRACE_ID}-b7ad6b7169203331-01"
MEGABYTE = "x" * 1_000_000
UNICODE_NAME = "工具 😀 \u202edrowssap\u202c \t\n zero\u200bwidth"


def _call(request_id: int, name: str = "ok", **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, **params}}


HOSTILE = [
    _call(1, _meta="not an object"),
    _call(2, _meta=[1, 2, 3]),
    _call(3, _meta=42),
    _call(4, _meta={"junk": MEGABYTE}),
    _call(5, _meta={"traceparent": "00-zz-not-a-traceparent"}),
    _call(6, _meta={"traceparent": MEGABYTE}),
    _call(7, _meta={"traceparent": TRACEPARENT + MEGABYTE}),
    _call(8, _meta={f"key{n}": str(n) for n in range(5000)} | {"traceparent": TRACEPARENT}),
    _call(9, name="n" * 10_000),
    _call(10, name=UNICODE_NAME),
    _call(11, arguments=[1, 2, 3]),
    _call(12, arguments="not an object"),
    _call(13, arguments={"nested": {"deep": [MEGABYTE[:1000]] * 100}}),
    _call(14, name=None),
    # 2026-07-28 input answers where none were asked for, not a map, or a map of junk.
    _call(16, inputResponses=5),
    _call(17, inputResponses=[{"action": "decline"}]),
    _call(18, inputResponses={"q": {"action": "decline"}}),  # a no to a question never asked
    _call(19, inputResponses={"q": {"action": "decline"}, "r": MEGABYTE[:1000]}),
    _call(15),  # still serving
]


def _message(payload: dict[str, Any]) -> SessionMessage:
    message: Any = types.JSONRPCRequest(**payload) if "id" in payload else types.JSONRPCNotification(**payload)
    return SessionMessage(types.JSONRPCMessage(message) if MCP_MAJOR == 1 else message)


async def exchange(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Initialize by hand, then send each request; the server's answer to each, as JSON."""
    from mcp.shared.memory import create_client_server_memory_streams

    server = build_server()
    answers = []
    async with (
        create_client_server_memory_streams() as ((client_read, client_write), server_streams),
        anyio.create_task_group() as group,
    ):
        group.start_soon(server.run, server_streams[0], server_streams[1], server.create_initialization_options())

        async def ask(payload: dict[str, Any]) -> dict[str, Any]:
            await client_write.send(_message(payload))
            with anyio.fail_after(30):
                answer = await client_read.receive()
            assert not isinstance(answer, Exception), answer
            dumped: dict[str, Any] = answer.message.model_dump(by_alias=True, mode="json", exclude_none=True)
            return dumped

        client_info = {"name": "hostile", "version": "0"}
        initialize = {"protocolVersion": HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": client_info}
        await ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize})
        await client_write.send(_message({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        for request in requests:
            answers.append(await ask(request))
        group.cancel_scope.cancel()
    return answers


async def test_hostile_requests_get_the_same_answers(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    uninstrumented = await exchange(HOSTILE)
    exporter.clear()  # (mcp 2.x's own spans of that run: their names are not bounded)
    reader = InMemoryMetricReader()
    instrument(meter_provider=MeterProvider(metric_readers=[reader]))
    instrumented = await exchange(HOSTILE)
    assert instrumented == uninstrumented
    assert [answer["id"] for answer in instrumented] == [request["id"] for request in HOSTILE]
    assert "result" in instrumented[-1]  # still serving after all of it

    spans = tool_call_spans(exporter.get_finished_spans(), SpanKind.SERVER)
    assert spans, "the requests the SDK accepted reached the tool and have spans"
    for span in spans:
        assert len(span.name) <= len("tools/call ") + 256
        for value in (span.attributes or {}).values():
            assert not isinstance(value, str) or len(value) <= 256, span.name
    # Junk input answers do not cost a request its span (each the SDK served has one).
    served = {str(answer["id"]) for answer in instrumented if "result" in answer}
    traced = {(span.attributes or {}).get(semconv.JSONRPC_REQUEST_ID) for span in spans}
    assert {"16", "17", "18", "19"} & served <= traced
    # A no to a question never asked: the tool returned normally, so the call is ok.
    (unasked,) = [span for span in spans if (span.attributes or {}).get(semconv.JSONRPC_REQUEST_ID) == "18"]
    assert (unasked.attributes or {})[semconv.MCP_REQUEST_OUTCOME] == "ok"
    names = {(span.attributes or {}).get(semconv.GEN_AI_TOOL_NAME) for span in spans}
    assert "n" * 255 + "…" in names  # the 10,000-character name, cut to max_name_length
    assert UNICODE_NAME in names
    # A 1 MB or invalid traceparent is no parent; a valid one among 5,000 keys is.
    parents = {span.parent.trace_id if span.parent else None for span in spans}
    assert parents == {None, int(TRACE_ID, 16)}
    points = tool_call_points(reader, semconv.MCP_SERVER_OPERATION_DURATION)
    assert sum(point.count for point in points) == len(spans)


async def test_metrics_keep_a_bounded_set_of_hostile_tool_names(instrument: Callable[..., Any]) -> None:
    reader = InMemoryMetricReader()
    instrument(meter_provider=MeterProvider(metric_readers=[reader]), max_metric_names=10)
    rng = random.Random(7)
    names = ["".join(chr(rng.randrange(0x20, 0x2FFF)) for _ in range(rng.randrange(1, 40))) for _ in range(50)]
    await exchange([_call(n, name=name) for n, name in enumerate(names, 1)])
    points = tool_call_points(reader, semconv.MCP_SERVER_OPERATION_DURATION)
    recorded = {point.attributes[semconv.GEN_AI_TOOL_NAME] for point in points}
    assert len(recorded) == 11
    assert semconv.OTHER_VALUE in recorded
    assert sum(point.count for point in points) == 50


@pytest.mark.mcp2  # mcp 1.x's session answers an unknown method itself (-32602): no server code sees it
async def test_hostile_method_names_get_the_same_answers_and_bounded_spans_and_metrics(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    rng = random.Random(11)
    methods = ["m" * 10_000, *("x/" + "".join(chr(rng.randrange(0x20, 0x2FFF)) for _ in range(20)) for _ in range(30))]
    requests = [{"jsonrpc": "2.0", "id": n, "method": method} for n, method in enumerate(methods, 1)]
    uninstrumented = await exchange(requests)
    exporter.clear()
    reader = InMemoryMetricReader()
    instrument(meter_provider=MeterProvider(metric_readers=[reader]), max_metric_names=10)
    instrumented = await exchange(requests)
    assert instrumented == uninstrumented
    assert {answer["error"]["code"] for answer in instrumented} == {-32601}
    # Each unknown method is the caller's fault: failed, status UNSET, no error.type, its code
    # kept, its name cut on the span.
    spans = [
        span
        for span in exporter.get_finished_spans()
        if span.kind == SpanKind.SERVER and span.instrumentation_scope.name == semconv.INSTRUMENTATION_SCOPE
    ]
    unknown = [span for span in spans if span.attributes[semconv.MCP_METHOD_NAME] not in semconv.KNOWN_METHODS]
    assert len(unknown) == len(methods)
    for span in unknown:
        assert len(span.attributes[semconv.MCP_METHOD_NAME]) <= 256
        assert span.attributes[semconv.MCP_REQUEST_OUTCOME] == "failed"
        assert semconv.ERROR_TYPE not in span.attributes
        assert span.attributes[semconv.RPC_RESPONSE_STATUS_CODE] == "-32601"
        assert span.status.status_code.name == "UNSET"
    # Metrics keep the spec's methods and at most 10 others; the rest read _OTHER.
    points = histogram_points(reader, semconv.MCP_SERVER_OPERATION_DURATION)
    recorded = {point.attributes[semconv.MCP_METHOD_NAME] for point in points} - semconv.KNOWN_METHODS
    assert len(recorded) == 11
    assert semconv.OTHER_VALUE in recorded
    assert sum(point.count for point in points if point.attributes[semconv.MCP_METHOD_NAME] in recorded) == len(methods)


@pytest.mark.parametrize("trust", [True, False])
async def test_untrusted_remote_context_is_only_a_link(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter, trust: bool
) -> None:
    instrument(trust_remote_context=trust)
    await exchange([_call(1, _meta={"traceparent": TRACEPARENT})])
    [span] = tool_call_spans(exporter.get_finished_spans(), SpanKind.SERVER)
    remote = int(TRACE_ID, 16)
    if trust:
        assert span.parent is not None
        assert span.context.trace_id == span.parent.trace_id == remote
        assert span.links == ()
    else:
        assert span.parent is None  # nothing was current: a new trace of the server's own
        assert span.context.trace_id != remote
        assert [link.context.trace_id for link in span.links] == [remote]
        assert not trace.get_current_span().get_span_context().is_valid


async def test_a_server_whose_name_and_version_are_not_text_still_gets_its_spans(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    """The SDK holds the server's name and version as the application set them: one that is not
    text (here set after the handshake, which validates it) is left out of the attributes, and an
    unhashable one is never a cache key; the calls and their spans go on."""
    instrument()
    server = build_server()
    async with open_session("memory", server) as session:
        server.name, server.version = 42, ["not", "text"]
        first = await session.call_tool("ok", {})
        second = await session.call_tool("ok", {})
    assert [result.content[0].text for result in (first, second)] == ["ok", "ok"]
    spans = tool_call_spans(exporter.get_finished_spans(), SpanKind.SERVER)
    assert len(spans) == 2
    for span in spans:
        assert span.attributes is not None
        assert span.attributes[semconv.TOOL_OUTCOME] == "ok"
        assert semconv.MCP_SERVER_NAME not in span.attributes
        assert semconv.MCP_SERVER_VERSION not in span.attributes
