"""The test tool set on mcp 2.x's lowlevel ``Server`` (``on_call_tool``)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

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


def build_server(*, stdio: bool = False) -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=name,
                    input_schema={"type": "object"},
                    output_schema=OUTPUT_SCHEMA if name == "bad_output" else None,
                )
                for name in TOOL_NAMES
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name = params.name
        arguments = params.arguments or {}
        if name == "tool_error":
            return _result(TOOL_ERROR_TEXT, is_error=True)
        if name == "rpc_error":
            raise MCPError(RPC_ERROR_CODE, RPC_ERROR_MESSAGE)
        if name == "server_error":
            raise MCPError(SERVER_ERROR_CODE, SERVER_ERROR_MESSAGE)
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
            return types.CallToolResult(content=[], structured_content={"n": "not a number"})
        if name == "die":
            if stdio:
                os._exit(3)
            # In memory: close the server's side of the connection, as a dying process would.
            await ctx.session._connection.outbound._write_stream.aclose()
            await anyio.sleep(5)
        if name == "whoami":
            return _result(json.dumps(dict(ctx.meta or {})))
        return _result("ok")

    return Server(SERVER_NAME, version=SERVER_VERSION, on_list_tools=list_tools, on_call_tool=call_tool)


def _result(text: str, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)


async def serve_stdio() -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(stdio=True)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    install_span_file()
    sys.exit(anyio.run(serve_stdio))
