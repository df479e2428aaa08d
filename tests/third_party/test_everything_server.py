"""A real third-party server from npm, ``@modelcontextprotocol/server-everything`` (the MCP
reference server, TypeScript SDK), over stdio: an instrumented client (mcp 1.x or 2.x) sees exactly
what an uninstrumented one sees, including a long-running operation it cancels (after which the
session goes on), and each call's span states its outcome."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp.client.sse
import mcp.client.stdio
import mcp.types
import pytest
from mcp import ClientSession, StdioServerParameters
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from mcp_otel import semconv
from tests.conftest import tool_call_spans
from tests.harness import env_without_otel
from tests.processes import missing

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).with_name("node_modules") / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
LONG = "trigger-long-running-operation"
CALLS: list[tuple[str, dict[str, Any], str, str | None]] = [
    # (tool, arguments, outcome, error.type); the server answers bad input with isError results.
    ("echo", {"message": "hi"}, "ok", None),
    ("get-sum", {"a": 2, "b": 3}, "ok", None),
    ("get-structured-content", {"location": "New York"}, "ok", None),
    ("get-sum", {"a": "two"}, "failed", "tool_error"),
    ("no-such-tool", {}, "failed", "tool_error"),
    (LONG, {"duration": 0.4, "steps": 2}, "ok", None),
    (LONG, {"duration": 10, "steps": 10}, "cancelled", None),  # the agent stops waiting after 0.5 s
    ("echo", {"message": "after the cancel"}, "ok", None),
]


async def _observe() -> list[Any]:
    parameters = StdioServerParameters(command="node", args=[str(SERVER), "stdio"], env=env_without_otel())
    seen: list[Any] = []
    with open(os.devnull, "w") as errlog:  # noqa: ASYNC230 (the server's log, not read)
        # Looked up at call time: the instrumented stdio_client (see docs/instrument.md, "How it patches").
        async with (
            mcp.client.stdio.stdio_client(parameters, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for tool, arguments, outcome, _ in CALLS:
                if outcome == "cancelled":
                    with anyio.move_on_after(0.5):
                        await session.call_tool(tool, arguments)
                    seen.append("gave up")
                    continue
                seen.append((await session.call_tool(tool, arguments)).model_dump(mode="json", exclude_none=True))
    return seen


async def test_the_everything_server_answers_the_same_and_each_call_states_its_outcome(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    if not (SERVER.exists() and shutil.which("node")):
        missing("server-everything", "third-party")
    uninstrumented = await _observe()
    exporter.clear()
    instrument()
    instrumented = await _observe()
    assert instrumented == uninstrumented
    spans = tool_call_spans(exporter.get_finished_spans(), SpanKind.CLIENT)
    assert [(span.attributes or {}).get(semconv.GEN_AI_TOOL_NAME) for span in spans] == [call[0] for call in CALLS]
    for span, (_, _, outcome, error_type) in zip(spans, CALLS, strict=True):
        attributes = span.attributes or {}
        assert (attributes[semconv.TOOL_OUTCOME], attributes.get(semconv.ERROR_TYPE)) == (outcome, error_type)
        assert attributes[semconv.NETWORK_TRANSPORT] == "pipe"


# What server-everything logs once it holds the roots it asked for (server/roots.js, syncRoots).
ROOTS_UPDATED = "Roots updated: "


class _Agent:
    """Answers the server's own requests (sampling, elicitation, roots), as a person and a model
    would, and hears its log: ``roots_synced`` is set once the server holds the agent's roots."""

    def __init__(self) -> None:
        self.roots_synced = anyio.Event()

    async def logging(self, params: Any) -> None:
        if str(params.data).startswith(ROOTS_UPDATED):
            self.roots_synced.set()

    async def sampling(self, ctx: Any, params: Any) -> Any:
        text = mcp.types.TextContent(type="text", text="hello")
        return mcp.types.CreateMessageResult(role="assistant", content=text, model="scripted")

    async def elicitation(self, ctx: Any, params: Any) -> Any:
        return mcp.types.ElicitResult(action="decline")

    async def roots(self, ctx: Any) -> Any:
        return mcp.types.ListRootsResult(roots=[mcp.types.Root(uri="file:///tmp", name="tmp")])


DOCUMENT = "demo://resource/static/document/architecture.md"
COMPLETABLE = mcp.types.PromptReference(type="ref/prompt", name="completable-prompt")
# (method, how the agent makes it); tools/call requests that make the server ask the agent.
REQUESTS: list[tuple[str, Callable[[Any], Any]]] = [
    ("tools/list", lambda s: s.list_tools()),
    ("resources/list", lambda s: s.list_resources()),
    ("resources/templates/list", lambda s: s.list_resource_templates()),
    ("resources/read", lambda s: s.read_resource(DOCUMENT)),
    ("resources/subscribe", lambda s: s.subscribe_resource(DOCUMENT)),
    ("resources/unsubscribe", lambda s: s.unsubscribe_resource(DOCUMENT)),
    ("prompts/list", lambda s: s.list_prompts()),
    ("prompts/get", lambda s: s.get_prompt("simple-prompt")),
    (
        "completion/complete",
        lambda s: s.complete(
            mcp.types.PromptReference(type="ref/prompt", name="completable-prompt"),
            {"name": "department", "value": "E"},
        ),
    ),
    ("logging/setLevel", lambda s: s.set_logging_level("error")),
    ("ping", lambda s: s.send_ping()),
    ("tools/call", lambda s: s.call_tool("trigger-elicitation-request", {})),
    ("tools/call", lambda s: s.call_tool("trigger-sampling-request", {"prompt": "hi", "maxTokens": 5})),
    ("tools/call", lambda s: s.call_tool("get-roots-list", {})),
]
# What the server asks the agent: its roots on its own, 350 ms after the handshake (a timer of
# server/index.js; _exchange waits for it, so get-roots-list answers from what it learnt), then
# during two of those tool calls.
SERVER_REQUESTS = ["roots/list", "elicitation/create", "sampling/createMessage"]


async def _exchange(parameters: StdioServerParameters | None = None, *, url: str | None = None) -> list[Any]:
    """Every request of REQUESTS, answered by the server started by ``parameters`` (default:
    the server itself, over stdio), or by the HTTP+SSE server at ``url``."""
    parameters = parameters or StdioServerParameters(
        command="node", args=[str(SERVER), "stdio"], env=env_without_otel()
    )
    agent = _Agent()
    seen: list[Any] = []
    with open(os.devnull, "w") as errlog:  # noqa: ASYNC230 (the server's log, not read)
        # Looked up at call time: the instrumented transports (see docs/instrument.md, "How it patches").
        transport = mcp.client.sse.sse_client(url) if url else mcp.client.stdio.stdio_client(parameters, errlog=errlog)
        async with (
            transport as (read, write),
            ClientSession(
                read,
                write,
                sampling_callback=agent.sampling,
                elicitation_callback=agent.elicitation,
                list_roots_callback=agent.roots,
                logging_callback=agent.logging,
            ) as session,
        ):
            await session.initialize()
            # The server asks for the roots on a timer of its own, and get-roots-list asks again
            # while it holds none: the two can cross (two roots/list) or come in either order. Once
            # it says it holds them, it asks no more.
            with anyio.fail_after(10):
                await agent.roots_synced.wait()
            for _, request in REQUESTS:
                seen.append((await request(session)).model_dump(mode="json", exclude_none=True))
    return seen


async def test_every_request_it_exchanges_gets_its_span(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    """Both directions: the agent's requests (CLIENT spans) and the server's requests the agent
    answers (SERVER spans), each ok but the elicitation the person declines (a cancel, not a
    failure: the server's tool handles the no and answers normally), and the answers the same
    as without mcp-otel."""
    if not (SERVER.exists() and shutil.which("node")):
        missing("server-everything", "third-party")
    uninstrumented = await _exchange()
    exporter.clear()
    instrument()
    instrumented = await _exchange()
    assert instrumented == uninstrumented
    # The requests' spans (notifications have spans of their own: tests/test_notifications.py).
    ours = [
        span
        for span in exporter.get_finished_spans()
        if span.instrumentation_scope.name == "mcp_otel" and not span.name.startswith("notifications/")
    ]
    sent = [span.attributes["mcp.method.name"] for span in ours if span.kind == SpanKind.CLIENT]
    assert sent == ["initialize", *(method for method, _ in REQUESTS)]
    handled = [span.attributes["mcp.method.name"] for span in ours if span.kind == SpanKind.SERVER]
    assert handled == SERVER_REQUESTS
    for span in ours:
        attributes = span.attributes or {}
        declined = span.name == semconv.METHOD_ELICITATION_CREATE
        assert attributes[semconv.MCP_REQUEST_OUTCOME] == ("cancelled" if declined else "ok"), span.name
        if declined:
            assert attributes[semconv.MCP_REQUEST_CANCEL_REASON] == semconv.CancelReason.INPUT_DECLINED.value
            assert attributes[semconv.MCP_ELICITATION_ACTION] == "decline"
        assert span.status.status_code.name == "UNSET", span.name
        assert attributes[semconv.MCP_SERVER_NAME] == ours[0].attributes[semconv.MCP_SERVER_NAME]
    (read,) = [span for span in ours if span.name == "resources/read"]
    assert read.attributes[semconv.MCP_RESOURCE_URI] == DOCUMENT
    (prompt,) = [span for span in ours if span.name.startswith("prompts/get")]
    assert (prompt.name, prompt.attributes[semconv.GEN_AI_PROMPT_NAME]) == (
        "prompts/get simple-prompt",
        "simple-prompt",
    )
