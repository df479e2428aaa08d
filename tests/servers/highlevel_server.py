"""The high-level server of the installed major (FastMCP on mcp 1.x, MCPServer on 2.x).

Usage: python -m tests.servers.highlevel_server stdio | http PORT [TOKEN]
(with TOKEN, HTTP requests without ``Authorization: Bearer TOKEN`` are refused with 401)
Tools: ok; fails (raises ValueError: the SDK answers an isError result); rejects (raises the
SDK's MCP error -32602: 1.x FastMCP still answers isError, 2.x MCPServer a JSON-RPC error);
faults (the same with -32603, a server fault);
slow (sleeps `seconds`, default 5); working (a progress notification, then 10 s of sleep); flood
(`count` progress notifications of `size` characters); chatty (a log message, then two progress
notifications);
session (the Mcp-Session-Id header the server received, or "" when there is none); whoami (the
request's _meta).
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from typing import Any

import anyio
import uvicorn

from tests.servers.span_file import install_span_file
from tests.servers.tools import RPC_ERROR_CODE, RPC_ERROR_MESSAGE, SERVER_NAME

SERVER_FAULT_CODE = -32603  # JSON-RPC internal error: the server's own fault

if version("mcp").startswith("1."):
    from mcp.server.fastmcp import Context
    from mcp.server.fastmcp import FastMCP as HighLevelServer
    from mcp.shared.exceptions import McpError
    from mcp.types import ErrorData

    def mcp_error(code: int, message: str) -> Exception:
        return McpError(ErrorData(code=code, message=message))
else:
    from mcp.server.mcpserver import Context  # type: ignore[no-redef]
    from mcp.server.mcpserver import MCPServer as HighLevelServer  # type: ignore[no-redef]
    from mcp.shared.exceptions import MCPError

    def mcp_error(code: int, message: str) -> Exception:
        return MCPError(code, message)


def build_server() -> Any:
    server = HighLevelServer(SERVER_NAME)

    @server.tool()
    def ok() -> str:
        return "ok"

    @server.tool()
    def fails() -> str:
        raise ValueError("fails on purpose")

    @server.tool()
    def rejects() -> str:
        raise mcp_error(RPC_ERROR_CODE, RPC_ERROR_MESSAGE)

    @server.tool()
    def faults() -> str:
        raise mcp_error(SERVER_FAULT_CODE, "internal error")

    @server.tool()
    async def slow(seconds: float = 5) -> str:
        await anyio.sleep(seconds)
        return "slept"

    @server.tool()
    async def working(ctx: Context) -> str:  # type: ignore[type-arg]
        """Says it started (a progress notification: the request arrived), then works 10 s."""
        await ctx.report_progress(0, 1)
        await anyio.sleep(10)
        return "done"

    @server.tool()
    async def flood(ctx: Context, count: int = 1000, size: int = 1000) -> str:  # type: ignore[type-arg]
        """``count`` progress notifications of ``size`` characters each (with a progress token)."""
        for done in range(count):
            await ctx.report_progress(done, count, "x" * size)
        return "flooded"

    @server.tool()
    async def chatty(ctx: Context) -> str:  # type: ignore[type-arg]
        await ctx.info("working on it")
        for done in (1, 2):
            await ctx.report_progress(done, 2)
        return "chatted"

    @server.tool()
    def session(ctx: Context) -> str:  # type: ignore[type-arg]
        request = ctx.request_context.request
        return (request.headers.get("mcp-session-id") if request is not None else None) or ""

    @server.tool()
    def whoami(ctx: Context) -> str:  # type: ignore[type-arg]
        meta = ctx.request_context.meta
        if meta is not None and not isinstance(meta, dict):
            meta = meta.model_dump()
        return json.dumps(meta or {})

    return server


def requiring_token(app: Any, token: str) -> Any:
    """``app`` behind a bearer token: a request without it is refused before JSON-RPC (401)."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
            body = b'{"error":"invalid_token"}'
            headers = [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, send)

    return guarded


if __name__ == "__main__":
    install_span_file()
    if sys.argv[1] == "stdio":
        build_server().run("stdio")
    else:
        app = build_server().streamable_http_app()
        if len(sys.argv) > 3:
            app = requiring_token(app, sys.argv[3])
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
