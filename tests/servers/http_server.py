"""A streamable HTTP MCP server on 127.0.0.1 (FastMCP on mcp 1.x, MCPServer on 2.x).

Usage: python -m tests.servers.http_server PORT
Tools: ok; fails (raises, so the SDK answers with an isError result); session (the
Mcp-Session-Id header the server received, or "" when there is none).
"""

from __future__ import annotations

import sys
from importlib.metadata import version
from typing import Any

import uvicorn

from tests.servers.tools import SERVER_NAME

if version("mcp").startswith("1."):
    from mcp.server.fastmcp import Context
    from mcp.server.fastmcp import FastMCP as HighLevelServer
else:
    from mcp.server.mcpserver import Context  # type: ignore[no-redef]
    from mcp.server.mcpserver import MCPServer as HighLevelServer


def build_server() -> Any:
    server = HighLevelServer(SERVER_NAME)

    @server.tool()
    def ok() -> str:
        return "ok"

    @server.tool()
    def fails() -> str:
        raise ValueError("fails on purpose")

    @server.tool()
    def session(ctx: Context) -> str:  # type: ignore[type-arg]
        request = ctx.request_context.request
        return (request.headers.get("mcp-session-id") if request is not None else None) or ""

    return server


if __name__ == "__main__":
    app = build_server().streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
