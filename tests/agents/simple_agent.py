"""An uninstrumented agent: ok call, tool error, cancelled call, over stdio to the test server.

Run under ``opentelemetry-instrument`` by the tests; it knows nothing about OpenTelemetry.
"""

import anyio

from tests.harness import open_session


async def main() -> None:
    async with open_session("stdio") as session:
        await session.call_tool("ok", {})
        await session.call_tool("tool_error", {})
        with anyio.move_on_after(0.3):
            await session.call_tool("slow", {"seconds": 5})


if __name__ == "__main__":
    anyio.run(main)
