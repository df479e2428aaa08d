"""``mcp-otel proxy`` in front of HTTP+SSE servers (protocol 2024-11-05): a POST is answered
``202`` and its JSON-RPC answer comes on the session's GET event stream, which the proxy follows
from its ``endpoint`` event. The installed major's SSE servers (the high-level test server, the
person server) with its ``sse_client``; ``server-everything`` in its ``sse`` mode with the
TypeScript SDK's ``SSEClientTransport`` and with ``sse_client``. Exact outcomes, reasons, span
counts and parentage; the same answers as direct."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from mcp import ClientSession
from mcp.client.sse import sse_client
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from yarl import URL

from mcp_otel.model.config import Settings
from mcp_otel.model.metrics import CallMetrics
from mcp_otel.proxy.http import HttpRelay, _endpoint_event, _first_event
from mcp_otel.proxy.wire import WireSession
from mcp_otel.semconv import MCP_SERVER_OPERATION_DURATION, MCP_SERVER_SESSION_DURATION
from tests.conftest import PROVIDER
from tests.harness import MCP_MAJOR, REPO_ROOT, env_without_otel
from tests.processes import LOOPBACK, free_port, missing, running
from tests.proxy import otlp
from tests.proxy.test_http_proxy import (
    EVERYTHING,
    MCP_OTEL,
    THIRD_PARTY,
    Proxied,
    call,
    named,
    outcome_of,
    tool_outcomes,
    tool_spans,
    ts_agent,
)
from tests.proxy.test_stdio_proxy import assert_everything_exchanged
from tests.server.test_server_spans import client_cancel
from tests.servers.tools import SERVER_NAME
from tests.test_person_in_the_loop import ACCEPT, DECLINED, ELICIT, Person
from tests.test_person_in_the_loop import CASES as PERSON_CASES

pytestmark = pytest.mark.anyio


@contextmanager
def sse_proxied(tmp_path: Path, upstream_port: int, server: list[str], **options: Any) -> Iterator[Proxied]:
    """The SSE server ``server`` (on ``upstream_port``, its ``/sse``) with the proxy in front
    (``name``: the proxy's ``--name``); both stopped by PID."""
    port = free_port()
    env = env_without_otel(PYTHONPATH=str(REPO_ROOT), PORT=str(upstream_port))
    output = tmp_path / "proxy.jsonl"
    name = options.get("name")
    proxy = [MCP_OTEL, "proxy", *(["--name", name] if name else []), "--output", str(output)]
    upstream = f"http://{LOOPBACK}:{upstream_port}/sse"
    proxy += ["--listen", f"{LOOPBACK}:{port}", "--upstream", upstream]
    cwd = options.get("cwd", REPO_ROOT)
    with (
        running(server, ports=[upstream_port], env=env, cwd=cwd, log=tmp_path / "server.log") as node,
        running(proxy, ports=[port], env=env, cwd=REPO_ROOT, log=tmp_path / "proxy.log") as relay,
    ):
        yield Proxied(f"http://{LOOPBACK}:{port}/sse", upstream, output, tmp_path / "none", relay, node)


@contextmanager
def python_proxied(tmp_path: Path, kind: str = "highlevel", *extra: str) -> Iterator[Proxied]:
    """:mod:`tests.servers.sse_server` (``kind``, ``extra``) with the proxy in front."""
    port = free_port()
    server = [sys.executable, "-m", "tests.servers.sse_server", str(port), kind, *extra]
    with sse_proxied(tmp_path, port, server) as setup:
        yield setup


@asynccontextmanager
async def sse_session(url: str, **callbacks: Any) -> AsyncIterator[ClientSession]:
    async with sse_client(url) as (read, write), ClientSession(read, write, **callbacks) as session:
        await session.initialize()
        yield session


def points_by_tool(output: Path) -> dict[str, int]:
    points = otlp.points(output, MCP_SERVER_OPERATION_DURATION)
    counted: dict[str, int] = {}
    for point in points:
        if tool := point["attributes"].get("gen_ai.tool.name"):
            counted[tool] = counted.get(tool, 0) + point["count"]
    return counted


# --- the installed major's SSE server and client ---------------------------------------------


@pytest.mark.parametrize("endpoint", ["relative", "absolute"])
async def test_a_python_sse_server_and_client(
    endpoint: str, tmp_path: Path, instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    """Each outcome as an instrumented server states it, its span the agent's span's child, one
    point each, and the session's duration once; the answers are the ones a direct connection
    gets. An absolute endpoint is rewritten to the proxy's origin (mcp 1.x's client refuses one
    on another origin), and the client's POSTs come through the proxy."""
    tools = ("ok", "fails")
    instrument()
    with python_proxied(tmp_path, "highlevel", *([endpoint] if endpoint == "absolute" else [])) as setup:
        async with sse_session(setup.upstream) as direct:
            expected = [(await direct.call_tool(tool, {})).model_dump() for tool in tools]
        exporter.clear()
        async with sse_session(setup.url) as session:
            answers = [(await session.call_tool(tool, {})).model_dump() for tool in tools]
            rejected = await call(session, "rejects")
            faulted = await call(session, "faults")
            await client_cancel(session)
            after = (await session.call_tool("ok", {})).model_dump()
        spans = setup.stop()
    assert answers == expected
    assert after == expected[0]
    calls = tool_spans(spans)
    assert sorted(s["name"] for s in calls) == sorted(
        f"tools/call {t}" for t in (*tools, "rejects", "faults", "slow", "ok")
    )
    ok = [s for s in calls if s["name"] == "tools/call ok"]
    assert [outcome_of(s) for s in ok] == [("UNSET", "ok", None, None)] * 2
    assert outcome_of(named(spans, "tools/call fails")) == ("ERROR", "failed", "tool_error", None)
    if MCP_MAJOR == 2:  # a JSON-RPC error: -32602 blames the request, -32603 is the server's
        assert isinstance(rejected, Exception)
        assert isinstance(faulted, Exception)
        rejects = named(spans, "tools/call rejects")
        assert outcome_of(rejects) == ("UNSET", "failed", None, None)
        assert rejects["attributes"]["rpc.response.status_code"] == "-32602"
        assert outcome_of(named(spans, "tools/call faults")) == ("ERROR", "failed", "-32603", None)
    else:  # FastMCP 1.x answers both isError
        assert outcome_of(named(spans, "tools/call rejects")) == ("ERROR", "failed", "tool_error", None)
        assert outcome_of(named(spans, "tools/call faults")) == ("ERROR", "failed", "tool_error", None)
    assert outcome_of(named(spans, "tools/call slow")) == ("UNSET", "cancelled", None, "client")
    # Every request the agent sent has one SERVER span, its child, in the same session.
    agent = [
        s for s in exporter.get_finished_spans() if s.kind == SpanKind.CLIENT and "jsonrpc.request.id" in s.attributes
    ]
    served = [s for s in otlp.requests(spans) if s["kind"] == "SpanKind.SERVER"]
    assert sorted(s["parent_id"] for s in served) == sorted(f"0x{s.get_span_context().span_id:016x}" for s in agent)
    assert len({s["attributes"]["mcp.session.id"] for s in served}) == 1
    assert {s["attributes"]["mcp.server.name"] for s in served} == {SERVER_NAME}
    assert points_by_tool(setup.output) == {"ok": 2, "fails": 1, "rejects": 1, "faults": 1, "slow": 1}
    (session_point,) = otlp.points(setup.output, MCP_SERVER_SESSION_DURATION)
    assert session_point["count"] == 1


async def test_a_person_in_the_loop_over_sse(tmp_path: Path) -> None:
    """The server's elicitation and sampling requests come on the session's stream and the
    person's answers in POSTs: each gets its CLIENT span, a child of the tool call's; a no makes
    the tool call a cancel (``input_declined``), as over stdio."""
    with python_proxied(tmp_path, "person") as setup:
        for case in PERSON_CASES:
            person = Person(case.answer)
            callbacks = {"elicitation_callback": person.elicitation, "sampling_callback": person.sampling}
            async with sse_session(setup.url, **callbacks) as session:
                with suppress(Exception):
                    await session.call_tool(case.tool, {"path": "/tmp/x", "text": "t"})
        spans = setup.stop()
    calls = tool_spans(spans)
    asked = [s for s in spans if s["kind"] == "SpanKind.CLIENT"]
    assert len(calls) == len(asked) == len(PERSON_CASES)
    for case, tool_call, request in zip(PERSON_CASES, calls, asked, strict=True):
        assert tool_call["name"] == f"tools/call {case.tool}"
        assert outcome_of(tool_call) == (case.status.name, case.outcome, case.error_type, case.cancel_reason), case
        assert request["name"] == case.input_method
        assert request["parent_id"] == tool_call["context"]["span_id"]
        declined = case.answer != ACCEPT
        assert request["attributes"]["mcp.request.outcome"] == ("cancelled" if declined else "ok")
        assert request["attributes"].get("mcp.request.cancel.reason") == (DECLINED if declined else None)
        if case.input_method == ELICIT:
            assert request["attributes"]["mcp.elicitation.action"] == case.answer


# --- the session's stream ending ----------------------------------------------------------------


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


async def endpoint_of(url: str, stream: aiohttp.ClientResponse) -> URL:
    """Where the session's messages go: its stream's first event (``endpoint``), read by hand."""
    async for line in stream.content:
        if line.startswith(b"data: "):
            return URL(url).join(URL(line[6:].decode().strip()))
    raise AssertionError(f"{url} ended before naming an endpoint")


@asynccontextmanager
async def raw_session(url: str) -> AsyncIterator[tuple[Callable[[dict[str, Any]], Any], Any]]:
    """An SSE session opened by hand (``aiohttp``): a function that POSTs a message to its
    endpoint, and the stream's response (open while the context is)."""
    async with aiohttp.ClientSession() as client, client.get(url) as stream:
        endpoint = await endpoint_of(url, stream)

        async def post(message: dict[str, Any]) -> None:
            async with client.post(endpoint, json=message) as answer:
                assert answer.status == 202, await answer.text()

        await post(INITIALIZE)
        # As a client does, wait for the answer: the proxy has then seen it too, whatever the load.
        async for line in stream.content:
            if line.startswith(b"data: ") and json.loads(line[6:]).get("id") == 1:
                break
        await post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield post, stream


SLOW = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow", "arguments": {"seconds": 10}}}


async def test_the_client_leaving_abandons_its_requests(tmp_path: Path) -> None:
    """The client closes the session's stream with a call in flight: the session is over, and
    the call cancelled by the client's leaving (``disconnect``), as an instrumented server
    states; the session's duration is recorded."""
    with python_proxied(tmp_path) as setup:
        async with raw_session(setup.url) as (post, _):
            await post(SLOW)
            await asyncio.sleep(0.5)
        await asyncio.sleep(0.5)
        spans = setup.stop()
    assert outcome_of(named(spans, "initialize")) == ("UNSET", "ok", None, None)
    assert outcome_of(named(spans, "tools/call slow")) == ("UNSET", "cancelled", None, "disconnect")
    (session_point,) = otlp.points(setup.output, MCP_SERVER_SESSION_DURATION)
    assert session_point["count"] == 1


async def test_the_server_dying_fails_its_requests(tmp_path: Path) -> None:
    """The server dies with a call in flight: its stream drops, and the call failed
    (``connection_closed``), the server's fault."""
    with python_proxied(tmp_path) as setup:
        async with raw_session(setup.url) as (post, stream):
            await post(SLOW)
            await asyncio.sleep(0.5)
            setup.server.kill()
            with suppress(aiohttp.ClientError):
                async for _ in stream.content:
                    pass
        spans = setup.stop()
    assert outcome_of(named(spans, "tools/call slow")) == ("ERROR", "failed", "connection_closed", None)


async def test_a_client_gone_as_its_answer_comes_has_left(
    tmp_path: Path, exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seen once in CI: an answer came from the upstream in the instant the client closed the
    session's stream, and the relay's write to the closed connection raised aiohttp's
    ClientConnectionResetError, a ClientError too, taken for the upstream dropping: the requests
    in flight were recorded failed / ``connection_closed``. Here that instant is made certain (the
    relay in process, the client's connection closed just before the initialize answer is
    written to it): the client left (``disconnect``); the server did not fail."""
    port, proxy_port = free_port(), free_port()
    server = [sys.executable, "-m", "tests.servers.sse_server", str(port), "highlevel"]
    settings = Settings()
    metrics = CallMetrics(MeterProvider().get_meter("test"), settings)
    connection = {"network.transport": "tcp"}
    relay = HttpRelay(
        f"http://{LOOPBACK}:{port}/sse",
        lambda: WireSession(PROVIDER.get_tracer("test"), metrics, settings, connection=connection, streams=True),
    )
    streams: list[web.BaseRequest] = []
    handle = relay.handle

    async def remember(request: web.BaseRequest) -> web.StreamResponse:
        if request.method == "GET":
            streams.append(request)
        return await handle(request)

    monkeypatch.setattr(relay, "handle", remember)
    write = web.StreamResponse.write

    async def cut_before_the_answer(response: web.StreamResponse, data: bytes) -> None:
        if b'"id":1,' in data and streams[0].transport:
            streams[0].transport.close()
        await write(response, data)

    monkeypatch.setattr(web.StreamResponse, "write", cut_before_the_answer)
    with running(server, ports=[port], env=env_without_otel(PYTHONPATH=str(REPO_ROOT)), log=tmp_path / "server.log"):
        runner = relay.runner(shutdown_timeout=1)
        await runner.setup()
        try:
            await web.TCPSite(runner, LOOPBACK, proxy_port).start()
            url = f"http://{LOOPBACK}:{proxy_port}/sse"
            async with aiohttp.ClientSession() as client, client.get(url) as stream:
                async with client.post(await endpoint_of(url, stream), json=INITIALIZE) as accepted:
                    assert accepted.status == 202
                with suppress(aiohttp.ClientError):
                    assert [line async for line in stream.content if line.startswith(b"data: ")] == []
        finally:
            await runner.cleanup()
            await relay.close()
    (span,) = exporter.get_finished_spans()
    assert span.name == "initialize"
    assert span.status.status_code == StatusCode.UNSET
    assert span.attributes is not None
    assert (span.attributes["mcp.request.outcome"], span.attributes["mcp.request.cancel.reason"]) == (
        "cancelled",
        "disconnect",
    )


# --- server-everything, the TypeScript SDK's server, in its sse mode ---------------------------


@contextmanager
def everything_sse(tmp_path: Path) -> Iterator[Proxied]:
    if not (EVERYTHING.exists() and shutil.which("node")):
        missing("the TypeScript SDK and the npm servers", "third-party")
    port = free_port()
    server = ["node", "--import", str(THIRD_PARTY / "loopback.mjs"), str(EVERYTHING), "sse"]
    with sse_proxied(tmp_path, port, server, name="server-everything", cwd=THIRD_PARTY) as setup:
        yield setup


def test_a_typescript_agent_and_server_everything_over_sse(tmp_path: Path) -> None:
    """No Python at either end: the TypeScript SDK's SSEClientTransport and server-everything.
    Its abort and its timeout are both the client's cancel (the SDK sends
    notifications/cancelled)."""
    plan = [
        {"tool": "echo", "arguments": {"message": "hi"}},
        {"tool": "get-sum", "arguments": {"a": "two"}},
        {"tool": "trigger-long-running-operation", "arguments": {"duration": 10, "steps": 10}, "abortAfterMs": 300},
        {"tool": "trigger-long-running-operation", "arguments": {"duration": 10, "steps": 10}, "timeoutMs": 300},
        {"tool": "echo", "arguments": {"message": "after"}},
    ]
    with everything_sse(tmp_path) as setup:
        seen = ts_agent(setup.url, plan, MCP_TRANSPORT="sse")
        spans = setup.stop()
    assert [step.get("isError", step.get("error")) for step in seen] == [
        False,
        True,
        "aborted",
        {"code": -32001},
        False,
    ]
    assert tool_outcomes(spans) == [
        ("tools/call echo", "ok", None, None),
        ("tools/call echo", "ok", None, None),
        ("tools/call get-sum", "failed", "tool_error", None),
        ("tools/call trigger-long-running-operation", "cancelled", None, "client"),
        ("tools/call trigger-long-running-operation", "cancelled", None, "client"),
    ]
    methods = sorted(s["attributes"]["mcp.method.name"] for s in otlp.requests(spans))
    assert methods == ["initialize", *["tools/call"] * 5]
    assert {s["attributes"]["mcp.server.name"] for s in spans} == {"mcp-servers/everything"}


async def test_every_request_to_server_everything_over_sse(
    tmp_path: Path, instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    """This major's ``sse_client``, instrumented, sends every request server-everything takes and
    answers each it asks (elicitation, sampling, roots) through the proxy: the same answers as
    direct, a SERVER span per request (the agent's span its parent) and a CLIENT span per
    request of the server's (the person's declined elicitation a cancel), each ok otherwise."""
    from tests.third_party.test_everything_server import _exchange

    with everything_sse(tmp_path) as setup:
        direct = await _exchange(url=setup.upstream)
        exporter.clear()
        instrument()
        assert await _exchange(url=setup.url) == direct
        spans = setup.stop()
    assert_everything_exchanged(spans, exporter)


# --- the endpoint event -------------------------------------------------------------------------


async def test_the_first_event_is_read_across_chunks() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for chunk in (
            b"event: endp",
            b"oint\r\ndata: /messages?sessionId=a",
            b"b\r\n\r\nevent: message\r\n",
            b"data: {}",
        ):
            yield chunk

    head = await _first_event(chunks())
    assert head == b"event: endpoint\r\ndata: /messages?sessionId=ab\r\n\r\nevent: message\r\n"
    assert _endpoint_event(head) == (b"data: /messages?sessionId=ab", "/messages?sessionId=ab")


@pytest.mark.parametrize(
    "head",
    [
        b"event: message\ndata: /messages\n\n",  # another event first
        b"data: /messages\n\n",  # no event name: a message
        b"event: endpoint\ndata: /a\ndata: /b\n\n",  # two data lines: not a URL
    ],
)
def test_what_is_not_an_endpoint_event(head: bytes) -> None:
    assert _endpoint_event(head) is None
