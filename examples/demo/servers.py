"""The demo's four MCP servers (mcp 2.x ``MCPServer``), each a stdio subprocess:

healthy  ``lookup`` always answers.
flaky    ``fetch`` fails a fixed, seeded share of calls: some with a tool error (an isError
         result), some with a JSON-RPC error -32603 "backend unavailable".
slow     ``crunch`` takes as long as it is asked to.
careful  ``remove`` asks the person to confirm first (an elicitation); a person who declines
         ends the call in a tool error, which mcp-otel records as a cancel (input_declined).

Usage: python servers.py healthy|flaky|slow|careful
"""

from __future__ import annotations

import random
import sys
from typing import Annotated

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

SEED = 2031
BACKEND_UNAVAILABLE = -32603


def flaky_verdict(item: int) -> str:
    """What the flaky server does with ``item``: "ok", "tool_error" or "rpc_error" (seeded)."""
    draw = random.Random(f"{SEED}:{item}").random()
    return "tool_error" if draw < 0.15 else "rpc_error" if draw < 0.3 else "ok"


class Confirm(BaseModel):
    sure: bool


def ask_to_remove(key: str) -> Elicit[Confirm]:
    """The question the person is asked before ``remove`` runs (it names the key)."""
    return Elicit(f"Remove {key}?", Confirm)


def build(role: str) -> MCPServer:
    server = MCPServer(role)
    if role == "healthy":

        @server.tool()
        def lookup(key: str) -> str:
            """Look a key up."""
            return f"value of {key}"

    elif role == "flaky":

        @server.tool()
        def fetch(item: int) -> str:
            """Fetch an item from an unreliable backend."""
            verdict = flaky_verdict(item)
            if verdict == "tool_error":
                raise ToolError(f"item {item} is corrupt")
            if verdict == "rpc_error":
                raise MCPError(BACKEND_UNAVAILABLE, "backend unavailable")
            return f"item {item}"

    elif role == "careful":

        @server.tool()
        def remove(key: str, confirm: Annotated[Confirm, Resolve(ask_to_remove)]) -> str:
            """Remove a key, once the person has confirmed it."""
            return f"removed {key}"

    else:

        @server.tool()
        async def crunch(seconds: float) -> str:
            """Work for a while."""
            await anyio.sleep(seconds)
            return f"crunched for {seconds}s"

    return server


if __name__ == "__main__":
    build(sys.argv[1]).run("stdio")
