"""The test tool set on mcp 1.x's lowlevel ``Server``.

The tools/call handler is installed in ``request_handlers`` directly (not through the
``@server.call_tool()`` decorator, which turns every exception into an isError result) so that a
tool can answer with a real JSON-RPC error.
"""

from __future__ import annotations

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import McpError

from tests.servers.span_file import install_span_file
from tests.servers.tools import OUTPUT_SCHEMA, SERVER_NAME, SERVER_VERSION, TOOL_NAMES, ToolKit, run_tool, serve_stdio


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

    async def hang_up() -> None:
        await server.request_context.session._write_stream.aclose()

    kit = ToolKit(
        result=_result,
        structured=lambda content: types.ServerResult(types.CallToolResult(content=[], structuredContent=content)),
        error=lambda code, message: McpError(types.ErrorData(code=code, message=message)),
        hang_up=hang_up,
    )

    async def call_tool(request: types.CallToolRequest) -> types.ServerResult:
        meta = request.params.meta
        return await run_tool(
            kit, request.params.name, request.params.arguments or {}, meta.model_dump() if meta else {}, stdio
        )

    server.request_handlers[types.CallToolRequest] = call_tool
    return server


def _result(text: str, is_error: bool = False) -> types.ServerResult:
    return types.ServerResult(
        types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=is_error)
    )


if __name__ == "__main__":
    install_span_file()
    anyio.run(serve_stdio, build_server(stdio=True))
