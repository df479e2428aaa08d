"""A scripted agent (no LLM, no network) that calls tools on a stdio MCP server and prints the
spans mcp-otel made: one ok call, one tool error, one SDK timeout, one call the agent cancels.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

import anyio
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcp_otel import McpInstrumentor

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
McpInstrumentor().instrument(tracer_provider=provider)

from mcp import ClientSession, StdioServerParameters  # noqa: E402  (instrumented before import on purpose)
from mcp.client.stdio import stdio_client  # noqa: E402

SERVER = StdioServerParameters(command=sys.executable, args=[str(Path(__file__).with_name("demo_server.py"))])


async def agent(server_log: TextIO) -> None:
    print("starting the demo server (stdio subprocess) ...", flush=True)
    async with stdio_client(SERVER, errlog=server_log) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        print("calling tools ...", flush=True)
        await session.call_tool("add", {"a": 2, "b": 3})
        await session.call_tool("divide", {"a": 1, "b": 0})
        try:
            await session.call_tool("slow", {"seconds": 3}, read_timeout_seconds=0.5)
        except Exception as exc:
            print(f"  slow call timed out as asked: {type(exc).__name__}: {exc}", flush=True)
        with anyio.move_on_after(0.5):
            await session.call_tool("slow", {"seconds": 3})
        print("  the agent cancelled the second slow call", flush=True)


def show_spans() -> None:
    rows = [("span", "status", "tool.outcome", "error.type")]
    for span in exporter.get_finished_spans():
        if span.instrumentation_scope is None or span.instrumentation_scope.name != "mcp_otel":
            continue  # mcp 2.x's own spans for initialize and tools/list
        attributes = span.attributes or {}
        rows.append(
            (
                span.name,
                span.status.status_code.name,
                str(attributes.get("tool.outcome", "-")),
                str(attributes.get("error.type", "-")),
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(4)]
    print()
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


if __name__ == "__main__":
    with open(os.devnull, "w") as server_log:  # the server logs the tool error's traceback
        anyio.run(agent, server_log)
    show_spans()
