"""The test tool set on mcp 1.x's lowlevel ``Server``.

The tools/call handler is installed in ``request_handlers`` directly (not through the
``@server.call_tool()`` decorator, which turns every exception into an isError result) so that a
tool can answer with a real JSON-RPC error.
"""

from __future__ import annotations

import json
import os
import sys

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import McpError

from tests.servers.span_file import install_span_file
from tests.servers.tools import (
    OUTPUT_SCHEMA,
    RPC_ERROR_CODE,
    RPC_ERROR_MESSAGE,
    SERVER_ERROR_CODE,
    SERVER_ERROR_MESSAGE,
    SERVER_NAME,
    SERVER_VERSION,
    TOOL_ERROR_TEXT,
    TOOL_NAMES,
)


def build_server(*, stdio: bool = False) -> Server:
    server: Server = Server(SERVER_NAME, version=SERVER_VERSION)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return [
            types.Tool(
                name=name,
                inputSchema={"type": "object"},
                outputSchema=OUTPUT_SCHEMA if name == "bad_output" else None,
            )
            for name in TOOL_NAMES
        ]

    async def call_tool(request: types.CallToolRequest) -> types.ServerResult:
        name = request.params.name
        arguments = request.params.arguments or {}
        if name == "tool_error":
            return _result(TOOL_ERROR_TEXT, is_error=True)
        if name == "rpc_error":
            raise McpError(types.ErrorData(code=RPC_ERROR_CODE, message=RPC_ERROR_MESSAGE))
        if name == "server_error":
            raise McpError(types.ErrorData(code=SERVER_ERROR_CODE, message=SERVER_ERROR_MESSAGE))
        if name == "stubborn":
            with anyio.CancelScope(shield=True):
                await anyio.sleep(float(arguments.get("seconds", 1)))
            return _result("finished anyway")
        if name == "crash":
            raise ValueError("boom")
        if name == "slow":
            await anyio.sleep(float(arguments.get("seconds", 5)))
            return _result("slept")
        if name == "bad_output":
            return types.ServerResult(types.CallToolResult(content=[], structuredContent={"n": "not a number"}))
        if name == "die":
            if stdio:
                os._exit(3)
            await server.request_context.session._write_stream.aclose()
            await anyio.sleep(5)
        if name == "whoami":
            meta = request.params.meta
            return _result(json.dumps(meta.model_dump() if meta else {}))
        return _result("ok")

    server.request_handlers[types.CallToolRequest] = call_tool
    return server


def _result(text: str, is_error: bool = False) -> types.ServerResult:
    return types.ServerResult(
        types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=is_error)
    )


async def serve_stdio() -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(stdio=True)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    install_span_file()
    sys.exit(anyio.run(serve_stdio))
