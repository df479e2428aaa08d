"""Tool calls answered with a task (mcp 1.x's experimental tasks, MCP 2025-11-25): one CLIENT
span per call, ended with the task's terminal outcome as this client followed it; a task never
followed leaves no span open after the session, and ends with no outcome."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from mcp_otel import semconv
from tests.harness import MCP_VERSION
from tests.metrics.test_metrics import histogram_points

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.mcp1,
    pytest.mark.skipif(MCP_VERSION < (1, 23), reason="mcp has experimental tasks from 1.23"),
]

TOOLS = ("done", "tool_error", "boom", "slow")


def task_server() -> Any:
    """A lowlevel server whose every tool runs as a task: ``done`` completes, ``tool_error``
    completes with ``isError``, ``boom`` raises (the task fails), ``slow`` runs until cancelled."""
    from mcp import types
    from mcp.server.lowlevel import Server

    server: Any = Server("task-server")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        server.experimental.enable_tasks()

    @server.list_tools()  # type: ignore[misc]
    async def list_tools() -> list[Any]:
        execution = types.ToolExecution(taskSupport="optional")
        return [types.Tool(name=name, inputSchema={"type": "object"}, execution=execution) for name in TOOLS]

    @server.call_tool()  # type: ignore[misc]
    async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
        async def work(task: Any) -> Any:
            if name == "boom":
                raise RuntimeError("boom")
            if name == "slow":  # the SDK's task context offers a flag to poll, no event
                with anyio.move_on_after(10):
                    while not task.is_cancelled:  # noqa: ASYNC110
                        await anyio.sleep(0.01)
            text = types.TextContent(type="text", text=name)
            return types.CallToolResult(content=[text], isError=name == "tool_error")

        return await server.request_context.experimental.run_task(work)

    return server


async def follow(session: Any, name: str) -> None:
    """Call ``name`` as a task and follow it as mcp 1.x documents: poll, then read the result."""
    from mcp import types

    created = await session.experimental.call_tool_as_task(name, {})
    task_id = created.task.taskId
    last = None
    async for polled in session.experimental.poll_task(task_id):
        last = polled
    if last is not None and last.status == "completed":
        await session.experimental.get_task_result(task_id, types.CallToolResult)


async def cancel(session: Any, name: str) -> None:
    created = await session.experimental.call_tool_as_task(name, {})
    await session.experimental.cancel_task(created.task.taskId)


async def never_followed(session: Any, name: str) -> None:
    await session.experimental.call_tool_as_task(name, {})


# (tool, how the client follows it) -> (outcome, error.type, cancel reason, status)
CASES: list[tuple[str, Callable[[Any, str], Any], tuple[str | None, str | None, str | None, StatusCode]]] = [
    ("done", follow, ("ok", None, None, StatusCode.UNSET)),
    ("tool_error", follow, ("failed", "tool_error", None, StatusCode.ERROR)),
    ("boom", follow, ("failed", "task_failed", None, StatusCode.ERROR)),
    ("slow", cancel, ("cancelled", None, "caller", StatusCode.UNSET)),
    ("done", never_followed, (None, None, None, StatusCode.UNSET)),
]


@pytest.mark.parametrize(("tool", "drive", "expected"), CASES, ids=lambda value: getattr(value, "__name__", None))
async def test_a_task_call_ends_with_the_tasks_outcome(
    tool: str,
    drive: Callable[[Any, str], Any],
    expected: tuple[str | None, str | None, str | None, StatusCode],
    instrument: Callable[..., Any],
    exporter: InMemorySpanExporter,
) -> None:
    from mcp.shared.memory import create_connected_server_and_client_session

    reader = InMemoryMetricReader()
    instrument(meter_provider=MeterProvider(metric_readers=[reader]))
    outcome, error_type, reason, status = expected
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        async with create_connected_server_and_client_session(task_server()) as session:
            await drive(session, tool)
            if drive is cancel:
                await anyio.sleep(0.1)  # the work sees the cancel and ends before the session does

    calls = [
        span
        for span in exporter.get_finished_spans()
        if span.attributes.get(semconv.MCP_METHOD_NAME) == semconv.METHOD_TOOLS_CALL
    ]
    (client,) = [span for span in calls if span.kind is SpanKind.CLIENT]
    attributes = client.attributes
    assert attributes.get(semconv.TOOL_OUTCOME) == outcome
    assert attributes.get(semconv.MCP_REQUEST_OUTCOME) == outcome
    assert attributes.get(semconv.ERROR_TYPE) == error_type
    assert attributes.get(semconv.TOOL_CANCEL_REASON) == reason
    assert client.status.status_code is status
    assert attributes.get(semconv.MCP_REQUEST_RESULT_TYPE) == (None if outcome else "task")
    # The server answered with a task: not a finished call there.
    (server,) = [span for span in calls if span.kind is SpanKind.SERVER]
    assert server.attributes[semconv.MCP_REQUEST_RESULT_TYPE] == "task"
    assert semconv.MCP_REQUEST_OUTCOME not in server.attributes
    # One point for the call when it finished, with its outcome; none for a task not followed.
    points = [
        point
        for point in histogram_points(reader, semconv.MCP_CLIENT_OPERATION_DURATION)
        if point.attributes[semconv.MCP_METHOD_NAME] == semconv.METHOD_TOOLS_CALL
    ]
    assert [(point.attributes[semconv.TOOL_OUTCOME], point.count) for point in points] == (
        [(outcome, 1)] if outcome else []
    )
    assert not [
        point
        for point in histogram_points(reader, semconv.MCP_SERVER_OPERATION_DURATION)
        if point.attributes[semconv.MCP_METHOD_NAME] == semconv.METHOD_TOOLS_CALL
    ]
