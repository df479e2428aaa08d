"""Every MCP request, both directions: one CLIENT span (the sender's) and one SERVER span (the
receiver's) per request, in one trace, with exact status, ``error.type`` and
``mcp.request.outcome``, on the installed major: in memory (JSON-RPC), over stdio, over
streamable HTTP on 127.0.0.1, and on mcp 2.x also over the direct path (2026-07-28, where
``ping``, ``logging/setLevel`` and ``resources/subscribe`` are gone and the server cannot send
requests: a -32601 and no case).

Client to server: initialize, ping, the lists, resources/read (ok, the caller's fault, the
server's fault, a caller's cancel), prompts/get, completion/complete, logging/setLevel,
resources/subscribe|unsubscribe, and a tools/call sent with ``send_request``. Server to client
(sent by the ``ask`` tool while it handles a tools/call): elicitation/create,
sampling/createMessage, roots/list and ping, answered by the agent's callbacks, which also
raise.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp.client.session import ClientSession
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_otel import semconv
from tests.conftest import HttpServer, serving_http
from tests.harness import (
    HANDSHAKE_VERSION,
    MCP_MAJOR,
    SERVER_OUTLIVES_CLOSED_TRANSPORT,
    stdio_parameters,
    streamable_http_client,
)
from tests.servers import requests_server
from tests.servers.span_file import span_dict
from tests.servers.tools import SERVER_NAME

pytestmark = pytest.mark.anyio

MEMORY = "memory"
STDIO = "stdio"
HTTP = "http"
DIRECT = "direct"  # mcp 2.x: Client(server), the 2026-07-28 in-process path
TRANSPORTS = [MEMORY, STDIO, HTTP] + ([DIRECT] if MCP_MAJOR == 2 else [])


class Agent:
    """The agent's callbacks for the server's requests: answer, raise, or take their time (a
    person who has not answered yet)."""

    def __init__(self) -> None:
        self.fail = False
        self.slow = False

    async def _check(self) -> None:
        if self.fail:
            raise RuntimeError("the agent's callback failed")
        if self.slow:
            await anyio.sleep(5)

    async def sampling(self, ctx: Any, params: Any) -> Any:
        await self._check()
        text = types.TextContent(type="text", text="hello")
        return types.CreateMessageResult(role="assistant", content=text, model="scripted")

    async def elicitation(self, ctx: Any, params: Any) -> Any:
        await self._check()
        return types.ElicitResult(action="accept", content={"ok": True})

    async def roots(self, ctx: Any) -> Any:
        await self._check()
        return types.ListRootsResult(roots=[types.Root(uri="file:///tmp")])

    def callbacks(self) -> dict[str, Any]:
        return {
            "sampling_callback": self.sampling,
            "elicitation_callback": self.elicitation,
            "list_roots_callback": self.roots,
        }


@pytest.fixture(scope="module")
def requests_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """The requests server over streamable HTTP: one process for the module."""
    with serving_http("tests.servers.requests_server", tmp_path_factory.mktemp("requests-http")) as server:
        yield server


@asynccontextmanager
async def session_to(
    transport: str, agent: Agent, span_file: Path | None = None, http: HttpServer | None = None
) -> AsyncIterator[Any]:
    """An initialized session to the requests server, its requests answered by ``agent``."""
    if transport == HTTP:
        assert http is not None
        async with (
            streamable_http_client(http.url) as streams,
            ClientSession(streams[0], streams[1], **agent.callbacks()) as session,
        ):
            await session.initialize()
            yield session
        return
    if transport == STDIO:
        from mcp.client.stdio import stdio_client

        parameters = stdio_parameters("tests.servers.requests_server", span_file)
        async with (
            stdio_client(parameters, errlog=sys.stderr) as streams,
            ClientSession(streams[0], streams[1], **agent.callbacks()) as session,
        ):
            await session.initialize()
            yield session
        return
    server = requests_server.build_server()
    if MCP_MAJOR == 1:
        from mcp.shared.memory import create_connected_server_and_client_session

        async with create_connected_server_and_client_session(server, **agent.callbacks()) as session:
            yield session
        return
    from mcp import Client

    async with Client(server, mode="auto" if transport == DIRECT else "legacy", **agent.callbacks()) as client:
        yield client.session


@dataclass(frozen=True)
class Side:
    status: str  # UNSET | ERROR
    outcome: str
    error_type: str | None = None
    cancel_reason: str | None = None
    rpc_code: str | None = None  # rpc.response.status_code: a JSON-RPC code from the wire


OK = Side("UNSET", "ok")


def refused(code: str) -> tuple[Side, Side]:
    """A request the receiver refused as the caller's fault (semconv): the sender's failure
    (every code an error there); on the receiver no error.type, status UNSET, the code kept."""
    return Side("ERROR", "failed", code, rpc_code=code), Side("UNSET", "failed", rpc_code=code)


def server_fault(code: str) -> tuple[Side, Side]:
    return Side("ERROR", "failed", code, rpc_code=code), Side("ERROR", "failed", code, rpc_code=code)


# A method the peer does not serve: the sender's failure, the receiver's caller's fault.
METHOD_NOT_FOUND = refused("-32601")


@dataclass(frozen=True)
class Case:
    id: str
    method: str
    drive: Callable[[Any, Agent], Awaitable[None]]
    sender: Side
    receiver: Side
    target: str | None = None  # the span name's target, or the resource URI
    from_server: bool = False  # the server sends it (while handling tools/call ask)
    # 2026-07-28 (direct): removed methods answer -32601, the caller's fault.
    removed_in_2026: bool = False

    def applies(self, transport: str) -> str | None:
        """Why the case does not apply over ``transport`` (``None``: it does)."""
        if transport == DIRECT and self.from_server:
            return "2026-07-28 connections have no server-to-client requests"
        if transport == HTTP and self.id == "read_cancelled" and MCP_MAJOR == 1:
            return "mcp 1.x clients tell the server nothing; its handler runs on (stdio and memory cover it)"
        if self.id == "elicit_agent_cancels" and MCP_MAJOR == 1:
            return "mcp 1.x clients tell the server nothing of a cancelled call, and its servers never cancel"
        return None

    def expected(self, transport: str) -> tuple[Side, Side | None]:
        """The sender's and the receiver's span (``None``: the receiver has none)."""
        if transport == STDIO and self.id == "read_cancelled" and SERVER_OUTLIVES_CLOSED_TRANSPORT:
            return self.sender, None
        if transport == DIRECT and self.removed_in_2026:
            return METHOD_NOT_FOUND
        if transport == DIRECT and self.id == "read_cancelled":  # the handler runs in the caller's task
            return self.sender, Side("UNSET", "cancelled", cancel_reason="client")
        if transport == HTTP and self.id == "read_cancelled":  # mcp 2.x POSTs notifications/cancelled
            return self.sender, Side("UNSET", "cancelled", cancel_reason="client")
        return self.sender, self.receiver


def _quietly(call: Callable[[Any], Awaitable[Any]]) -> Callable[[Any, Agent], Awaitable[None]]:
    async def drive(session: Any, agent: Agent) -> None:
        try:
            await call(session)
        except Exception as exc:
            if getattr(exc, "error", exc).__class__.__name__ not in ("ErrorData",) and not hasattr(exc, "code"):
                raise

    return drive


def _read(uri: str) -> Callable[[Any, Agent], Awaitable[None]]:
    return _quietly(lambda session: session.read_resource(uri))


async def _cancelled_read(session: Any, agent: Agent) -> None:
    with anyio.move_on_after(0.3):
        await session.read_resource("test://slow")


def _ask(kind: str, fail: bool = False) -> Callable[[Any, Agent], Awaitable[None]]:
    async def drive(session: Any, agent: Agent) -> None:
        agent.fail = fail
        result = await session.call_tool("ask", {"kind": kind})
        assert result.content[0].text.startswith("error" if fail else "ok"), result

    return drive


async def _cancelled_while_asked(session: Any, agent: Agent) -> None:
    """The agent gives up on its tool call while the server waits for its answer to an
    elicitation: mcp 2.x tells the server, whose handler (and so its elicitation request) is
    cancelled, and the server's SDK tells the agent to stop answering."""
    agent.slow = True
    with anyio.move_on_after(0.5):
        await session.call_tool("ask", {"kind": "elicitation/create"})
    await anyio.sleep(0.5)  # the cancels cross the wire before the session closes


async def _send_request_tool_call(session: Any, agent: Agent) -> None:
    params = types.CallToolRequestParams(name="ask", arguments={"kind": "nothing"})
    request: Any = types.CallToolRequest(params=params)
    if MCP_MAJOR == 1:
        request = types.ClientRequest(request)
    await session.send_request(request, types.CallToolResult)


def _complete(session: Any) -> Awaitable[Any]:
    return session.complete(types.PromptReference(type="ref/prompt", name="greet"), {"name": "x", "value": "y"})


# The agent's raising callback: mcp 2.x's dispatcher answers the server code 0 (the generic
# handler error, SDK-local); mcp 1.x's receive loop answers -32602. Either way the agent's span
# is the agent's failure (ERROR); the server's span fails with the code it received.
# mcp 2.x answers code 0 (the SDK's own: not a status code); mcp 1.x answers -32602.
CALLBACK_FAILED_SENDER = (
    Side("ERROR", "failed", "0") if MCP_MAJOR == 2 else Side("ERROR", "failed", "-32602", rpc_code="-32602")
)
CALLBACK_FAILED_RECEIVER = (
    Side("ERROR", "failed", "0") if MCP_MAJOR == 2 else Side("ERROR", "failed", "RuntimeError", rpc_code="-32602")
)
# A caller's cancel: mcp 2.x tells the server; mcp 1.x does not, and its server's handler is
# cancelled only when the session closes.
CANCELLED_READ_RECEIVER = Side("UNSET", "cancelled", cancel_reason="client" if MCP_MAJOR == 2 else "disconnect")

CASES = [
    Case("ping", "ping", _quietly(lambda s: s.send_ping()), OK, OK, removed_in_2026=True),
    Case("tools_list", "tools/list", _quietly(lambda s: s.list_tools()), OK, OK),
    Case("resources_list", "resources/list", _quietly(lambda s: s.list_resources()), OK, OK),
    Case("prompts_list", "prompts/list", _quietly(lambda s: s.list_prompts()), OK, OK),
    Case("read_ok", "resources/read", _read("test://ok"), OK, OK, "test://ok"),
    Case(
        "read_caller_fault",
        "resources/read",
        _read("test://missing"),
        *refused("-32602"),
        "test://missing",
    ),
    Case(
        "read_server_fault",
        "resources/read",
        _read("test://broken"),
        *server_fault("-32603"),
        "test://broken",
    ),
    Case(
        "read_cancelled",
        "resources/read",
        _cancelled_read,
        Side("UNSET", "cancelled", cancel_reason="caller"),
        CANCELLED_READ_RECEIVER,
        "test://slow",
    ),
    Case("prompt_ok", "prompts/get", _quietly(lambda s: s.get_prompt("greet")), OK, OK, "greet"),
    Case(
        "prompt_caller_fault",
        "prompts/get",
        _quietly(lambda s: s.get_prompt("bad")),
        *refused("-32602"),
        "bad",
    ),
    Case("completion", "completion/complete", _quietly(_complete), OK, OK),
    Case(
        "set_level",
        "logging/setLevel",
        _quietly(lambda s: s.set_logging_level("info")),
        OK,
        OK,
        removed_in_2026=True,
    ),
    Case(
        "subscribe",
        "resources/subscribe",
        _quietly(lambda s: s.subscribe_resource("test://ok")),
        OK,
        OK,
        removed_in_2026=True,
    ),
    Case(
        "unsubscribe",
        "resources/unsubscribe",
        _quietly(lambda s: s.unsubscribe_resource("test://ok")),
        OK,
        OK,
        removed_in_2026=True,
    ),
    Case("send_request_tool_call", "tools/call", _send_request_tool_call, OK, OK, "ask"),
    Case("elicit", "elicitation/create", _ask("elicitation/create"), OK, OK, from_server=True),
    Case(
        "elicit_callback_raises",
        "elicitation/create",
        _ask("elicitation/create", fail=True),
        CALLBACK_FAILED_SENDER,
        CALLBACK_FAILED_RECEIVER,
        from_server=True,
    ),
    Case(
        "elicit_agent_cancels",
        "elicitation/create",
        _cancelled_while_asked,
        Side("UNSET", "cancelled", cancel_reason="caller"),
        Side("UNSET", "cancelled", cancel_reason="client"),
        from_server=True,
    ),
    Case("sampling", "sampling/createMessage", _ask("sampling/createMessage"), OK, OK, from_server=True),
    Case(
        "sampling_callback_raises",
        "sampling/createMessage",
        _ask("sampling/createMessage", fail=True),
        CALLBACK_FAILED_SENDER,
        CALLBACK_FAILED_RECEIVER,
        from_server=True,
    ),
    Case("roots", "roots/list", _ask("roots/list"), OK, OK, from_server=True),
    Case("server_ping", "ping", _ask("ping"), OK, OK, from_server=True),
]


CASES_BY_ID = {case.id: case for case in CASES}


def _describe(span: Any) -> dict[str, Any]:
    """An exported span as a plain dict, whichever process wrote it (a span file holds the SDK's
    JSON form, without the instrumentation scope: there, ours are those with an outcome)."""
    ours = isinstance(span, dict) or span.instrumentation_scope.name == semconv.INSTRUMENTATION_SCOPE
    data = span if isinstance(span, dict) else span_dict(span)
    attributes = data["attributes"]
    return {
        "name": data["name"],
        "kind": data["kind"].removeprefix("SpanKind."),
        "trace_id": data["context"]["trace_id"],
        "span_id": data["context"]["span_id"],
        "parent": data["parent_id"],
        "status": data["status"]["status_code"],
        "attributes": attributes,
        "ours": ours and semconv.MCP_REQUEST_OUTCOME in attributes,
    }


def _matching(spans: list[dict[str, Any]], kind: str, case: Case) -> list[dict[str, Any]]:
    found = []
    for span in spans:
        attributes = span["attributes"]
        if span["kind"] != kind or attributes.get("mcp.method.name") != case.method:
            continue
        if not span["ours"]:
            continue
        if case.target and case.target not in (attributes.get("mcp.resource.uri"), *span["name"].split(" ")[1:]):
            continue
        found.append(span)
    return found


def _assert_side(span: dict[str, Any], expect: Side, case: Case) -> None:
    attributes = span["attributes"]
    assert span["status"] == expect.status, (case.id, span)
    assert attributes["mcp.request.outcome"] == expect.outcome, (case.id, span)
    assert attributes.get("error.type") == expect.error_type, (case.id, span)
    assert attributes.get("rpc.response.status_code") == expect.rpc_code, (case.id, span)
    assert attributes.get("mcp.request.cancel.reason") == expect.cancel_reason, (case.id, span)
    assert ("tool.outcome" in attributes) == (case.method == "tools/call")
    assert attributes["mcp.server.name"] == SERVER_NAME


def _trace_ids(spans: list[dict[str, Any]]) -> set[str]:
    return {span["trace_id"] for span in spans}


def _collected(exporter: InMemorySpanExporter, span_file: Path) -> list[dict[str, Any]]:
    """This process's spans, and the server process's spans of the same traces (from its span file)."""
    local = [_describe(span) for span in exporter.get_finished_spans()]
    traces = _trace_ids(local)
    remote = [_describe(line) for line in _read_span_file(span_file)]
    return local + [span for span in remote if span["trace_id"] in traces]


async def _await_server_spans(
    exporter: InMemorySpanExporter, span_file: Path, wanted: Callable[[list[dict[str, Any]]], bool]
) -> None:
    """Over HTTP the server writes its spans as they end: wait for them with the session still
    open (and its event loop running: the client's transport sends from it). Closing the session
    is a request of its own, which could overtake a cancel notification and make it a disconnect."""
    with anyio.fail_after(10):
        while not wanted(_collected(exporter, span_file)):  # noqa: ASYNC110 (another process's file)
            await anyio.sleep(0.05)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
async def test_one_span_per_side(
    case: Case,
    transport: str,
    instrument: Callable[..., Any],
    exporter: InMemorySpanExporter,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    if reason := case.applies(transport):
        pytest.skip(reason)
    http = request.getfixturevalue("requests_http") if transport == HTTP else None
    instrument()
    agent = Agent()
    span_file = http.span_file if http else tmp_path / "server-spans.jsonl"

    def senders_and_receivers(spans: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        senders = _matching(spans, "CLIENT", case)
        if case.from_server:  # the server's request inside the tools/call that asked for it
            senders = [span for span in senders if span["parent"] is not None]
        return senders, _matching(spans, "SERVER", case)

    def all_ended(spans: list[dict[str, Any]]) -> bool:
        return all(senders_and_receivers(spans))

    async with session_to(transport, agent, span_file, http) as session:
        exporter.clear()  # the session's initialize is its own case
        await case.drive(session, agent)
        if transport == HTTP:
            await _await_server_spans(exporter, span_file, all_ended)
    spans = _collected(exporter, span_file)
    senders, receivers = senders_and_receivers(spans)
    expect_sender, expect_receiver = case.expected(transport)
    assert len(senders) == 1, (case.id, senders)
    assert len(receivers) == (0 if expect_receiver is None else 1), (case.id, receivers)
    sender = senders[0]
    _assert_side(sender, expect_sender, case)
    if expect_receiver is None:
        return
    receiver = receivers[0]
    _assert_side(receiver, expect_receiver, case)
    # One trace across the wire: the receiver's span is the sender's child.
    assert receiver["trace_id"] == sender["trace_id"]
    assert receiver["parent"] == sender["span_id"]
    if case.from_server:
        (tool_call,) = [span for span in spans if span["span_id"] == sender["parent"]]
        assert tool_call["kind"] == "SERVER"
        assert tool_call["attributes"]["gen_ai.tool.name"] == "ask"
    if case.method == "resources/read":
        assert sender["attributes"]["mcp.resource.uri"] == receiver["attributes"]["mcp.resource.uri"] == case.target
        assert sender["name"] == receiver["name"] == "resources/read"  # no URI in the name


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_handshake_has_one_span_per_side(
    transport: str,
    instrument: Callable[..., Any],
    exporter: InMemorySpanExporter,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    """initialize, or on a 2026-07-28 connection server/discover."""
    http = request.getfixturevalue("requests_http") if transport == HTTP else None
    instrument()
    span_file = http.span_file if http else tmp_path / "server-spans.jsonl"
    method = "server/discover" if transport == DIRECT else "initialize"
    case = Case(method, method, _quietly(lambda s: s.send_ping()), OK, OK)
    async with session_to(transport, Agent(), span_file, http):
        if transport == HTTP:
            await _await_server_spans(exporter, span_file, lambda spans: bool(_matching(spans, "SERVER", case)))
    spans = _collected(exporter, span_file)
    (sender,) = _matching(spans, "CLIENT", case)
    (receiver,) = _matching(spans, "SERVER", case)
    _assert_side(sender, OK, case)
    _assert_side(receiver, OK, case)
    assert receiver["parent"] == sender["span_id"]
    assert sender["attributes"]["mcp.protocol.version"] == ("2026-07-28" if transport == DIRECT else HANDSHAKE_VERSION)


def _read_span_file(path: Path) -> list[dict[str, Any]]:
    import json

    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.mcp1
async def test_send_cancel_tells_an_mcp1_server_of_any_abandoned_request(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    """With ``send_cancel`` an mcp 1.x client tells the server of a read it gave up on, as mcp 2.x
    clients do: the server stops and records a cancel by the client, not a disconnect later."""
    instrument(send_cancel=True)
    case, no_file = CASES_BY_ID["read_cancelled"], tmp_path / "none"
    async with session_to(MEMORY, Agent()) as session:
        exporter.clear()
        await _cancelled_read(session, Agent())
        await _await_server_spans(exporter, no_file, lambda spans: bool(_matching(spans, "SERVER", case)))
    spans = _collected(exporter, no_file)
    (sender,) = _matching(spans, "CLIENT", case)
    (receiver,) = _matching(spans, "SERVER", case)
    _assert_side(sender, Side("UNSET", "cancelled", cancel_reason="caller"), case)
    _assert_side(receiver, Side("UNSET", "cancelled", cancel_reason="client"), case)
