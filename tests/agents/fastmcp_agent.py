"""A fastmcp client calling a fastmcp server in the same process (3.x on mcp 1.x, 4.x on 2.x):
ok, a tool error, and a call the agent stops waiting for. Knows nothing about OpenTelemetry; the
tests run it under ``mcp-otel run`` (both sides are traced)."""

import anyio
from fastmcp import Client

from tests.servers.fastmcp_server import build_server


async def main() -> None:
    async with Client(build_server()) as client:
        print("ok:", (await client.call_tool("ok", {})).data, flush=True)
        result = await client.call_tool("fails", {}, raise_on_error=False)
        print("fails: isError", result.is_error, flush=True)
        with anyio.move_on_after(0.5):
            await client.call_tool("slow", {})
        print("slow: gave up", flush=True)


anyio.run(main)
