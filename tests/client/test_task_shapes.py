"""A request's CLIENT span follows the await: the task shapes agent frameworks use, both majors.

Frameworks do not always await ``call_tool`` where they create it: autogen's ``McpWorkbench``
creates the coroutine in its own background task and the caller awaits it later; others own the
session in a background task or thread, or run each call in a fresh ``asyncio.run``. In every
shape the span must start when the awaited call first runs, with the awaiting side's context as
its parent; a call that never runs leaves no span and no point.

Each shape here is driven without a framework, in-memory, with the server in this process
instrumented too: exactly one CLIENT and one SERVER span per call, in the caller's trace.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from mcp_otel.semconv import MCP_CLIENT_OPERATION_DURATION, MCP_SERVER_OPERATION_DURATION
from tests.client.scenarios import CANCEL_AFTER, TIMEOUT_MESSAGE, Observed
from tests.conftest import PROVIDER, tool_call_spans
from tests.harness import MCP_MAJOR, build_server, is_error, open_session, read_timeout, stdio_parameters
from tests.metrics.test_metrics import tool_call_points

pytestmark = pytest.mark.anyio

APP = trace.get_tracer("agent-framework")


class OpenSpans(SpanProcessor):
    """The spans started and not yet ended, by name (every tracer of the global provider)."""

    def __init__(self) -> None:
        self.open: dict[int, str] = {}

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        self.open[span.context.span_id] = span.name

    def on_end(self, span: ReadableSpan) -> None:
        self.open.pop(span.context.span_id, None)


OPEN_SPANS = OpenSpans()
PROVIDER.add_span_processor(OPEN_SPANS)


@pytest.fixture
def open_spans() -> OpenSpans:
    OPEN_SPANS.open.clear()
    return OPEN_SPANS


@pytest.fixture
def points(instrument: Callable[..., Any]) -> InMemoryMetricReader:
    """Instrumented, with an in-memory metric reader."""
    reader = InMemoryMetricReader()
    instrument(meter_provider=MeterProvider(metric_readers=[reader]))
    return reader


@dataclass(frozen=True)
class Outcome:
    tool: str
    arguments: dict[str, Any]
    outcome: str
    status: StatusCode
    error_type: str | None = None
    cancel_reason: str | None = None
    timeout: bool = False  # the SDK's own read timeout
    cancel: bool = False  # the caller stops waiting


OUTCOMES = {
    "ok": Outcome("ok", {}, "ok", StatusCode.UNSET),
    "is_error": Outcome("tool_error", {}, "failed", StatusCode.ERROR, "tool_error"),
    "cancel": Outcome("slow", {"seconds": 5}, "cancelled", StatusCode.UNSET, cancel_reason="caller", cancel=True),
    "timeout": Outcome("slow", {"seconds": 5}, "failed", StatusCode.ERROR, "timeout", timeout=True),
}

# A shape: given how to make the call's coroutine from a session, and how the caller waits for an
# awaitable, run one call the way a framework would, inside the app span ``agent step``.
Make = Callable[[Any], Coroutine[Any, Any, Any]]
Wait = Callable[[Awaitable[Any]], Awaitable[Observed]]


async def own_task(make: Make, wait: Wait) -> Observed:
    async with open_session("memory") as session:
        with APP.start_as_current_span("agent step"):
            return await wait(make(session))


async def child_task(make: Make, wait: Wait) -> Observed:
    async with open_session("memory") as session:
        with APP.start_as_current_span("agent step"):
            return await asyncio.create_task(wait(make(session)))


async def handed_over(make: Make, wait: Wait) -> Observed:
    """autogen's shape: a background task creates the coroutine, the caller awaits it."""
    async with open_session("memory") as session:
        orders: asyncio.Queue[asyncio.Future[Any]] = asyncio.Queue()

        async def factory() -> None:
            with APP.start_as_current_span("background"):  # the parent a creation-time span took
                while True:
                    reply = await orders.get()
                    reply.set_result(make(session))

        worker = asyncio.create_task(factory())
        try:
            with APP.start_as_current_span("agent step"):
                reply: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
                orders.put_nowait(reply)
                return await wait(await reply)
        finally:
            worker.cancel()


async def background_session(make: Make, wait: Wait) -> Observed:
    """The session lives in a background task on the same loop; the caller uses it from its own."""
    ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    async def owner() -> None:
        with APP.start_as_current_span("background"):
            async with open_session("memory") as session:
                ready.set_result(session)
                await stop.wait()

    task = asyncio.create_task(owner())
    try:
        session = await ready
        with APP.start_as_current_span("agent step"):
            return await wait(make(session))
    finally:
        stop.set()
        await task


async def thread_loop(make: Make, wait: Wait) -> Observed:
    """The session lives on a background thread's own loop; calls go there by
    ``run_coroutine_threadsafe``."""
    handoff: list[Any] = []
    ready = threading.Event()

    async def owner() -> None:
        stop = asyncio.Event()
        with APP.start_as_current_span("background"):
            async with open_session("memory") as session:
                handoff.extend([asyncio.get_running_loop(), session, stop])
                ready.set()
                await stop.wait()

    thread = threading.Thread(target=asyncio.run, args=(owner(),))
    thread.start()
    try:
        assert await asyncio.to_thread(ready.wait, 30)
        loop, session, _ = handoff
        with APP.start_as_current_span("agent step"):
            future = asyncio.run_coroutine_threadsafe(make(session), loop)
            return await wait(asyncio.wrap_future(future))
    finally:
        if handoff:
            handoff[0].call_soon_threadsafe(handoff[2].set)
        await asyncio.to_thread(thread.join, 30)


async def run_per_call(make: Make, wait: Wait) -> Observed:
    """A synchronous framework: each call in a worker thread, a fresh loop and session each time."""

    async def one_call() -> Observed:
        async with open_session("memory") as session:
            return await wait(make(session))

    def worker() -> Observed:
        with APP.start_as_current_span("agent step"):
            return asyncio.run(one_call())

    return await asyncio.to_thread(worker)


SHAPES = {
    shape.__name__: shape
    for shape in (own_task, child_task, handed_over, background_session, thread_loop, run_per_call)
}


def making(outcome: Outcome) -> Make:
    kwargs = {"read_timeout_seconds": read_timeout(CANCEL_AFTER)} if outcome.timeout else {}
    return lambda session: session.call_tool(outcome.tool, outcome.arguments, **kwargs)


def waiting(outcome: Outcome) -> Wait:
    """The caller awaits; for a cancel, it stops waiting after CANCEL_AFTER seconds."""

    async def wait(awaitable: Awaitable[Any]) -> Observed:
        if outcome.cancel:
            with anyio.move_on_after(CANCEL_AFTER) as scope:
                await awaitable
            assert scope.cancelled_caught
            return Observed(cancelled=True)
        try:
            return Observed(returned=await awaitable)
        except Exception as exc:
            return Observed(raised=exc)

    return wait


def only(spans: list[ReadableSpan], name: str) -> ReadableSpan:
    (span,) = [span for span in spans if span.name == name]
    return span


@pytest.mark.parametrize("outcome", OUTCOMES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
async def test_span_follows_the_await(
    shape: str, outcome: str, points: InMemoryMetricReader, exporter: InMemorySpanExporter, open_spans: OpenSpans
) -> None:
    expect = OUTCOMES[outcome]
    observed = await SHAPES[shape](making(expect), waiting(expect))

    if expect.cancel:
        assert observed.cancelled
    elif expect.timeout:
        assert observed.raised is not None
        assert str(observed.raised) == TIMEOUT_MESSAGE
    else:
        assert observed.returned is not None
        assert is_error(observed.returned) is (outcome == "is_error")

    spans = exporter.get_finished_spans()
    step = only(spans, "agent step")
    (client,) = tool_call_spans(spans)
    (server,) = tool_call_spans(spans, SpanKind.SERVER)
    # The awaiting side's span is the parent, and the server's span is the client span's child.
    assert client.parent is not None
    assert (client.context.trace_id, client.parent.span_id) == (step.context.trace_id, step.context.span_id)
    assert server.parent is not None
    assert (server.context.trace_id, server.parent.span_id) == (client.context.trace_id, client.context.span_id)

    attributes = dict(client.attributes or {})
    assert client.name == f"tools/call {expect.tool}"
    assert client.status.status_code is expect.status
    assert attributes["tool.outcome"] == attributes["mcp.request.outcome"] == expect.outcome
    assert attributes.get("error.type") == expect.error_type
    assert attributes.get("tool.cancel.reason") == expect.cancel_reason

    # One point per side for the call; the client's with the span's outcome.
    data = points.get_metrics_data()
    for name in (MCP_CLIENT_OPERATION_DURATION, MCP_SERVER_OPERATION_DURATION):
        assert [(p.attributes["gen_ai.tool.name"], p.count) for p in tool_call_points(data, name)] == [(expect.tool, 1)]
    (client_point,) = tool_call_points(data, MCP_CLIENT_OPERATION_DURATION)
    assert client_point.attributes["tool.outcome"] == attributes["tool.outcome"]

    # Nothing left open once the sessions are closed.
    assert open_spans.open == {}


def send_request(session: Any, method: str) -> Coroutine[Any, Any, Any]:
    """The session's own ``send_request`` for ``method``, called directly (as frameworks do)."""
    import mcp.types as types

    request, result = {
        "tools/list": (types.ListToolsRequest, types.ListToolsResult),
        "ping": (types.PingRequest, types.EmptyResult),
    }[method]
    typed = request(method=method) if MCP_MAJOR == 1 else request()
    return session.send_request(types.ClientRequest(typed) if MCP_MAJOR == 1 else typed, result)


@pytest.mark.parametrize("method", ["tools/list", "ping"])
async def test_every_request_follows_the_await(
    method: str, points: InMemoryMetricReader, exporter: InMemorySpanExporter, open_spans: OpenSpans
) -> None:
    """Requests other than tool calls (the sessions' ``send_request``): created by a background
    task, awaited by the caller, in the caller's trace; one closed unawaited leaves nothing."""

    def make(session: Any) -> Coroutine[Any, Any, Any]:
        return send_request(session, method)

    observed = await handed_over(make, waiting(OUTCOMES["ok"]))
    assert observed.returned is not None
    spans = exporter.get_finished_spans()
    step = only(spans, "agent step")
    (client,) = [s for s in spans if s.kind is SpanKind.CLIENT and s.attributes["mcp.method.name"] == method]
    assert client.parent is not None
    assert (client.context.trace_id, client.parent.span_id) == (step.context.trace_id, step.context.span_id)
    assert client.attributes["mcp.request.outcome"] == "ok"
    exporter.clear()
    async with open_session("memory") as session:
        make(session).close()
    assert [s.name for s in exporter.get_finished_spans() if s.attributes["mcp.method.name"] == method] == []
    assert open_spans.open == {}


# --- calls that never run --------------------------------------------------------------------


async def cancelled_before_first_step(make: Make) -> None:
    task = asyncio.ensure_future(make())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def task_group_cancelled_early(make: Make) -> None:
    """asyncio's task group (Python 3.11+) cancels the tasks it has not started yet."""

    class Stop(Exception):
        pass

    async def group() -> None:
        async with asyncio.TaskGroup() as group:  # type: ignore[attr-defined]
            group.create_task(make())
            raise Stop

    with pytest.raises(BaseExceptionGroup):  # noqa: F821 (a builtin from Python 3.11 on)
        await group()


async def closed_unawaited(make: Make) -> None:
    coroutine = make()
    coroutine.close()


NEVER_RUN = {
    never.__name__: never
    for never in (cancelled_before_first_step, closed_unawaited)
    + ((task_group_cancelled_early,) if sys.version_info >= (3, 11) else ())
}


@pytest.mark.parametrize("never", NEVER_RUN, ids=str)
async def test_a_call_that_never_runs_leaves_nothing(
    never: str, points: InMemoryMetricReader, exporter: InMemorySpanExporter, open_spans: OpenSpans
) -> None:
    """No request was sent: no span, no point, nothing left open, and the session still works."""
    async with open_session("memory") as session:
        await NEVER_RUN[never](lambda: session.call_tool("slow", {"seconds": 5}))
        assert open_spans.open == {}
        await session.call_tool("ok", {})
    assert [span.name for span in tool_call_spans(exporter.get_finished_spans())] == ["tools/call ok"]
    tool_points = tool_call_points(points, MCP_CLIENT_OPERATION_DURATION)
    assert [(p.attributes["gen_ai.tool.name"], p.count) for p in tool_points] == [("ok", 1)]
    assert open_spans.open == {}


@pytest.mark.mcp2
@pytest.mark.parametrize("never", NEVER_RUN, ids=str)
async def test_a_client_call_that_never_runs_leaves_nothing(
    never: str, points: InMemoryMetricReader, exporter: InMemorySpanExporter, open_spans: OpenSpans
) -> None:
    """mcp 2.x ``mcp.Client.call_tool`` and ``get_prompt``: the same."""
    from mcp import Client

    async with Client(build_server(), mode="legacy") as client:
        await NEVER_RUN[never](lambda: client.call_tool("slow", {"seconds": 5}))
        await NEVER_RUN[never](lambda: client.get_prompt("greeting", {}))
        assert open_spans.open == {}
        await client.call_tool("ok", {})
    assert [span.name for span in tool_call_spans(exporter.get_finished_spans())] == ["tools/call ok"]
    assert open_spans.open == {}


async def test_an_anyio_task_group_cancelled_early_runs_the_first_step(
    points: InMemoryMetricReader, exporter: InMemorySpanExporter, open_spans: OpenSpans
) -> None:
    """anyio starts a task in a cancelled scope and cancels it at its first checkpoint: the call
    has begun (its request id taken), so it is the caller's cancel, on the client side only."""
    async with open_session("memory") as session:
        async with anyio.create_task_group() as group:
            group.start_soon(session.call_tool, "slow", {"seconds": 5})
            group.cancel_scope.cancel()
        await session.call_tool("ok", {})
    summary = [
        (span.name, span.kind.name, span.attributes["tool.outcome"], span.attributes.get("tool.cancel.reason"))
        for span in exporter.get_finished_spans()
        if span.attributes and span.attributes.get("mcp.method.name") == "tools/call"
    ]
    assert summary == [
        ("tools/call slow", "CLIENT", "cancelled", "caller"),
        ("tools/call ok", "SERVER", "ok", None),
        ("tools/call ok", "CLIENT", "ok", None),
    ]
    tool_points = tool_call_points(points, MCP_CLIENT_OPERATION_DURATION)
    assert sorted((p.attributes["gen_ai.tool.name"], p.attributes["tool.outcome"], p.count) for p in tool_points) == [
        ("ok", "ok", 1),
        ("slow", "cancelled", 1),
    ]
    assert open_spans.open == {}


async def test_a_session_group_call_follows_the_await(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter, open_spans: OpenSpans
) -> None:
    """``ClientSessionGroup.call_tool``: created in one task, awaited in another (in the caller's
    span); one created and closed unawaited leaves nothing."""
    from mcp.client.session_group import ClientSessionGroup

    instrument()
    async with ClientSessionGroup() as group:
        await group.connect_to_server(stdio_parameters())
        group.call_tool("ok", {}).close()
        created: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        async def factory() -> None:
            with APP.start_as_current_span("background"):
                created.set_result(group.call_tool("ok", {}))

        await asyncio.create_task(factory())
        with APP.start_as_current_span("agent step"):
            result = await created.result()
    assert is_error(result) is False
    spans = exporter.get_finished_spans()
    step = only(spans, "agent step")
    (client,) = tool_call_spans(spans)
    assert client.parent is not None
    assert (client.context.trace_id, client.parent.span_id) == (step.context.trace_id, step.context.span_id)
    assert client.attributes["tool.outcome"] == "ok"
    assert open_spans.open == {}
