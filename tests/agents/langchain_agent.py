"""An agent's tool calls through langchain-mcp-adapters (mcp 1.x) to the stdio test server: one
ok, one tool error, one the agent stops waiting for. Knows nothing about OpenTelemetry; the tests
run it under ``mcp-otel run``. Prints what each call gave."""

import asyncio
import sys
from typing import Any

import anyio
from langchain_mcp_adapters.client import MultiServerMCPClient

from tests.harness import REPO_ROOT, env_without_otel

SERVER = {
    "transport": "stdio",
    "command": sys.executable,
    "args": ["-m", "tests.servers.v1_server"],
    "env": env_without_otel(PYTHONPATH=str(REPO_ROOT)),
    "cwd": str(REPO_ROOT),
}


def teardown_race(exc: BaseException) -> bool:
    """mcp 1.x ``stdio_client``'s known teardown race (python-sdk issue #1960; its v1.x fix, PR
    #2449, is not released): the adapter closes a session per call, and a server still writing
    then breaks the reader's stream. The call itself had ended (and its span with it)."""
    errors = getattr(exc, "exceptions", None)
    return bool(errors) and all(isinstance(error, anyio.BrokenResourceError) for error in errors)


async def invoke(tool: Any, arguments: dict[str, Any]) -> Any:
    try:
        return await tool.ainvoke(arguments)
    except Exception as exc:
        if teardown_race(exc):
            return "(the SDK's stdio teardown race, after the call)"
        raise


async def main() -> None:
    client = MultiServerMCPClient({"test": SERVER})
    tools = {tool.name: tool for tool in await client.get_tools()}
    print("ok:", await invoke(tools["ok"], {}), flush=True)
    try:
        await invoke(tools["tool_error"], {})
    except Exception as exc:  # the adapter turns an isError result into a ToolException
        print("tool_error:", type(exc).__name__, flush=True)
    try:
        # The adapter starts a server process per call: the patience must cover that start on a
        # loaded machine, so the call is surely in flight when the agent gives up.
        await asyncio.wait_for(invoke(tools["slow"], {"seconds": 30}), 6.0)
    except asyncio.TimeoutError:
        print("slow: gave up", flush=True)


asyncio.run(main())
