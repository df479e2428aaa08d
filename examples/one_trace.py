"""A scripted agent (no LLM, no network) that calls tools on a stdio MCP server, both sides
instrumented, and prints each call as its CLIENT span and its SERVER span saw it: one ok call,
one tool error, one SDK timeout, one call the agent cancels.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

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

SERVER_SCRIPT = str(Path(__file__).with_name("one_trace_server.py"))


async def agent(server: StdioServerParameters, server_log: TextIO) -> None:
    print("starting the server (stdio subprocess, instrumented too) ...", flush=True)
    async with stdio_client(server, errlog=server_log) as (read, write), ClientSession(read, write) as session:
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


def outcome(attributes: Any) -> str:
    words = [attributes.get("mcp.request.outcome", "-")]
    words += [attributes[key] for key in ("error.type", "mcp.request.cancel.reason") if key in attributes]
    return " ".join(words)


def show(server_spans: list[dict[str, Any]]) -> None:
    by_parent = {span["parent_id"]: span for span in server_spans if span["kind"] == "SpanKind.SERVER"}
    rows = [("call", "CLIENT span (agent)", "SERVER span (server)", "same trace")]
    for span in exporter.get_finished_spans():
        if span.instrumentation_scope is None or span.instrumentation_scope.name != "mcp_otel":
            continue  # another instrumentation's
        if span.name.startswith("notifications/"):
            continue  # a notification: spans of its own, no outcome (docs/spans.md)
        context = span.get_span_context()
        server = by_parent.get(f"0x{context.span_id:016x}")
        joined = server is not None and server["context"]["trace_id"] == f"0x{context.trace_id:032x}"
        server_outcome = outcome(server["attributes"]) if server else "-"
        rows.append((span.name, outcome(span.attributes or {}), server_outcome, "yes" if joined else "no"))
    widths = [max(len(row[column]) for row in rows) for column in range(4)]
    print()
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, open(os.devnull, "w") as server_log:
        span_file = Path(folder) / "server-spans.jsonl"
        env = {**os.environ, "ONE_TRACE_SPAN_FILE": str(span_file)}
        server = StdioServerParameters(command=sys.executable, args=[SERVER_SCRIPT], env=env)
        anyio.run(agent, server, server_log)  # the server logs the tool error's traceback
        lines = span_file.read_text().splitlines() if span_file.exists() else []
        show([json.loads(line) for line in lines])


if __name__ == "__main__":
    main()
