"""A small MCP server for the one-trace example (mcp 2.x ``MCPServer``), run as a stdio subprocess.

When ONE_TRACE_SPAN_FILE names a file, the server instruments itself and writes its spans there as
JSON lines, so the example can show both sides of each call.
"""

from __future__ import annotations

import os

import anyio
from mcp.server.mcpserver import MCPServer

server = MCPServer("one-trace-server")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
def divide(a: float, b: float) -> float:
    """Divide a by b (fails for b = 0: the SDK returns a tool error)."""
    return a / b


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await anyio.sleep(seconds)
    return f"slept {seconds}s"


def instrument(span_file: str) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    from mcp_otel import McpInstrumentor

    out = open(span_file, "a", encoding="utf-8")  # noqa: SIM115 (open for the life of the process)
    provider = TracerProvider()
    exporter = ConsoleSpanExporter(out=out, formatter=lambda span: span.to_json(indent=None) + "\n")
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    McpInstrumentor().instrument(tracer_provider=provider)


if __name__ == "__main__":
    if os.environ.get("ONE_TRACE_SPAN_FILE"):
        instrument(os.environ["ONE_TRACE_SPAN_FILE"])
    server.run("stdio")
