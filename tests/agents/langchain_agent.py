"""An agent's tool calls through langchain-mcp-adapters (mcp 1.x) to the stdio test server: one
ok, one tool error, one the agent stops waiting for. Knows nothing about OpenTelemetry; the tests
run it under ``mcp-otel run``. Prints what each call gave."""

import asyncio
import sys

from langchain_mcp_adapters.client import MultiServerMCPClient

from tests.harness import REPO_ROOT, env_without_otel

SERVER = {
    "transport": "stdio",
    "command": sys.executable,
    "args": ["-m", "tests.servers.v1_server"],
    "env": env_without_otel(PYTHONPATH=str(REPO_ROOT)),
    "cwd": str(REPO_ROOT),
}


async def main() -> None:
    client = MultiServerMCPClient({"test": SERVER})
    tools = {tool.name: tool for tool in await client.get_tools()}
    print("ok:", await tools["ok"].ainvoke({}), flush=True)
    try:
        await tools["tool_error"].ainvoke({})
    except Exception as exc:  # the adapter turns an isError result into a ToolException
        print("tool_error:", type(exc).__name__, flush=True)
    try:
        await asyncio.wait_for(tools["slow"].ainvoke({"seconds": 5}), 1.0)
    except asyncio.TimeoutError:
        print("slow: gave up", flush=True)


asyncio.run(main())
