"""The benchmark's MCP server: one tool, ``ok``, and one resource, ``bench://ok``, on the installed
major's lowlevel server (no output schema, so neither side spends the call validating JSON schemas).

As a script (``python server.py VARIANT``) it serves over stdio, set up for VARIANT.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script, as the worker is

import anyio

from benchmarks.variants import SERVER_NAME as NAME
from benchmarks.variants import SERVER_VERSION as VERSION


class Hold:
    """Holds tool calls in the server's handler until ``release`` is set; ``all_held`` is set once
    ``count`` calls are held (``scale.py``: calls in flight)."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.held = 0
        self.all_held = anyio.Event()
        self.release = anyio.Event()

    async def __call__(self) -> None:
        self.held += 1
        if self.held == self.count:
            self.all_held.set()
        await self.release.wait()


def build(hold: Hold | None = None) -> Any:
    """The server; with ``hold``, each tool call waits in it."""
    logging.getLogger("mcp").setLevel(logging.WARNING)  # the SDK logs every request at INFO
    import mcp.types as types
    from mcp.server.lowlevel import Server

    tools = [{"name": name, "description": "answers ok", "inputSchema": {"type": "object"}} for name in tool_names()]
    content = [types.TextContent(type="text", text="ok")]

    def answer(name: str) -> list[Any]:
        """``ok``; ``big`` (not listed): the proxy benchmark's large answer, 10 MB of text."""
        return [types.TextContent(type="text", text="x" * BIG_RESULT)] if name == "big" else content

    async def held() -> None:
        if hold is not None:
            await hold()

    if version("mcp").startswith("1."):
        server = Server(NAME, version=VERSION)

        @server.list_tools()
        async def list_tools() -> list[types.Tool]:
            return [types.Tool(**tool) for tool in tools]

        @server.call_tool()
        async def call_tool(name: str, arguments: dict[str, Any]) -> list[types.TextContent]:
            await held()
            return answer(name)

        @server.read_resource()
        async def read_resource(uri: Any) -> str:
            return "ok"

        return server

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in tools])

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        await held()
        return types.CallToolResult(content=answer(params.name))

    async def on_read_resource(ctx: Any, params: Any) -> Any:
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=str(params.uri), text="ok")])

    return Server(
        NAME, version=VERSION, on_list_tools=on_list_tools, on_call_tool=on_call_tool, on_read_resource=on_read_resource
    )


BIG_RESULT = 10 * 1024 * 1024

# The number of distinct tool names the server lists and the worker calls in turn (``ok`` alone
# by default): the cost per call with many names (``scale.py``).
TOOLS_ENV = "MCP_OTEL_BENCH_TOOLS"
# Set by the instruction counts: the cyclic collector stays off while requests are counted (its
# runs fall where its thresholds do, not where the requests' work is; see instructions.py).
PAUSE_GC_ENV = "MCP_OTEL_BENCH_PAUSE_GC"


def pause_gc() -> None:
    """Take the start-up heap (imports, the SDKs: ~90k objects) out of the collector's view, and
    stop the collector if the counts asked: a full collection over that heap, or one at a
    threshold one run crosses and the other does not, would fall into the counted difference."""
    gc.collect()
    gc.freeze()
    if os.environ.get(PAUSE_GC_ENV):
        gc.disable()


def tool_names() -> list[str]:
    count = int(os.environ.get(TOOLS_ENV, "0"))
    return [f"tool_{index}" for index in range(count)] if count else ["ok"]


async def serve(variant: str) -> None:
    from mcp.server.stdio import stdio_server

    server = build()
    pause_gc()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    from benchmarks.variants import set_up

    set_up(sys.argv[1] if sys.argv[1] != "floor" else "baseline", "stdio")  # the floor's spans are on the client
    anyio.run(serve, sys.argv[1])
