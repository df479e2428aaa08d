"""A Python MCP client (mcp 2.x, streamable HTTP) for the conformance suite's client scenarios:
``python conformance_client.py URL``, the scenario in MCP_CONFORMANCE_SCENARIO. It initializes,
lists the tools and calls the ones the scenarios expect; scenarios it does not play (auth,
elicitation, SSE retry) fail, the same way with or without mcp-otel."""

import os
import sys

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

ARGUMENTS = {"add_numbers": {"a": 2, "b": 3}}


async def main(url: str) -> None:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    async with streamable_http_client(url) as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        tools = await session.list_tools()
        if scenario != "initialize":
            for tool in tools.tools:
                await session.call_tool(tool.name, ARGUMENTS.get(tool.name, {}))


anyio.run(main, sys.argv[-1])
