"""The benchmark's MCP server: one tool, ``ok``, and one resource, ``bench://ok``, on the installed
major's lowlevel server (no output schema, so neither side spends the call validating JSON schemas).

As a script (``python server.py VARIANT``) it serves over stdio, set up for VARIANT.
"""

from __future__ import annotations

import logging
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio


def build() -> Any:
    logging.getLogger("mcp").setLevel(logging.WARNING)  # the SDK logs every request at INFO
    import mcp.types as types
    from mcp.server.lowlevel import Server

    tool = {"name": "ok", "description": "answers ok", "inputSchema": {"type": "object"}}
    content = [types.TextContent(type="text", text="ok")]
    if version("mcp").startswith("1."):
        server = Server("bench")

        @server.list_tools()
        async def list_tools() -> list[types.Tool]:
            return [types.Tool(**tool)]

        @server.call_tool()
        async def call_tool(name: str, arguments: dict[str, Any]) -> list[types.TextContent]:
            return content

        @server.read_resource()
        async def read_resource(uri: Any) -> str:
            return "ok"

        return server

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=[types.Tool.model_validate(tool)])

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        return types.CallToolResult(content=content)

    async def on_read_resource(ctx: Any, params: Any) -> Any:
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=str(params.uri), text="ok")])

    return Server("bench", on_list_tools=on_list_tools, on_call_tool=on_call_tool, on_read_resource=on_read_resource)


async def serve(variant: str) -> None:
    from mcp.server.stdio import stdio_server

    server = build()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks.variants import set_up

    set_up(sys.argv[1] if sys.argv[1] != "floor" else "baseline")  # the floor's spans are on the client
    anyio.run(serve, sys.argv[1])
