"""Tools that need a person, on the installed major: each asks for input mid-call.

* ``delete``: asks to confirm (elicitation); a decline or a dismissal ends it in a tool error.
* ``keep_on_decline``: asks the same, and handles a no by returning normally.
* ``delete_then_fail``: asks, and fails for another reason after an accepted answer.
* ``summarize``: asks the client's model (sampling); a refusal ends it in a tool error.

mcp 2.x: ``Resolve(...)`` parameters of an ``MCPServer`` (on 2026-07-28 connections the input
comes in rounds, ``InputRequiredResult``; on 2025-11-25 as requests mid-call). mcp 1.x:
``ctx.elicit`` and ``ctx.session.create_message`` in a ``FastMCP`` server.
"""

# No ``from __future__ import annotations``: the SDKs read the tools' annotations, which name
# classes imported inside the builders.
from typing import Any

from pydantic import BaseModel

from tests.harness import MCP_MAJOR

SERVER_NAME = "person-server"
TOOLS = ("delete", "keep_on_decline", "delete_then_fail", "summarize")


class Confirm(BaseModel):
    ok: bool


def build() -> Any:
    return _build_v2() if MCP_MAJOR == 2 else _build_v1()


def _build_v2() -> Any:
    from typing import Annotated

    from mcp.server.elicitation import ElicitationResult
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.resolve import Elicit, Resolve, Sample
    from mcp_types import CreateMessageResult, SamplingMessage, TextContent

    def ask() -> Elicit[Confirm]:
        return Elicit("Delete it?", Confirm)

    def sample() -> Sample:
        message = SamplingMessage(role="user", content=TextContent(type="text", text="Summarize"))
        return Sample([message], max_tokens=16)

    server = MCPServer(SERVER_NAME)

    @server.tool()
    def delete(path: str, confirm: Annotated[Confirm, Resolve(ask)]) -> str:
        return f"deleted {path}"

    @server.tool()
    def keep_on_decline(path: str, confirm: Annotated[ElicitationResult[Confirm], Resolve(ask)]) -> str:
        return "deleted" if confirm.action == "accept" else "kept"

    @server.tool()
    def delete_then_fail(path: str, confirm: Annotated[Confirm, Resolve(ask)]) -> str:
        raise ToolError("disk full")

    @server.tool()
    def summarize(text: str, summary: Annotated[CreateMessageResult, Resolve(sample)]) -> str:
        return "summarized"

    return server


def _build_v1() -> Any:
    from mcp.server.fastmcp import Context, FastMCP
    from mcp.server.fastmcp.exceptions import ToolError
    from mcp.types import SamplingMessage, TextContent

    server = FastMCP(SERVER_NAME)

    @server.tool()
    async def delete(path: str, ctx: Context) -> str:  # type: ignore[type-arg]
        answer = await ctx.elicit("Delete it?", Confirm)
        if answer.action != "accept":
            raise ToolError("not confirmed")
        return f"deleted {path}"

    @server.tool()
    async def keep_on_decline(path: str, ctx: Context) -> str:  # type: ignore[type-arg]
        answer = await ctx.elicit("Delete it?", Confirm)
        return "deleted" if answer.action == "accept" else "kept"

    @server.tool()
    async def delete_then_fail(path: str, ctx: Context) -> str:  # type: ignore[type-arg]
        await ctx.elicit("Delete it?", Confirm)
        raise ToolError("disk full")

    @server.tool()
    async def summarize(text: str, ctx: Context) -> str:  # type: ignore[type-arg]
        message = SamplingMessage(role="user", content=TextContent(type="text", text="Summarize"))
        await ctx.session.create_message([message], max_tokens=16)
        return "summarized"

    return server


if __name__ == "__main__":  # over stdio (the proxy's tests)
    build().run("stdio")
