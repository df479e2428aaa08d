"""A server whose SDK answers MCP's protocol error codes itself: the installed major's high-level
server (FastMCP on mcp 1.x, MCPServer on 2.x).

Usage: python -m tests.servers.protocol_codes_server stdio | http PORT

Tools:
ok            returns "ok"
link_account  raises the SDK's ``UrlElicitationRequiredError`` (both majors' high-level servers
              answer it as JSON-RPC error -32042, URL elicitation required)
mcp 2.x only:
regional      its argument ``region`` is routed by the ``Mcp-Param-Region`` header (``x-mcp-header``):
              on 2026-07-28 streamable HTTP a call carrying ``region`` without that header (a client
              that has not listed the tool sends none) is answered -32020, header mismatch
needs_roots   its ``roots`` come from a resolver that asks for the client's roots (``ListRoots``): a
              client that did not declare the roots capability is answered -32021, missing required
              client capability
"""

from __future__ import annotations

import sys
from importlib.metadata import version
from typing import Annotated, Any

import uvicorn
from pydantic import Field

from tests.servers.span_file import install_span_file
from tests.servers.tools import SERVER_NAME

MCP_MAJOR = int(version("mcp").split(".")[0])
if MCP_MAJOR == 2:  # module level: the tools' annotations are evaluated in this module's namespace
    from mcp.server.mcpserver import ListRoots, Resolve
    from mcp.types import ListRootsResult
LINK_URL = "https://example.com/link-account"
LINK_ELICITATION_ID = "link-1"
REGION_HEADER = "Region"  # the x-mcp-header token: the request header is Mcp-Param-Region


def url_required() -> Exception:
    """The SDK's error for "the person must open a URL first" (-32042)."""
    from mcp.shared.exceptions import UrlElicitationRequiredError
    from mcp.types import ElicitRequestURLParams

    if MCP_MAJOR == 1:
        params = ElicitRequestURLParams(message="Link your account", url=LINK_URL, elicitationId=LINK_ELICITATION_ID)
    else:
        params = ElicitRequestURLParams(message="Link your account", url=LINK_URL, elicitation_id=LINK_ELICITATION_ID)
    return UrlElicitationRequiredError([params])


def ask_roots() -> Any:
    """``needs_roots``'s resolver: the client's roots, asked of the client (``ListRoots``)."""
    return ListRoots()


def build_server() -> Any:
    if MCP_MAJOR == 1:
        from mcp.server.fastmcp import FastMCP

        server: Any = FastMCP(SERVER_NAME)
    else:
        from mcp.server.mcpserver import MCPServer

        server = MCPServer(SERVER_NAME)

    @server.tool()
    def ok() -> str:
        return "ok"

    @server.tool()
    def link_account() -> str:
        raise url_required()

    if MCP_MAJOR == 2:

        @server.tool()
        def regional(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": REGION_HEADER})]) -> str:
            return f"served in {region}"

        @server.tool()
        def needs_roots(roots: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
            return f"{len(roots.roots)} roots"

    return server


if __name__ == "__main__":
    install_span_file()
    if sys.argv[1] == "stdio":
        build_server().run("stdio")
    else:
        app = build_server().streamable_http_app()
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
