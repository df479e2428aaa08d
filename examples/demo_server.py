"""A small MCP server for the demo (mcp 2.x ``MCPServer``), run as a stdio subprocess."""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import MCPServer

server = MCPServer("demo-server")


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


if __name__ == "__main__":
    server.run("stdio")
