"""The demo agent: a scripted agent (no LLM, no network) using three MCP servers over stdio.

It knows nothing about OpenTelemetry: run it under ``mcp-otel run`` to get the per-server table.
It reports progress on stderr.

healthy  20 lookups.
flaky    20 fetches; the server fails a seeded share of them.
slow     10 crunches: 6 finish, 2 the agent cancels (it stops waiting after 0.2 s), 2 hit the
         SDK's read timeout (0.2 s). Cancels are not failures; timeouts are.
"""

from __future__ import annotations

import os
import sys
from contextlib import AsyncExitStack, suppress
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SERVERS = Path(__file__).with_name("servers.py")
LOOKUPS, FETCHES, CRUNCHES = 20, 20, 10
SLOW_CALL, PATIENCE = 2.0, 0.2


SERVER_LOG = open(os.devnull, "w")  # noqa: SIM115 (the servers log tool errors' tracebacks)


async def connect(stack: AsyncExitStack, role: str) -> ClientSession:
    # Servers inherit this environment; they need no telemetry of their own here.
    env = {key: value for key, value in os.environ.items() if not key.startswith(("OTEL_", "MCP_OTEL_"))}
    parameters = StdioServerParameters(command=sys.executable, args=[str(SERVERS), role], env=env)
    read, write = await stack.enter_async_context(stdio_client(parameters, errlog=SERVER_LOG))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    await session.list_tools()
    return session


async def main() -> None:
    async with AsyncExitStack() as stack:
        print("demo: starting the healthy, flaky and slow servers ...", file=sys.stderr, flush=True)
        healthy, flaky, slow = [await connect(stack, role) for role in ("healthy", "flaky", "slow")]

        print(f"demo: {LOOKUPS} lookups on healthy ...", file=sys.stderr, flush=True)
        for key in range(LOOKUPS):
            await healthy.call_tool("lookup", {"key": f"k{key}"})

        print(f"demo: {FETCHES} fetches on flaky ...", file=sys.stderr, flush=True)
        for item in range(FETCHES):
            with suppress(Exception):  # a JSON-RPC error: the agent carries on
                await flaky.call_tool("fetch", {"item": item})

        print(f"demo: {CRUNCHES} crunches on slow (some cancelled, some timing out) ...", file=sys.stderr, flush=True)
        for index in range(CRUNCHES):
            if index in (2, 5):  # the agent gives up waiting: a cancel
                with anyio.move_on_after(PATIENCE):
                    await slow.call_tool("crunch", {"seconds": SLOW_CALL})
            elif index in (3, 7):  # the SDK's read timeout expires: a failure
                with suppress(Exception):
                    await slow.call_tool("crunch", {"seconds": SLOW_CALL}, read_timeout_seconds=PATIENCE)
            else:
                await slow.call_tool("crunch", {"seconds": 0.05})
        print("demo: done", file=sys.stderr, flush=True)


if __name__ == "__main__":
    anyio.run(main)
