"""A fastmcp server (3.x on mcp 1.x, 4.x on mcp 2.x): ok, a ToolError, a slow tool, and one
echoing _meta."""

import json

import anyio
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError

SERVER_NAME = "fast-server"


def build_server() -> FastMCP:
    server = FastMCP(SERVER_NAME)

    @server.tool
    def ok() -> str:
        return "ok"

    @server.tool
    def fails() -> str:
        raise ToolError("fails on purpose")

    @server.tool
    async def slow() -> str:
        await anyio.sleep(5)
        return "slept"

    @server.tool
    def whoami(ctx: Context) -> str:
        return json.dumps(dict(ctx.request_context.meta or {}))

    return server


if __name__ == "__main__":
    from tests.servers.span_file import install_span_file

    install_span_file()
    build_server().run("stdio", show_banner=False)
