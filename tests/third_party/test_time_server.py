"""A real third-party server from PyPI, ``mcp-server-time`` (the MCP reference time server, on
mcp 2.x), over stdio: an instrumented client sees exactly what an uninstrumented one sees, and
each call's span states the outcome the server's answer implies."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import mcp.client.stdio
import pytest
from mcp import ClientSession, StdioServerParameters
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from mcp_otel import semconv
from tests.conftest import tool_call_spans
from tests.harness import MCP_MAJOR, env_without_otel

pytestmark = pytest.mark.anyio

# The server needs mcp 2.x: this environment's Python, or (mcp 1.x run) the peer's.
PYTHON = sys.executable if MCP_MAJOR == 2 else os.environ.get("MCP_OTEL_PEER_PYTHON", "")

CALLS: list[tuple[str, dict[str, Any], str, str | None]] = [
    # (tool, arguments, outcome, error.type)
    (
        "convert_time",
        {"source_timezone": "Europe/Berlin", "time": "12:00", "target_timezone": "Asia/Tokyo"},
        "ok",
        None,
    ),
    ("get_current_time", {"timezone": "Not/AZone"}, "failed", "tool_error"),
    ("get_current_time", {"timezone": ""}, "failed", "tool_error"),
    ("convert_time", {"source_timezone": "UTC", "time": "25:99", "target_timezone": "UTC"}, "failed", "tool_error"),
    ("no_such_tool", {}, "failed", "-32602"),
]


def _available() -> bool:
    if not PYTHON:
        return False
    return subprocess.run([PYTHON, "-c", "import mcp_server_time"], capture_output=True).returncode == 0


async def _observe() -> list[Any]:
    parameters = StdioServerParameters(
        command=PYTHON, args=["-m", "mcp_server_time", "--local-timezone", "UTC"], env=env_without_otel()
    )
    seen: list[Any] = []
    with open(os.devnull, "w") as errlog:  # noqa: ASYNC230 (the server's log, not read)
        # Looked up at call time: the instrumented stdio_client (see docs/instrument.md, "How it patches").
        async with (
            mcp.client.stdio.stdio_client(parameters, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for tool, arguments, _, _ in CALLS:
                try:
                    result = await session.call_tool(tool, arguments)
                except Exception as exc:
                    seen.append(("raised", type(exc).__name__, str(exc)))
                else:
                    seen.append(result.model_dump(mode="json", exclude_none=True))
    return seen


@pytest.mark.skipif(not _available(), reason="mcp-server-time is installed in the mcp 2.x environment")
async def test_the_time_server_answers_the_same_and_each_call_states_its_outcome(
    instrument: Callable[..., Any], exporter: InMemorySpanExporter
) -> None:
    uninstrumented = await _observe()
    exporter.clear()
    instrument()
    instrumented = await _observe()
    assert instrumented == uninstrumented
    spans = tool_call_spans(exporter.get_finished_spans(), SpanKind.CLIENT)
    assert [(span.attributes or {}).get(semconv.GEN_AI_TOOL_NAME) for span in spans] == [call[0] for call in CALLS]
    for span, (_, _, outcome, error_type) in zip(spans, CALLS, strict=True):
        attributes = span.attributes or {}
        assert attributes[semconv.TOOL_OUTCOME] == outcome
        assert attributes.get(semconv.ERROR_TYPE) == error_type
        assert attributes[semconv.MCP_SERVER_NAME] == "mcp-time"
        assert attributes[semconv.NETWORK_TRANSPORT] == "pipe"
