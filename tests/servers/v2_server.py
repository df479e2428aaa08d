"""The test tool set on mcp 2.x's lowlevel ``Server`` (``on_call_tool``)."""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from tests.servers.span_file import install_span_file
from tests.servers.tools import OUTPUT_SCHEMA, SERVER_NAME, SERVER_VERSION, TOOL_NAMES, ToolKit, run_tool, serve_stdio


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
        async def hang_up() -> None:
            await ctx.session._connection.outbound._write_stream.aclose()

        kit = ToolKit(
            result=_result,
            structured=lambda content: types.CallToolResult(content=[], structured_content=content),
            error=MCPError,
            hang_up=hang_up,
        )
        return await run_tool(kit, params.name, params.arguments or {}, dict(ctx.meta or {}), stdio)

    return Server(SERVER_NAME, version=SERVER_VERSION, on_list_tools=list_tools, on_call_tool=call_tool)


def _result(text: str, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)


if __name__ == "__main__":
    install_span_file()
    anyio.run(serve_stdio, build_server(stdio=True))
